"""Write the example of docs/scan.md from a real run: `kb scan` on PyTorch's DCGAN example.

    python scripts/scan_doc.py           # rewrite the block between the GENERATED markers
    python scripts/scan_doc.py --check   # exit 1 if the block differs from a fresh run

The script is pytorch/examples' dcgan/main.py (BSD-3-Clause), shipped as a test fixture;
the scan runs in its folder so the page shows the paths a user would see. Versions are
pinned so the page does not follow what is installed here.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kb.atomic import write_atomic  # noqa: E402

PAGE = ROOT / "docs/scan.md"
FOLDER = ROOT / "tests/fixtures/scan/pytorch-examples"
COMMAND = ["kb", "scan", "dcgan/main.py", "--versions", "torch=2.11"]
BEGIN = "<!-- BEGIN GENERATED SCAN (python scripts/scan_doc.py) -->"
END = "<!-- END GENERATED SCAN -->"


def block() -> str:
    done = subprocess.run([sys.executable, "-m", *COMMAND], capture_output=True, text=True, cwd=FOLDER,
                          env={**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1", "COLUMNS": "200"}, timeout=120)
    if done.returncode not in (0, 1):
        raise SystemExit(f"kb scan failed ({done.returncode}): {done.stderr}")
    return (f"{BEGIN}\n```console\n$ {' '.join(COMMAND)}\n{done.stdout.rstrip()}\n$ echo $?\n{done.returncode}\n```\n{END}")


def render(page: str) -> str:
    start, end = page.index(BEGIN), page.index(END) + len(END)
    return page[:start] + block() + page[end:]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    page = PAGE.read_text(encoding="utf-8")
    fresh = render(page)
    if args.check:
        if fresh != page:
            print("docs/scan.md is stale: run python scripts/scan_doc.py", file=sys.stderr)
            return 1
        return 0
    if fresh != page:
        write_atomic(PAGE, fresh)
        print("wrote docs/scan.md")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
