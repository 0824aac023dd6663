"""A scan parses each file of the code base once in the passes that read files again after the first
(kb/scan/callers.py: the values every caller passes, asked twice when the first answer finds dead code):
a large code base's scan spent its time parsing the same scripts again (issue 45)."""

from __future__ import annotations

import ast
import shutil
import sys
from collections import Counter
from pathlib import Path

from kb.scan import pins
from kb.scan.run import scan

FIXTURES = Path(__file__).parent / "fixtures" / "scancallers"
PASSES = ("kb.scan.callers",)


def test_the_callers_pass_parses_each_file_once(tmp_path, monkeypatch):
    """The guard fixture's first answer finds code that never runs, so the callers pass runs twice; each of
    its files' texts is parsed once in the whole scan by that pass, not once per run."""
    root = tmp_path / "guard"
    shutil.copytree(FIXTURES / "guard", root)
    parsed: Counter[str] = Counter()
    real = ast.parse

    def counting(source, *args, **kwargs):
        if sys._getframe(1).f_globals.get("__name__") in PASSES:
            parsed[source if isinstance(source, str) else repr(source)] += 1
        return real(source, *args, **kwargs)

    monkeypatch.setattr(ast, "parse", counting)
    report = scan([str(root)], given=pins.parse_versions("torch=2.11"))
    assert any(f.note for f in report.notes), "the fixture no longer makes the second callers pass run"
    assert parsed, "the callers pass parsed nothing: the test no longer watches it"
    assert max(parsed.values()) == 1, sorted(parsed.values())
