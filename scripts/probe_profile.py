"""Where the host time of a probed training step goes: cProfile over a few probed steps of a
benchmark model (benchmarks/probe_models.py), top functions by own time.

    PYTHONPATH=. python scripts/probe_profile.py --model resnet50 --dtype bf16
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "benchmarks"))

import probe_models  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="resnet50")
    ap.add_argument("--dtype", default="bf16")
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--top", type=int, default=30)
    ap.add_argument("--mode", default="probed")
    args = ap.parse_args()
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        probe_models.time_steps(args.model, False, "cuda", args.dtype, args.mode, 1, tmp)  # compile, warm up
    with tempfile.TemporaryDirectory() as tmp:
        prof = cProfile.Profile()
        prof.enable()
        row = probe_models.time_steps(args.model, False, "cuda", args.dtype, args.mode, args.steps, tmp)
        prof.disable()
    print(row)
    pstats.Stats(prof).sort_stats("tottime").print_stats(args.top)
    pstats.Stats(prof).sort_stats("cumulative").print_stats(args.top)


if __name__ == "__main__":
    main()
