"""Time from data/ to the built site in a fresh clone, page count and JSON API size.

    PYTHONPATH=$PWD .venv/bin/python benchmarks/bench_site.py [--runs 3] [--tree DIR] [--warm]

Runs `kb site` (lint + index + pages + JSON API + mkdocs build --strict) in a fresh
subprocess on a temporary copy of the project: its data/, docs/, examples/, reports/ and
kb/ (no __pycache__, no .cache/, no site/build/), so nothing is reused, as in a fresh clone;
the first `kb site` there also compiles kb/ to bytecode. `--warm` times a second `kb site` in
the same copy (bytecode and .cache/kb/ kept). `--tree` times another checkout (e.g. a
worktree of an older commit) for a before/after. Wall and CPU time (user + system of the
children: `kb site` forks its lint checks, mkdocs runs in its own process) are printed;
on a shared machine the load average says how busy it was.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COPIED = ("kb", "verifiers", "data", "docs", "examples", "reports", "site/assets", "mkdocs.yml", "README.md")


def copy_tree(tree: Path, dest: Path) -> None:
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for rel in COPIED:
        src, dst = tree / rel, dest / rel
        if not src.exists():
            continue
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copytree(src, dst, ignore=ignore) if src.is_dir() else shutil.copy2(src, dst)


def timed(root: Path) -> tuple[float, float]:
    env = dict(os.environ, PYTHONPATH=str(root))
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # a clone's second run finds its bytecode, as anywhere
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "kb", "--root", str(root), "site"], env=env, capture_output=True,
                          text=True, cwd=root)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"kb site failed ({done.returncode}):\n{done.stdout}{done.stderr}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--tree", type=Path, default=ROOT, help="the checkout to time (default: this one)")
    parser.add_argument("--warm", action="store_true", help="also time a second run in each copy")
    args = parser.parse_args()
    load_before = os.getloadavg()
    cold, warm = [], []
    for _ in range(args.runs):
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp) / "p"
            copy_tree(args.tree.resolve(), root)
            cold.append(timed(root))
            if args.warm:
                warm.append(timed(root))
            html = root / "site/build/html"
            pages = sum(1 for _ in html.rglob("*.html"))
            api = [p for p in (html / "api/v1").rglob("*.json")]
            api_bytes = sum(p.stat().st_size for p in api)
            all_bytes = (html / "api/v1/all.json").stat().st_size
            site_bytes = sum(p.stat().st_size for p in html.rglob("*") if p.is_file())
    load_after = os.getloadavg()
    for label, times in (("fresh clone", cold), ("second run", warm)):
        if times:
            walls = [w for w, _ in times]
            print(f"kb site, {label}: wall median {statistics.median(walls):.2f} s, min {min(walls):.2f} s; "
                  f"CPU median {statistics.median(c for _, c in times):.2f} s over {len(times)} runs")
    print(f"HTML pages: {pages}; JSON API: {len(api)} files, {api_bytes / 1024 / 1024:.1f} MiB "
          f"(all.json {all_bytes / 1024:.0f} KiB); whole site {site_bytes / 1024 / 1024:.1f} MiB")
    print(f"{os.cpu_count()} CPUs; load average (1 min) {load_before[0]:.1f} before, {load_after[0]:.1f} after")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
