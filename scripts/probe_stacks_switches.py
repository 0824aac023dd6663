"""Two PyTorch switches the records lean on, measured on one GPU (issue 48).

1. Inductor's deterministic setting per compiled frame. Dynamo restores
   torch.use_deterministic_algorithms(prior) after compiling each frame, and from 2.10 that call
   also sets torch._inductor.config.deterministic, so TORCHINDUCTOR_DETERMINISTIC=1 alone may hold
   for the first compiled frame only. Each mode (default, the variable alone, the PyTorch switch)
   runs in two fresh processes (own Inductor cache) that compile two frames under
   mode="max-autotune-no-cudagraphs" (reductions only, no GEMM templates, to keep it short). The
   child records the Inductor flag each frame's compilation saw, the flag after each frame, every
   generated Triton kernel's `deterministic` meta and config count, every autotuning benchmark
   (CachingAutotuner.benchmark_all_configs) per frame, and a hash of each frame's output.

2. cuBLAS split-K control (PyTorch 2.10+, PR 164766):
   torch.backends.cuda.matmul.allow_{bf16,fp16}_reduced_precision_reduction = (False, False)
   with and without the cuBLASLt backend; row 0 of x[:b] @ w for several batch sizes b (batch
   invariance) and repeats of one shape (run to run), and the GEMM kernel names the profiler saw.

Writes one JSON file (environment included) to --out. `--device cpu --quick` is the dry run for a
machine without a GPU: same flow, no Triton kernels, no cuBLAS.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MODES = {
    "default": {},
    "TORCHINDUCTOR_DETERMINISTIC=1": {"TORCHINDUCTOR_DETERMINISTIC": "1"},
    "use_deterministic_algorithms(True)": {},
}


def _digest(tensor) -> str:
    return hashlib.sha256(tensor.detach().float().cpu().contiguous().numpy().tobytes()).hexdigest()[:16]


def child_inductor(mode: str, device: str, quick: bool) -> dict:
    """One process: two compiled frames, what Inductor saw and did in each."""
    import torch
    import torch._inductor.compile_fx as compile_fx_module

    state = {"frame": "import"}
    seen: list[dict] = []
    kernels: list[dict] = []
    benchmarks: list[dict] = []
    try:
        from torch._inductor.runtime import triton_heuristics as th

        init, bench = th.CachingAutotuner.__init__, th.CachingAutotuner.benchmark_all_configs

        def _init(self, *args, **kwargs):
            init(self, *args, **kwargs)
            meta = self.inductor_meta or {}
            kernels.append({"frame": state["frame"], "kernel": meta.get("kernel_name"),
                            "heuristic": str(getattr(self, "heuristic_type", None)),
                            "configs": len(self.configs or []), "deterministic_meta": meta.get("deterministic")})

        def _bench(self, *args, **kwargs):
            out = bench(self, *args, **kwargs)
            meta = self.inductor_meta or {}
            benchmarks.append({"frame": state["frame"], "kernel": meta.get("kernel_name"), "candidates": len(out)})
            return out

        th.CachingAutotuner.__init__, th.CachingAutotuner.benchmark_all_configs = _init, _bench
    except ImportError:  # no Triton (CPU dry run)
        pass

    compile_fx = compile_fx_module.compile_fx

    def _compile_fx(*args, **kwargs):  # what torch.compile's Inductor backend calls, once per frame
        seen.append({"frame": state["frame"], "inductor_deterministic": bool(torch._inductor.config.deterministic),
                     "torch_deterministic": torch.are_deterministic_algorithms_enabled()})
        return compile_fx(*args, **kwargs)

    compile_fx_module.compile_fx = _compile_fx

    if mode == "use_deterministic_algorithms(True)":
        torch.use_deterministic_algorithms(True)
    flags = {"at_start": bool(torch._inductor.config.deterministic)}
    gen = torch.Generator(device="cpu").manual_seed(0)
    shape = (64, 4096) if quick else (512, 65536)
    x = torch.randn(shape, generator=gen).to(device)

    def frame_one(t):
        return (t * 1.5 + 0.25).sum(-1) + (t * t).mean(0).sum()

    def frame_two(t):
        return (t.sin() * t).sum(-1) + t.cos().amax(0).sum()

    outputs = {}
    for name, fn in (("1", frame_one), ("2", frame_two)):
        state["frame"] = name
        compiled = torch.compile(fn, mode="max-autotune-no-cudagraphs")
        start = time.perf_counter()
        out = compiled(x)
        if device == "cuda":
            torch.cuda.synchronize()
        outputs[name] = {"hash": _digest(out), "first_call_s": round(time.perf_counter() - start, 3)}
        flags[f"after_frame_{name}"] = bool(torch._inductor.config.deterministic)
    return {"mode": mode, "torch": torch.__version__, "flags": flags, "frames_seen": seen,
            "kernels": kernels, "benchmarks": benchmarks, "outputs": outputs}


def run_inductor(device: str, quick: bool) -> list[dict]:
    """Every mode in two fresh processes at once (correctness only: no timing compared)."""
    procs = []
    for mode, extra in MODES.items():
        for rep in (1, 2):
            cache = tempfile.mkdtemp(prefix="inductor-")
            env = {k: v for k, v in os.environ.items() if not k.startswith("TORCHINDUCTOR_")}
            env.update(extra, TORCHINDUCTOR_CACHE_DIR=cache, TORCHINDUCTOR_COMPILE_THREADS="1",
                       TORCHINDUCTOR_FX_GRAPH_CACHE="0", TORCHINDUCTOR_AUTOGRAD_CACHE="0")
            cmd = [sys.executable, __file__, "--child-inductor", mode, "--device", device] + (["--quick"] if quick else [])
            procs.append((mode, rep, extra, subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE,
                                                             stderr=subprocess.PIPE, text=True)))
    results = []
    for mode, rep, extra, proc in procs:
        try:
            out, err = proc.communicate(timeout=300)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
        entry = {"mode": mode, "process": rep, "env": extra, "returncode": proc.returncode}
        try:
            entry.update(json.loads(out.strip().splitlines()[-1]))
        except (ValueError, IndexError):
            entry["stderr_tail"] = err[-2000:]
        results.append(entry)
    return results


def _kernels(fn) -> list[str]:
    import torch
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    return sorted({e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA})


def run_splitk(device: str, quick: bool) -> dict:
    """Row 0 of x[:b] @ w across batch sizes and repeats, per cuBLAS setting."""
    import torch

    matmul = torch.backends.cuda.matmul
    out = {"api": {}, "settings": []}
    for name in ("allow_bf16_reduced_precision_reduction", "allow_fp16_reduced_precision_reduction"):
        try:
            setattr(matmul, name, (True, False))
            out["api"][f"{name}=(True, False)"] = "accepted"
        except Exception as exc:  # noqa: BLE001 - the error is the finding
            out["api"][f"{name}=(True, False)"] = f"{type(exc).__name__}: {exc}"
        setattr(matmul, name, True)
    if device != "cuda":
        out["skipped"] = "no CUDA device (dry run)"
        return out
    k, n = (4096, 1024) if quick else (16384, 4096)
    batches = [1, 2, 4, 8, 16, 32, 64, 128, 256]
    gen = torch.Generator(device="cpu").manual_seed(1)
    base = {dt_: (torch.randn(max(batches), k, generator=gen).to(device, dt_),
                  torch.randn(k, n, generator=gen).to(device, dt_)) for dt_ in (torch.bfloat16, torch.float16)}
    settings = [("default", None, True), ("cublaslt backend", "cublaslt", True),
                ("(False, False), cublas backend", None, (False, False)),
                ("(False, False), cublaslt backend", "cublaslt", (False, False))]
    for dtype, attr in ((torch.bfloat16, "allow_bf16_reduced_precision_reduction"),
                        (torch.float16, "allow_fp16_reduced_precision_reduction")):
        x, w = base[dtype]
        for label, backend, value in settings:
            torch.backends.cuda.preferred_blas_library("cublaslt" if backend else "cublas")
            setattr(matmul, attr, value)
            entry = {"dtype": str(dtype).removeprefix("torch."), "setting": label,
                     "preferred_blas": str(torch.backends.cuda.preferred_blas_library()), "value": repr(value)}
            try:
                rows = {b: _digest((x[:b] @ w)[0]) for b in batches}
                entry["row0_by_batch"] = rows
                entry["distinct_row0_across_batches"] = len(set(rows.values()))
                repeats = {b: len({_digest(x[:b] @ w) for _ in range(3)}) for b in (1, 256)}
                entry["distinct_over_3_repeats"] = repeats
                entry["kernels_b1"] = _kernels(lambda: x[:1] @ w)
                entry["kernels_b256"] = _kernels(lambda: x[:256] @ w)
            except Exception as exc:  # noqa: BLE001 - a refusal is the finding
                entry["error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0]}"
            out["settings"].append(entry)
            setattr(matmul, attr, True)
    torch.backends.cuda.preferred_blas_library("cublas")
    out["shape"] = {"k": k, "n": n, "batches": batches}
    return out


def environment(device: str) -> dict:
    sys.path.insert(0, str(ROOT))
    from kb.verify.env import detect

    return detect(gpu=device == "cuda")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    parser.add_argument("--quick", action="store_true", help="small shapes (dry run)")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--child-inductor", choices=tuple(MODES))
    args = parser.parse_args(argv)
    if args.child_inductor:
        print(json.dumps(child_inductor(args.child_inductor, args.device, args.quick)))
        return 0
    created = dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    start = time.perf_counter()
    report = {"created": created, "script": "scripts/probe_stacks_switches.py",
              "command": " ".join(["python", "scripts/probe_stacks_switches.py", *(argv if argv is not None else sys.argv[1:])]),
              "environment": environment(args.device)}
    report["inductor_frames"] = run_inductor(args.device, args.quick)
    try:
        report["splitk"] = run_splitk(args.device, args.quick)
    except Exception as exc:  # noqa: BLE001 - keep the Inductor half of the evidence
        report["splitk"] = {"error": f"{type(exc).__name__}: {exc}"}
    report["seconds"] = round(time.perf_counter() - start, 1)
    text = json.dumps(report, indent=1, sort_keys=False)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n", encoding="utf-8")
    print(text[:4000])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
