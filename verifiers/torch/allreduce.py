"""NCCL all-reduce ordering verifier (needs >= 2 GPUs), writing its own run file.

    PYTHONPATH=. python3 -m verifiers.torch.allreduce --nproc 2 --out $OUT

For each mode (NCCL's own choice; NCCL_PIN = Ring + Simple; other pinned choices) it
launches `torchrun --nproc_per_node=N` (torch.distributed.run) in a fresh process group with
that environment; each rank holds 16M mixed-magnitude float32 values and all-reduces them
(sum) N times. Per mode: distinct results out of N (run-to-run), and across modes whether
the algorithm choice changes the bits (the summation order: record nccl.allreduce-order).

What two GPUs cannot show: with two ranks every element is a + b, and IEEE addition is
commutative, so no algorithm, protocol or chunking can change the bits. The order only
matters from three ranks on ((a + b) + c against a + (b + c)). NCCL refuses two ranks on
one GPU, so a run with fewer than three GPUs says so in its result (`limits`), and the
merge does not read its identical bits as evidence against the record.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from verifiers import verifier

# (mode, solution codes, environment): NCCL_PIN is the record's solution (data/solutions.yaml);
# the other pinned choices are configurations a different machine or message size could land on.
MODES: tuple[tuple[str, tuple[str, ...], dict[str, str]], ...] = (
    ("default", (), {}),
    ("NCCL_PIN", ("NCCL_PIN",), {"NCCL_ALGO": "Ring", "NCCL_PROTO": "Simple"}),
    ("Tree/Simple", (), {"NCCL_ALGO": "Tree", "NCCL_PROTO": "Simple"}),
    ("Ring/LL", (), {"NCCL_ALGO": "Ring", "NCCL_PROTO": "LL"}),
)
TWO_RANKS = ("two ranks: every element is a + b and IEEE addition is commutative, so no NCCL choice can "
             "change the bits; the summation order shows from three ranks on")



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
    hashes, times, max_abs, max_ulp = [], [], 0.0, 0
    first: dict | None = None
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
        nccl = ".".join(str(part) for part in torch.cuda.nccl.version())
        with open(result, "w", encoding="utf-8") as handle:
            json.dump({"outcome": "ok", "nccl": nccl, "distinct": len(set(hashes)), "max_abs_diff": max_abs, "max_ulp_diff": max_ulp,
                       "median_s": round(times[len(times) // 2], 6), "message": None, "hashes": sorted(set(hashes)),
                       "first": first["out"][:4096].tolist() if first is not None else None}, handle)
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
    from kb.verify.runner import KEPT, SWITCHES, mode_entry
    from verifiers.discover import code_hash

    created = runfile.now()
    modes, firsts, nccl = [], {}, None
    for mode, codes, extra in MODES:
        with tempfile.TemporaryDirectory() as tmp:
            written = os.path.join(tmp, "r.json")
            environ = {k: v for k, v in os.environ.items()
                       if k in KEPT or k not in SWITCHES and k not in ("NCCL_ALGO", "NCCL_PROTO")}
            environ.update(extra)
            cmd = [sys.executable, "-m", "torch.distributed.run", f"--nproc_per_node={args.nproc}", "-m",
                   "verifiers.torch.allreduce", "--runs", str(args.runs), "--size", str(args.size), "--worker", written]
            try:
                proc = subprocess.run(cmd, env=environ, capture_output=True, text=True, timeout=args.timeout)
                measured = json.load(open(written, encoding="utf-8")) if os.path.exists(written) else {
                    "outcome": "error", "message": f"exit {proc.returncode}: " + " | ".join(proc.stderr.strip().splitlines()[-3:])[:500]}
            except subprocess.TimeoutExpired:
                measured = {"outcome": "error", "message": f"timed out after {args.timeout:g} s"}
        firsts[mode] = measured.pop("first", None)
        nccl = measured.pop("nccl", None) or nccl
        modes.append(mode_entry(mode, codes, measured) | {"env": extra})
    seen = {json.dumps(v) for v in firsts.values() if v is not None}
    result = {
        # The record is keyed by NCCL versions, so the version measured is NCCL's (torch's beside it).
        "source": "nccl.allreduce-order", "verifier": "nccl.allreduce_order", "framework": "nccl",
        "version": nccl or "n/a", "torch": framework_versions().get("pytorch", "n/a"), "device": "gpu",
        "n": args.runs, "ranks": args.nproc, "size": args.size, "modes": modes,
        "cross_mode_distinct": len(seen),
    }
    # The machine's safety settings that every mode kept (NVLS off where the owner forbids it).
    result["env_kept"] = {k: os.environ[k] for k in sorted(KEPT) if k in os.environ}
    if args.nproc < 3:
        result["limits"] = TWO_RANKS
    doc = runfile.document(env.detect(), [result], created, code_hash(), "nccl")
    path = runfile.write(Path(args.out), doc, created)
    print(json.dumps({"file": str(path), "modes": modes, "cross_mode_distinct": len(seen)}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
