"""What scripts read from `kb`: --json is strict JSON (issue 43, R4-M5) and a reader that stops
early is not an error (R4-L12)."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kb import jsonio
from kb.cli import main

ROOT = Path(__file__).resolve().parents[1]


def _strict(text: str):
    """json.loads as JavaScript's JSON.parse reads: the tokens NaN, Infinity and -Infinity are errors."""
    def refuse(token: str):
        raise ValueError(f"{token} is not JSON")

    return json.loads(text, parse_constant=refuse)


def test_r4_m5_status_json_with_an_infinite_call_value_is_strict(capsys) -> None:
    code = main(["status", "torch.nn.functional.batch_norm", "2.5", "--call", "eps=1e400", "--json"])
    assert code == 0
    doc = _strict(capsys.readouterr().out)
    assert doc["call"]["eps"] == "inf"


def test_r4_m5_dumps_writes_non_finite_floats_as_strings() -> None:
    value = {"a": [math.nan, math.inf, -math.inf, 0.5, (1, 2)], "b": {"c": float("nan")}, "d": "NaN", "e": 10 ** 30}
    text = jsonio.dumps(value)
    assert _strict(text) == {"a": ["nan", "inf", "-inf", 0.5, [1, 2]], "b": {"c": "nan"}, "d": "NaN", "e": 10 ** 30}
    assert [float(x) for x in ("inf", "-inf")] == [math.inf, -math.inf]  # read back by float()


def test_r4_m5_nightly_report_and_site_api_are_strict(tmp_path: Path, monkeypatch) -> None:
    from kb.nightly import report
    from kb.nightly.report import write
    from kb.site import api

    monkeypatch.setattr(report, "markdown", lambda _report: "")  # the JSON file is what is checked here

    assert _strict(api._dump({"x": math.nan}))["x"] == "nan"
    json_path, _ = write({"schema_version": 1, "steps": [{"step": "sweep", "wall_s": math.inf}]}, tmp_path)
    assert _strict(json_path.read_text())["steps"][0]["wall_s"] == "inf"


def _with_closed_stdout(*argv: str) -> subprocess.CompletedProcess:
    """Run kb with stdout a pipe whose reader is already gone (`kb ... | head -0`)."""
    read, write = os.pipe()
    os.close(read)
    try:
        return subprocess.run([sys.executable, "-m", "kb", *argv], stdout=write, stderr=subprocess.PIPE, text=True,
                              env=dict(os.environ, PYTHONPATH=str(ROOT)), cwd=ROOT, timeout=120)
    finally:
        os.close(write)


@pytest.mark.parametrize("argv", [["status", "tf.nn.bias_add", "1.15"], ["status", "tf.add", "2.1", "--json"],
                                  ["verify", "--coverage"]])
def test_r4_l12_a_reader_that_stops_early_is_exit_0(argv: list[str]) -> None:
    """`kb status tf.add 2.1 | head -1` exited 1 (the lint-findings code) with no message."""
    done = _with_closed_stdout(*argv)
    assert done.returncode == 0, done.stderr[-500:]
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr
