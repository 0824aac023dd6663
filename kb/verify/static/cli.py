"""`kb verify --static`: read released wheels for determinism evidence (no GPU, no install)."""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

from kb.verify.static.wheels import PYTHONS, TARGETS

MIN_FREE_GB = 8.0  # the largest wheel (about 2.5 GB) and its biggest member unpacked in memory, with room to spare


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--static", nargs="*", default=None, choices=sorted(TARGETS), metavar="FRAMEWORK",
                   help="read each registry release's released wheel (downloaded one at a time with pip, never "
                   f"installed, deleted after reading) and write data/runs/static-<framework>/<release>.yaml; "
                   f"releases with evidence are skipped. Frameworks: {', '.join(sorted(TARGETS))} (default: all)")
    p.add_argument("--release", action="append", default=[], metavar="VERSION", help="with --static: only this release (repeatable)")
    p.add_argument("--limit", type=int, default=None, metavar="N", help="with --static: read at most N releases")
    p.add_argument("--scratch", default=None, metavar="DIR", help="with --static: folder for the wheel being read (default: the system's temporary folder)")


def main(args: argparse.Namespace, root: Path) -> int:
    from kb.verify.static.callsites import NEEDS
    from kb.verify.static.run import run

    try:
        import numpy  # noqa: F401  (checked before any download: the binary reader needs it)
    except ImportError:
        print(f"kb verify --static: error: {NEEDS}", file=sys.stderr)
        return 2
    frameworks = args.static or sorted(TARGETS)
    scratch = Path(args.scratch) if args.scratch else None
    free = shutil.disk_usage(scratch or Path("/tmp")).free / 2**30
    if free < MIN_FREE_GB:
        print(f"kb verify --static: error: {free:.1f} GB free where wheels are downloaded; need {MIN_FREE_GB:.0f} GB "
              "(use --scratch DIR on a larger disk)", file=sys.stderr)
        return 2
    outcome = run(root, frameworks, only=args.release or None, limit=args.limit, scratch=scratch, progress=sys.stderr.isatty())
    for label in outcome.written:
        print(f"read {label}")
    for label in outcome.not_served:
        print(f"not served for Linux x86-64 (CPython {', '.join(PYTHONS)} tried where a wheel is per Python): {label}")
    for label in outcome.failed:
        print(f"failed: {label}", file=sys.stderr)
    print(f"{len(outcome.written)} release(s) read, {len(outcome.skipped)} already had evidence, "
          f"{len(outcome.not_served)} not served, {len(outcome.failed)} failed", file=sys.stderr)
    return 1 if outcome.failed else 0
