#!/usr/bin/env python3
"""Thin wrapper for cron and CI: `python scripts/nightly.py [kb nightly options]`.

Runs `kb nightly` with the repository this script lives in as the root, so it works from any
directory; all logic is in kb/nightly/.
"""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kb.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(["--root", str(ROOT), "nightly", *sys.argv[1:]]))
