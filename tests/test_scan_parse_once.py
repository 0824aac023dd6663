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
PASSES = ("kb.scan.callers", "kb.scan.calltargets", "kb.scan.methodtargets")  # the pass and the modules it parses through


def test_the_callers_pass_parses_each_file_once(tmp_path, monkeypatch):
    """The guard fixture's first answer finds code that never runs, so the callers pass runs twice; each of
    its files' texts is parsed once in the whole scan by that pass, not once per run."""
    root = tmp_path / "guard"
    shutil.copytree(FIXTURES / "guard", root)
    parsed: Counter[str] = Counter()
    real = ast.parse

    def counting(source, *args, **kwargs):
        caller = sys._getframe(1)
        if caller.f_globals.get("__name__") == "kb.scan.oldsyntax":  # the scan's parse, which calls ast.parse
            caller = sys._getframe(2)
        if caller.f_globals.get("__name__") in PASSES:
            parsed[source if isinstance(source, str) else repr(source)] += 1
        return real(source, *args, **kwargs)

    monkeypatch.setattr(ast, "parse", counting)
    report = scan([str(root)], given=pins.parse_versions("torch=2.11"))
    assert any(f.note for f in report.notes), "the fixture no longer makes the second callers pass run"
    assert parsed, "the callers pass parsed nothing: the test no longer watches it"
    assert max(parsed.values()) == 1, sorted(parsed.values())


def test_a_class_is_walked_once_for_its_attributes_kinds(monkeypatch):
    """Every read of `self.rng` in a class's methods asks what the attribute holds (kb/scan/receivers.py):
    the class's stores and `setattr` calls are found in one walk of it per file, not in two per read."""
    from kb.query import scan_index
    from kb.scan import receivers, resolve, switches
    from kb.scan.run import targets

    wanted, methods, _ = targets(scan_index())
    path = Path(__file__).parent / "fixtures" / "scanspeed" / "receivers.py"
    walked: Counter[int] = Counter()
    real = receivers.iwalk  # ast.walk's nodes (kb/scan/nodes.py), as receivers walks a class

    def counting(node):
        if isinstance(node, ast.ClassDef):
            walked[id(node)] += 1
        return real(node)

    monkeypatch.setattr(receivers, "iwalk", counting)
    module = resolve.analyse(path.read_text(encoding="utf-8"), str(path), wanted, methods, switches.WATCHED)
    assert any(c.op == "torch.index_add" for c in module.calls)
    assert walked, "no class was walked for its attributes: the test no longer watches receivers"
    assert max(walked.values()) == 1, dict(walked)
