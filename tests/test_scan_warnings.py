"""A scan reads code it did not write: Python's compile warnings about that code (an invalid escape) are not
printed over the report (seen on NVIDIA/NeMo under Python 3.12: 36 SyntaxWarning lines on stderr), while the
caller's own warning filters come back as they were."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

from kb.scan import pins
from kb.scan.run import scan

ROOT = Path(__file__).resolve().parents[1]
BAD_ESCAPE = 'import torch\nPATTERN = "\\[x\\]"  # an invalid escape: Python warns when it compiles this\n' \
             'y = torch.randn(3).cuda().index_add(0, torch.tensor([0, 0, 0]).cuda(), torch.randn(3).cuda())\n'


def _notebook(source: str) -> str:
    return json.dumps({"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                                  "source": source.splitlines(keepends=True)}],
                       "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


def _write(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text(BAD_ESCAPE, encoding="utf-8")
    (tmp_path / "explore.ipynb").write_text(_notebook(BAD_ESCAPE), encoding="utf-8")


def test_compile_warnings_about_scanned_code_are_not_raised_and_filters_come_back(tmp_path):
    _write(tmp_path)
    before = list(warnings.filters)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        report = scan([str(tmp_path)], given=pins.parse_versions("torch=2.11"), jobs=1)
        inside = list(warnings.filters)
    assert not [w for w in seen if "escape" in str(w.message)], [str(w.message) for w in seen]
    assert report.findings  # the file was read: the scan is not silenced by the warning filter
    assert inside[0][0] == "always"  # scan() put the caller's filters back
    assert warnings.filters == before


def test_the_command_prints_no_compile_warning(tmp_path):
    _write(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONWARNINGS": "always"}
    for jobs in ("1", "2"):
        done = subprocess.run([sys.executable, "-m", "kb", "scan", str(tmp_path), "--versions", "torch=2.11",
                               "--format", "json", "--jobs", jobs], capture_output=True, text=True, cwd=ROOT, env=env)
        assert "escape" not in done.stderr, done.stderr
        assert json.loads(done.stdout)["findings"]
