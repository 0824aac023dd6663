"""Probe logs are users' training output: names are printed without their control
characters, a log over the bound is a clear exit 2, and any line is a record or exit 2."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kb.cli import main
from kb.probe import diff
from kb.probe.cli import EXIT_USAGE
from bounds import BOUND_S


def _write(d: Path, records: list, raw: str | None = None) -> Path:
    d.mkdir(parents=True, exist_ok=True)
    (d / "probes.jsonl").write_text(raw if raw is not None else "".join(json.dumps(r) + "\n" for r in records),
                                    encoding="utf-8")
    (d / "meta.json").write_text("{}", encoding="utf-8")
    return d


def _rec(step: int, name: str, h: str, **extra) -> dict:
    return dict(seq=step, step=step, kind="forward", name=name, hash=h, shape=[2], dtype="float32", **extra)


def test_control_characters_in_names_are_escaped(tmp_path: Path, capsys) -> None:
    evil = "dense\x1b[2J\x1b]0;owned\x07\r"
    a = _write(tmp_path / "a", [_rec(0, evil, "aa")])
    b = _write(tmp_path / "b", [_rec(0, evil, "bb")])
    assert main(["probe", "diff", str(a), str(b)]) == 1
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out and "\r" not in out
    assert "\\x1b[2J" in out


@pytest.mark.parametrize("records", [[_rec(0, 5, "aa")], [_rec(0, ["x"], "aa")], [dict(_rec(0, "x", "aa"), occ="1")],
                                     [dict(_rec(0, "x", "aa"), path=["p"])], [dict(_rec(0, "x", 7))]])
def test_wrong_typed_records_are_exit_2(tmp_path: Path, records: list, capsys) -> None:
    a = _write(tmp_path / "a", records)
    assert main(["probe", "diff", str(a), str(a)]) == EXIT_USAGE
    assert "not a probe record" in capsys.readouterr().err


def test_a_log_over_the_byte_bound_is_exit_2_at_once(tmp_path: Path, monkeypatch, capsys) -> None:
    a = _write(tmp_path / "a", [_rec(i, "x", "aa") for i in range(50)])
    monkeypatch.setattr(diff, "MAX_LOG_BYTES", 1000)
    start = time.perf_counter()
    assert main(["probe", "diff", str(a), str(a)]) == EXIT_USAGE
    assert time.perf_counter() - start < BOUND_S
    err = capsys.readouterr().err
    assert "at most 1,000 are read" in err and "Traceback" not in err


def test_a_log_over_the_record_bound_is_exit_2(tmp_path: Path, monkeypatch, capsys) -> None:
    a = _write(tmp_path / "a", [_rec(i, "x", "aa") for i in range(50)])
    monkeypatch.setattr(diff, "MAX_RECORDS", 10)
    assert main(["probe", "diff", str(a), str(a)]) == EXIT_USAGE
    assert "more than 10 probe records" in capsys.readouterr().err


_value = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=10), st.lists(st.integers(), max_size=2))
_record = st.fixed_dictionaries({"step": _value, "kind": _value, "name": _value, "hash": _value},
                                optional={"seq": _value, "path": _value, "occ": _value, "shape": _value, "dtype": _value,
                                          "stats": _value, "framework": _value, "device": _value})
_line = st.one_of(_record.map(json.dumps), st.text(max_size=30).filter(lambda s: "\n" not in s and "\r" not in s))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(a=st.lists(_line, max_size=6), b=st.lists(_line, max_size=6), as_json=st.booleans())
def test_probe_log_fuzz(tmp_path_factory, a: list[str], b: list[str], as_json: bool) -> None:
    """Any lines: `kb probe diff` answers 0, 1 or 2 in under a second, never a traceback."""
    base = tmp_path_factory.mktemp("logs")
    da = _write(base / "a", [], "\n".join(a) + "\n")
    db = _write(base / "b", [], "\n".join(b) + "\n")
    start = time.perf_counter()
    assert main(["probe", "diff", *(["--json"] if as_json else []), str(da), str(db)]) in (0, 1, 2)
    assert time.perf_counter() - start < BOUND_S
