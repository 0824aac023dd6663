"""NCCL all-reduce ordering verifier (needs >= 2 GPUs), writing its own run file.

    PYTHONPATH=. python3 -m verifiers.torch.allreduce --nproc 2 --out $OUT

For each mode (NCCL defaults, NCCL_ALGO=Ring, NCCL_ALGO=Tree) it launches
`torchrun --nproc_per_node=N` (torch.distributed.run) in a fresh process group with that
environment; each rank holds 16M mixed-magnitude float32 values and all-reduces them
(sum) N times. Per mode: distinct results out of N (run-to-run), and across modes whether
the algorithm choice changes the bits (the summation order: record nccl.allreduce-order).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

MODES = (("default", {}), ("NCCL_ALGO_RING", {"NCCL_ALGO": "Ring"}), ("NCCL_ALGO_TREE", {"NCCL_ALGO": "Tree"}))


from verifiers import verifier


@verifier("nccl.allreduce_order", framework="nccl", device="gpu")
def allreduce_order(ctx):
    """Registered so records can name it (KB014); it needs several processes, so `kb verify`
    never plans it (no framework `nccl` is installed): run this module instead."""
    raise RuntimeError("launch with: python3 -m verifiers.torch.allreduce --nproc 2 --out DIR")


def worker(n: int, size: int, result: str) -> None:
    import time

    import torch
    import torch.distributed as dist

    from verifiers import measure

    dist.init_process_group("nccl")
    rank = dist.get_rank()
    torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", rank)))
    gen = torch.Generator().manual_seed(1000 + rank)
    base = (torch.randn(size, generator=gen) * 10.0 ** torch.randint(0, 6, (size,), generator=gen).float()).cuda()
    hashes, times, first, max_abs, max_ulp = [], [], None, 0.0, 0
    for _ in range(n):
        x = base.clone()
        torch.cuda.synchronize()
        start = time.perf_counter()
        dist.all_reduce(x)
        torch.cuda.synchronize()
        times.append(time.perf_counter() - start)
        values = measure.arrays(x)
        hashes.append(measure.digest(values))
        if first is None:
            first = values
        else:
            a, u = measure.differences(first, values)
            max_abs, max_ulp = max(max_abs, a), max(max_ulp, u)
    if rank == 0:
        times.sort()
        with open(result, "w", encoding="utf-8") as handle:
            json.dump({"outcome": "ok", "distinct": len(set(hashes)), "max_abs_diff": max_abs, "max_ulp_diff": max_ulp,
                       "median_s": round(times[len(times) // 2], 6), "message": None, "hashes": sorted(set(hashes)),
                       "first": first["out"][:4096].tolist()}, handle)
    dist.destroy_process_group()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--nproc", type=int, default=2)
    p.add_argument("-n", "--runs", type=int, default=5)
    p.add_argument("--size", type=int, default=16_000_000)
    p.add_argument("--timeout", type=float, default=180)
    p.add_argument("--out", default="data/runs")
    p.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:
        worker(args.runs, args.size, args.worker)
        return 0
    from kb.verify import env, runfile
    from kb.verify.env import framework_versions
    from kb.verify.runner import SWITCHES, mode_entry
    from verifiers.discover import code_hash

    created = runfile.now()
    modes, firsts = [], {}
    for mode, extra in MODES:
        with tempfile.TemporaryDirectory() as tmp:
            result = os.path.join(tmp, "r.json")
            environ = {k: v for k, v in os.environ.items() if k not in SWITCHES and not k.startswith("NCCL_ALGO")}
            environ.update(extra)
            cmd = [sys.executable, "-m", "torch.distributed.run", f"--nproc_per_node={args.nproc}", "-m",
                   "verifiers.torch.allreduce", "--runs", str(args.runs), "--size", str(args.size), "--worker", result]
            try:
                proc = subprocess.run(cmd, env=environ, capture_output=True, text=True, timeout=args.timeout)
                measured = json.load(open(result, encoding="utf-8")) if os.path.exists(result) else {
                    "outcome": "error", "message": f"exit {proc.returncode}: " + " | ".join(proc.stderr.strip().splitlines()[-3:])[:500]}
            except subprocess.TimeoutExpired:
                measured = {"outcome": "error", "message": f"timed out after {args.timeout:g} s"}
        firsts[mode] = measured.pop("first", None)
        # NCCL_ALGO is a configuration, not a solution code: every mode has solutions [].
        modes.append(mode_entry(mode, (), measured) | {"env": extra})
    seen = {json.dumps(v) for v in firsts.values() if v is not None}
    doc = runfile.document(env.detect(), [{
        "source": "nccl.allreduce-order", "verifier": "nccl.allreduce_order", "framework": "pytorch",
        "version": framework_versions().get("pytorch", "n/a"), "device": "gpu", "n": args.runs,
        "ranks": args.nproc, "size": args.size, "modes": modes,
        "cross_mode_distinct": len(seen),
    }], created, code_hash(), "nccl")
    path = runfile.write(Path(args.out), doc, created)
    print(json.dumps({"file": str(path), "modes": modes, "cross_mode_distinct": len(seen)}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
