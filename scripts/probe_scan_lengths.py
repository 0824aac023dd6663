"""How long a 1-D CUDA scan must be before its result differs from run to run (cumprod, logcumsumexp).

The sweeps found `torch.cumprod` and `torch.logcumsumexp` on a 1-D float input of 4M elements silent
under the determinism switch; a noise schedule of 1,000 elements repeated in `kb check`'s corpus. This
runs each length several times, forward and backward, by default and under the switch, and writes
the count of distinct results per length with the environment, as one JSON file.

    python scripts/probe_scan_lengths.py --out scan-lengths.json [--device cuda] [--runs 8]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import time

import torch

from probe_env import environment  # this folder (the script's own, first on sys.path)

LENGTHS = (256, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 262144, 1048576, 4194304)


def digest(t: torch.Tensor) -> str:
    return hashlib.sha256(t.detach().float().cpu().numpy().tobytes()).hexdigest()[:16]


def one(op: str, n: int, device: str, runs: int, switch: bool) -> dict:
    torch.use_deterministic_algorithms(switch)
    g = torch.Generator(device="cpu").manual_seed(0)
    base = torch.rand(n, generator=g, dtype=torch.float32)
    x0 = (1 + base / 100) if op == "cumprod" else base * 4 - 2
    cot = torch.rand(n, generator=g, dtype=torch.float32).to(device)
    fwd, bwd = set(), set()
    for _ in range(runs):
        x = x0.to(device).requires_grad_(True)
        y = torch.cumprod(x, 0) if op == "cumprod" else torch.logcumsumexp(x, 0)
        (grad,) = torch.autograd.grad(y, x, cot)
        fwd.add(digest(y))
        bwd.add(digest(grad))
    torch.use_deterministic_algorithms(False)
    return {"op": op, "n": n, "switch": switch, "runs": runs, "forward_distinct": len(fwd), "backward_distinct": len(bwd)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--runs", type=int, default=8)
    ap.add_argument("--lengths", default=",".join(map(str, LENGTHS)))
    args = ap.parse_args()
    lengths = [int(v) for v in args.lengths.split(",")]
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    rows = [one(op, n, args.device, args.runs, switch) for op in ("cumprod", "logcumsumexp")
            for n in lengths for switch in (False, True)]
    env = environment(args.device)
    with open(args.out, "w", encoding="utf-8") as handle:
        json.dump({"kind": "scan-lengths", "started": started, "environment": env, "command": " ".join(
            ["python", "scripts/probe_scan_lengths.py", *[a for a in __import__("sys").argv[1:]]]), "rows": rows},
            handle, indent=1)
        handle.write("\n")
    for r in rows:
        print(r)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
