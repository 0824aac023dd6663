"""Does torch.lu_solve differ from run to run on valid input, or only on the sweep's pivots?

The operator sweep found torch.lu_solve on CUDA differing by default (float32, fixed by the switch) and
under the switch (complex64, silent). Its inputs are the OpInfo samples enlarged: integer arguments other
than the input are replaced by `remainder(2)` (verifiers/sweep/torch_worker.py, for index arguments), so
the pivots hold zeros, which lu_solve's contract forbids (the CPU raises "Pivots given to lu_solve must all
be greater or equal to 1"). This runs each case in fresh processes, with pivots from torch.linalg.lu_factor
(valid) and with the sweep's 0/1 pivots (invalid), by default and under the switch, forward and backward,
and writes the count of distinct results per case with the environment, as one JSON file. Also the
complex64 1-D scans the sweep ran forward only (cumprod, logcumsumexp of 4M elements), backward too, `--runs` times in one process.

    python scripts/probe_lu_solve.py --out lu-solve.json [--device cuda] [--runs 4]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import time

from probe_env import environment  # this folder (the script's own, first on sys.path)

BATCH, N, K = 28, 42, 56  # the sweep's shapes: 28 factorizations of 42x42, a 42x56 right-hand side


def digest(t) -> str:
    import torch
    t = t.detach().cpu().resolve_conj()
    if t.is_complex():
        t = torch.view_as_real(t)
    return hashlib.sha256(t.contiguous().numpy().tobytes()).hexdigest()[:16]


def child(case: str, dtype_name: str, device: str, switch: bool, repeat: int = 1) -> dict:
    """One run in this process: the digests of the forward result and of the gradients (a scan: `repeat`
    runs in this process, each digest joined, since its order comes from atomics, not from memory)."""
    import torch
    torch.use_deterministic_algorithms(switch)
    dtype = getattr(torch, dtype_name)
    g = torch.Generator(device="cpu").manual_seed(0)
    if case.startswith("scan-"):
        op = case.split("-", 1)[1]
        n = 4_000_000
        re = torch.rand(n, generator=g)
        im = torch.rand(n, generator=g)
        if op == "cumprod":
            x0 = torch.complex(1 + re / 100, im / 100)
        else:
            x0 = torch.complex(re * 4 - 2, im * 4 - 2)
        cot = torch.complex(torch.rand(n, generator=g), torch.rand(n, generator=g)).to(dtype).to(device)
        fwd, bwd = [], []
        for _ in range(repeat):
            x = x0.to(dtype).to(device).requires_grad_(True)
            y = torch.cumprod(x, 0) if op == "cumprod" else torch.logcumsumexp(x, 0)
            (grad,) = torch.autograd.grad(y, x, cot)
            fwd.append(digest(y))
            bwd.append(digest(grad))
        return {"forward": fwd, "backward": bwd}
    a = torch.randn(BATCH, N, N, generator=g).to(dtype)
    b = torch.randn(BATCH, N, K, generator=g).to(dtype)
    lu, piv = torch.linalg.lu_factor(a)
    if case == "sweep-pivots":
        piv = piv.remainder(2)  # what the sweep's enlargement does to an integer argument
    lu = lu.to(device).requires_grad_(True)
    b = b.to(device).requires_grad_(True)
    piv = piv.to(device)
    x = torch.lu_solve(b, lu, piv)
    out = {"forward": digest(x)}
    if case == "valid":
        cot = torch.randn(BATCH, N, K, generator=g).to(dtype).to(device)
        gb, glu = torch.autograd.grad(x, (b, lu), cot)
        out["backward"] = digest(gb) + digest(glu)
    if device == "cuda":
        torch.cuda.synchronize()
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--runs", type=int, default=4)
    ap.add_argument("--child", nargs=3, metavar=("CASE", "DTYPE", "SWITCH"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        case, dtype, switch = args.child
        print(json.dumps(child(case, dtype, args.device, switch == "1", args.runs)))
        return 0
    if not args.out:
        ap.error("--out is required")
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    plan = [(c, d) for c in ("valid", "sweep-pivots") for d in ("float32", "complex64")]
    plan += [("scan-cumprod", "complex64"), ("scan-logcumsumexp", "complex64")]
    rows = []
    for case, dtype in plan:
        for switch in (False, True):
            seen: dict[str, set] = {}
            errors = []
            scan = case.startswith("scan-")
            for _ in range(1 if scan else args.runs):
                env = dict(os.environ, CUBLAS_WORKSPACE_CONFIG=":4096:8")
                proc = subprocess.run([sys.executable, __file__, "--device", args.device, "--runs", str(args.runs), "--child", case, dtype,
                                       "1" if switch else "0"], capture_output=True, text=True, env=env)
                if proc.returncode != 0:
                    errors.append(proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else f"rc {proc.returncode}")
                    continue
                for k, v in json.loads(proc.stdout.strip().splitlines()[-1]).items():
                    seen.setdefault(k, set()).update(v if isinstance(v, list) else [v])
            row = {"case": case, "dtype": dtype, "switch": switch, "runs": args.runs,
                   **{f"{k}_distinct": len(v) for k, v in seen.items()}, "errors": errors}
            rows.append(row)
            print(row, flush=True)
    env_info = environment(args.device)
    tmp = args.out + ".tmp"
    with open(tmp, "w", encoding="utf-8") as handle:
        json.dump({"kind": "lu-solve-pivots", "started": started, "environment": env_info,
                   "command": " ".join(["python", "scripts/probe_lu_solve.py", *sys.argv[1:]]),
                   "shapes": {"batch": BATCH, "n": N, "rhs": K, "scan": 4_000_000}, "rows": rows}, handle, indent=1)
        handle.write("\n")
    os.replace(tmp, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
