"""Write a few source files into a folder and scan it: the fixture shape of the tests that reproduce a
frozen corpus's causes (tests/test_scan_third.py, tests/test_scan_fourth.py)."""

from __future__ import annotations

import textwrap
from pathlib import Path

from kb.scan import lookup, pins
from kb.scan.run import scan


def scan_files(tmp_path: Path, files: dict[str, str], versions: str) -> list[lookup.Finding]:
    for name, source in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(textwrap.dedent(source), encoding="utf-8")
    return list(scan([str(tmp_path)], given=pins.parse_versions(versions)).findings)
