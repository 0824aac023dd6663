"""Wall and CPU time of `kb validate`, `kb build --check` and `kb site` on a fresh copy of the project.

    python benchmarks/bench_commands.py [--runs 3] [--skip-site] [--tree DIR]

The copy (kb/, verifiers/, data/, docs/, examples/, reports/, site assets, configs; no
__pycache__, no .cache/, no site/build/) stands in for a fresh clone: the first run of each
command is "cold" (Python compiles kb/ to bytecode, nothing is remembered under .cache/kb/),
the later ones "warm" (bytecode and .cache/kb/ kept; PYTHONDONTWRITEBYTECODE is dropped for
the children, else every run would compile kb/ again). CPU time (user + system of the child
and its children) is printed beside wall time because on a shared machine wall time mostly
measures the neighbours; the load average before and after says how busy the machine was.
`--tree` times another checkout (a worktree of an older commit) for a before/after.
Targets (issue "one pipeline, no circles"): validate and build <= 1 s, site <= 10 s.
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
COPIED = ("kb", "verifiers", "data", "docs", "examples", "reports", "schema", "site/assets", "mkdocs.yml", "README.md",
          "pyproject.toml")
COMMANDS = (("validate", ["validate"]), ("build --check", ["build", "--check"]), ("site", ["site"]))


def fresh_copy(dest: Path, tree: Path = ROOT) -> Path:
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for rel in COPIED:
        src, dst = tree / rel, dest / rel
        if not src.exists():
            continue
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copytree(src, dst, ignore=ignore) if src.is_dir() else shutil.copy2(src, dst)
    return dest


def timed(root: Path, args: list[str]) -> tuple[float, float]:
    """(wall s, CPU s) of one `python -m kb <args>` in `root`, which must succeed."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    env = dict(os.environ, PYTHONPATH=str(root))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    done = subprocess.run([sys.executable, "-m", "kb", *args], cwd=root, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"kb {' '.join(args)} failed ({done.returncode}):\n{done.stdout}{done.stderr}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3, help="runs per command; the first is cold (default 3)")
    parser.add_argument("--skip-site", action="store_true", help="time validate and build only")
    parser.add_argument("--tree", type=Path, default=ROOT, help="the checkout to time (default: this one)")
    args = parser.parse_args()
    load_before = os.getloadavg()
    rows = []
    with tempfile.TemporaryDirectory(prefix="kb-bench-") as tmp:
        root = fresh_copy(Path(tmp) / "p", args.tree.resolve())
        for name, argv in COMMANDS:
            if args.skip_site and name == "site":
                continue
            runs = [timed(root, argv) for _ in range(max(args.runs, 1))]
            warm = runs[1:] or runs
            rows.append((name, runs[0], statistics.median(w for w, _ in warm), statistics.median(c for _, c in warm)))
    load_after = os.getloadavg()
    print(f"{'command':<14} {'cold wall':>10} {'cold CPU':>9} {'warm wall':>10} {'warm CPU':>9}   (median of {max(args.runs - 1, 1)} warm)")
    for name, (cold_wall, cold_cpu), warm_wall, warm_cpu in rows:
        print(f"kb {name:<11} {cold_wall:>9.2f}s {cold_cpu:>8.2f}s {warm_wall:>9.2f}s {warm_cpu:>8.2f}s")
    print(f"{os.cpu_count()} CPUs; load average (1 min) {load_before[0]:.1f} before, {load_after[0]:.1f} after")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
