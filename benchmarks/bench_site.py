"""Time from data/ to the built site, page count and JSON API size.

    PYTHONPATH=$PWD .venv/bin/python benchmarks/bench_site.py [--runs 3]

Runs `kb site` (lint + index + pages + JSON API + mkdocs build --strict) in a fresh
subprocess on a temporary copy of the project, so nothing under site/build/ is reused.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COPIED = ("data", "docs", "site/assets", "mkdocs.yml", "README.md")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    times = []
    for _ in range(args.runs):
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            for rel in COPIED:
                src, dst = ROOT / rel, root / rel
                dst.parent.mkdir(parents=True, exist_ok=True)
                shutil.copytree(src, dst) if src.is_dir() else shutil.copy2(src, dst)
            start = time.perf_counter()
            subprocess.run([sys.executable, "-m", "kb", "--root", str(root), "site"], check=True, env=env,
                           capture_output=True)
            times.append(time.perf_counter() - start)
            html = root / "site/build/html"
            pages = sum(1 for _ in html.rglob("*.html"))
            api = [p for p in (html / "api/v1").rglob("*.json")]
            api_bytes = sum(p.stat().st_size for p in api)
            all_bytes = (html / "api/v1/all.json").stat().st_size
            site_bytes = sum(p.stat().st_size for p in html.rglob("*") if p.is_file())
    print(f"data/ -> built site: median {statistics.median(times):.2f} s, min {min(times):.2f} s over {len(times)} runs "
          f"({os.cpu_count()} CPUs)")
    print(f"HTML pages: {pages}; JSON API: {len(api)} files, {api_bytes / 1024 / 1024:.1f} MiB "
          f"(all.json {all_bytes / 1024:.0f} KiB); whole site {site_bytes / 1024 / 1024:.1f} MiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
