"""Probe logs are users' training output: names are printed without their control
characters, a log over the bound is a clear exit 2, and any line is a record or exit 2."""

from __future__ import annotations

import json
import os
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


# --- issue 31 item 3 and issue 33 H5, M3: exit codes and malformed logs ---------------------


def _diff(capsys, a: Path, b: Path, *extra: str) -> tuple[int, str]:
    start = time.perf_counter()
    code = main(["probe", "diff", *extra, str(a), str(b)])
    assert time.perf_counter() - start < BOUND_S
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, err


def test_exit_0_when_identical(tmp_path: Path, capsys) -> None:
    a = _write(tmp_path / "a", [_rec(0, "x", "aa"), _rec(1, "x", "ab")])
    b = _write(tmp_path / "b", [_rec(0, "x", "aa"), _rec(1, "x", "ab")])
    assert _diff(capsys, a, b)[0] == 0


def test_exit_1_when_runs_differ(tmp_path: Path, capsys) -> None:
    a = _write(tmp_path / "a", [_rec(0, "x", "aa"), _rec(1, "x", "ab")])
    b = _write(tmp_path / "b", [_rec(0, "x", "aa"), _rec(1, "x", "XX")])
    assert _diff(capsys, a, b)[0] == 1


@pytest.mark.parametrize("empty", ["a", "b", "both"])
@pytest.mark.parametrize("text", ["", "\n\n  \n"])
def test_exit_2_when_a_run_recorded_nothing(tmp_path: Path, capsys, empty: str, text: str) -> None:
    full = [_rec(0, "x", "aa")]
    a = _write(tmp_path / "a", [] if empty in ("a", "both") else full, text if empty in ("a", "both") else None)
    b = _write(tmp_path / "b", [] if empty in ("b", "both") else full, text if empty in ("b", "both") else None)
    code, err = _diff(capsys, a, b)
    assert code == EXIT_USAGE and "recorded nothing" in err and "probes.jsonl" in err


@pytest.mark.parametrize("records,words", [
    ([dict(_rec(0, "x", "aa"), step=1e400)], "step"),
    ([dict(_rec(0, "x", "aa"), step=1.5)], "step"),
    ([dict(_rec(0, "x", "aa"), step=True)], "step"),
    ([dict(_rec(0, "x", "aa"), seq="x"), _rec(0, "y", "bb")], "seq"),
    ([dict(_rec(0, "x", "aa"), seq=[1])], "seq"),
    ([dict(_rec(0, "x", "aa"), stats=[1, 2])], "stats"),
    ([dict(_rec(0, "x", "aa"), stats={"min": "a"})], "stats"),
    ([dict(_rec(0, "x", "aa"), shape="2")], "shape"),
    ([dict(_rec(0, "x", "aa"), op=7)], "op"),
])
def test_malformed_probe_record_is_exit_2_naming_the_line(tmp_path: Path, capsys, records: list, words: str) -> None:
    a = _write(tmp_path / "a", records)
    b = _write(tmp_path / "b", [dict(r, hash="zz") for r in records])
    code, err = _diff(capsys, a, b)
    assert code == EXIT_USAGE and "probes.jsonl:1" in err and words in err


def test_deeply_nested_probe_line_is_exit_2(tmp_path: Path, capsys) -> None:
    a = _write(tmp_path / "a", [], '{"step": 0, "x": ' + "[" * 100_000 + "]" * 100_000 + "}\n")
    code, err = _diff(capsys, a, a)
    assert code == EXIT_USAGE and "probes.jsonl:1" in err and "nested" in err


def _with(d: Path, name: str, text: str) -> Path:
    (d / name).write_text(text, encoding="utf-8")
    return d


@pytest.mark.parametrize("name,text,words", [
    ("meta.json", '{"frameworks": ["pytorch"]}', "frameworks"),
    ("meta.json", '{"frameworks": {"pytorch": 2}}', "frameworks"),
    ("meta.json", '{"devices": "gpu"}', "devices"),
    ("meta.json", "[1, 2]", "object"),
    ("places.json", '{"0": "x"}', "places.json"),
    ("places.json", '{"x": {"calls": "x"}}', "calls"),
    ("places.json", '{"x": {"calls": [{"call": "x", "op": "torch.add"}]}}', "call"),
    ("places.json", '{"x": {"calls": [{"op": 5}]}}', "op"),
    ("places.json", '{"x": {"ops": "torch.add"}}', "ops"),
    ("places.json", '{"x": {"children": {"y": "z"}}}', "children"),
    ("places.json", '{"x": {"call": "x", "type": "torch.nn.Linear"}}', "call"),
    ("places.json", '{"x": {"type": 3}}', "type"),
    ("places.json", "[" * 100_000 + "]" * 100_000, "nested"),
    ("places.json", "{not json", "JSON"),
])
def test_malformed_meta_or_places_is_exit_2_naming_the_file(tmp_path: Path, capsys, name: str, text: str,
                                                            words: str) -> None:
    a = _with(_write(tmp_path / "a", [_rec(0, "x", "aa")]), name, text)
    b = _with(_write(tmp_path / "b", [_rec(0, "x", "bb")]), name, text)
    code, err = _diff(capsys, a, b)
    assert code == EXIT_USAGE and name in err and words in err


def test_places_over_the_size_bound_is_refused_before_reading(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.setattr(diff, "MAX_SIDE_BYTES", 1000)
    a = _with(_write(tmp_path / "a", [_rec(0, "x", "aa")]), "places.json", '{"x": {"type": "' + "t" * 2000 + '"}}')
    code, err = _diff(capsys, a, a)
    assert code == EXIT_USAGE and "places.json" in err and "at most 1,000" in err


@pytest.mark.parametrize("kind", ["folder", "fifo", "dev-zero", "outside"])
def test_probes_jsonl_that_is_not_a_regular_file_is_said(tmp_path: Path, capsys, kind: str) -> None:
    a = _write(tmp_path / "a", [_rec(0, "x", "aa")])
    b = tmp_path / "b"
    b.mkdir()
    (b / "meta.json").write_text("{}")
    target = b / "probes.jsonl"
    if kind == "folder":
        target.mkdir()
    elif kind == "fifo":
        os.mkfifo(target)
    elif kind == "dev-zero":
        os.symlink("/dev/zero", target)
    else:
        os.symlink(a / "probes.jsonl", target)
    code, err = _diff(capsys, a, b)
    assert code == EXIT_USAGE and "probes.jsonl" in err and "missing" not in err
    assert ("outside" in err) if kind in ("outside", "dev-zero") else ("not a regular file" in err)


def test_binary_and_invalid_utf8_lines_are_exit_2(tmp_path: Path, capsys) -> None:
    a = tmp_path / "a"
    _write(a, [_rec(0, "x", "aa")])
    with open(a / "probes.jsonl", "ab") as handle:
        handle.write(b"\x00\xff\xfe\x1b[2J garbage\n")
    code, err = _diff(capsys, a, a)
    assert code == EXIT_USAGE and "probes.jsonl:2" in err and "\x1b" not in err


def test_a_dying_script_that_prints_binary_does_not_reach_the_terminal_raw(tmp_path: Path, capsys) -> None:
    script = tmp_path / "die.py"
    script.write_text("import os, sys\nos.write(2, b'boom\\x1b[2J\\x1b]0;owned\\x07\\xff\\xfe\\n')\nsys.exit(3)\n")
    import sys as _sys

    code = main(["probe", "run", "--out", str(tmp_path / "out"), "--", _sys.executable, str(script)])
    _, err = capsys.readouterr()
    assert code == EXIT_USAGE and "exited with 3" in err
    assert "\x1b" not in err and "\x07" not in err and "boom" in err


def test_a_script_killed_by_a_signal_is_exit_2(tmp_path: Path, capsys) -> None:
    script = tmp_path / "kill.py"
    script.write_text("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n")
    import sys as _sys

    code = main(["probe", "run", "--out", str(tmp_path / "out"), "--", _sys.executable, str(script)])
    _, err = capsys.readouterr()
    assert code == EXIT_USAGE and "signal" in err


# --- issue 43 (round 4) -------------------------------------------------------------------------

REPO = Path(__file__).resolve().parents[1]

ENDS_WITH_OS_EXIT = """\
import os
from kb import probe
run = int(os.environ["KB_PROBE_RUN"]); x = 1.0
for i in range(4):
    probe.step(i); x = x * 1.5 + (1e-9 if (i == 3 and run == 2) else 0.0); probe.monitor(x, "x")
{end}
"""


def _probe_run(tmp_path: Path, monkeypatch, capsys, script: str, *extra: str) -> tuple[int, str, str]:
    import sys as _sys

    monkeypatch.setenv("PYTHONPATH", str(REPO))  # the children import this checkout's kb
    path = tmp_path / "train.py"
    path.write_text(script)
    code = main(["probe", "run", "--out", str(tmp_path / "out"), *extra, "--", _sys.executable, str(path)])
    out, err = capsys.readouterr()
    return code, out, err


def test_r4_m4_a_log_never_closed_is_not_called_identical(tmp_path: Path, monkeypatch, capsys) -> None:
    """A script ending in os._exit(0) lost its last step, and two runs that differ there were
    "identical", exit 0."""
    code, out, err = _probe_run(tmp_path, monkeypatch, capsys, ENDS_WITH_OS_EXIT.format(end="os._exit(0)"))
    assert code == EXIT_USAGE, out + err
    assert not any(line.startswith("identical") for line in out.splitlines())
    assert "not called identical" in out and "never closed" in out
    meta = json.loads((tmp_path / "out" / "run1" / "meta.json").read_text())
    assert meta["closed"] is False
    code, out, err = _probe_run(tmp_path, monkeypatch, capsys, ENDS_WITH_OS_EXIT.format(end="os._exit(0)"), "--json")
    report = json.loads(out)
    assert code == EXIT_USAGE and report["identical"] is None and len(report["incomplete"]) == 2


def test_r4_m4_a_closed_log_still_finds_the_last_step(tmp_path: Path, monkeypatch, capsys) -> None:
    code, out, err = _probe_run(tmp_path, monkeypatch, capsys, ENDS_WITH_OS_EXIT.format(end="pass"))
    assert code == 1 and "runs differ" in out
    assert json.loads((tmp_path / "out" / "run1" / "meta.json").read_text())["closed"] is True


def test_r4_m4_format_2_logs_without_the_mark_still_compare(tmp_path: Path, capsys) -> None:
    a = _write(tmp_path / "a", [_rec(0, "x", "aa")])
    (a / "meta.json").write_text(json.dumps({"format": 2}))
    assert _diff(capsys, a, a)[0] == 0
    (a / "meta.json").write_text(json.dumps({"format": 3, "closed": "yes"}))
    code, err = _diff(capsys, a, a)
    assert code == EXIT_USAGE and "'closed' should be true or false" in err


NAN_SCRIPT = """\
import os
from kb import probe
run = int(os.environ["KB_PROBE_RUN"])
for i in range(2):
    probe.step(i)
    probe.monitor(float("nan") if (run == 2 and i == 1) else 1.0, "loss")
    probe.monitor(float("inf"), "scale")
"""


def test_r4_m5_probe_json_is_strict_json_with_nan_and_inf(tmp_path: Path, monkeypatch, capsys) -> None:
    """`kb probe diff --json` wrote NaN/Infinity tokens (JavaScript, Go and Rust refuse them)."""
    code, out, err = _probe_run(tmp_path, monkeypatch, capsys, NAN_SCRIPT, "--json")
    assert code == 1, err

    def refuse(token: str):
        raise ValueError(f"not JSON: {token}")

    report = json.loads(out, parse_constant=refuse)
    assert report["first"]["stats_b"]["min"] == "nan"
    for name in ("probes.jsonl", "meta.json", "places.json"):
        for run in ("run1", "run2"):
            path = tmp_path / "out" / run / name
            if path.exists():
                for line in path.read_text().splitlines() if name.endswith("jsonl") else [path.read_text()]:
                    json.loads(line, parse_constant=refuse)
    assert '"inf"' in (tmp_path / "out" / "run1" / "probes.jsonl").read_text()
    code = main(["probe", "diff", "--json", str(tmp_path / "out" / "run1"), str(tmp_path / "out" / "run2")])
    assert code == 1 and json.loads(capsys.readouterr().out, parse_constant=refuse)["identical"] is False


def test_r4_l8_a_failed_run_reads_only_the_end_of_its_stderr(tmp_path: Path, monkeypatch, capsys) -> None:
    """kb read all of a failed run's stderr.txt (300 MB) to print its last 2,000 characters."""
    import tracemalloc

    script = "import os, sys\nfor _ in range(40):\n    os.write(2, b'x' * 2**20)\nos.write(2, b'THE-END')\nsys.exit(1)\n"
    tracemalloc.start()
    try:
        code, out, err = _probe_run(tmp_path, monkeypatch, capsys, script)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert code == EXIT_USAGE and "THE-END" in err and "exited with 1" in err
    assert peak < 8 * 2**20, peak  # the 40 MB file was read whole before


def test_r4_l9_a_log_swapped_for_a_link_is_named_not_called_empty(tmp_path: Path, monkeypatch, capsys) -> None:
    script = ("import os\nfrom kb import probe\nprobe.step(0)\nprobe.monitor(1.0, 'x')\nprobe.recorder.close()\n"
              "d = os.environ['KB_PROBE_DIR']\nos.remove(os.path.join(d, 'probes.jsonl'))\n"
              "os.symlink('/dev/zero', os.path.join(d, 'probes.jsonl'))\n")
    code, out, err = _probe_run(tmp_path, monkeypatch, capsys, script)
    assert code == EXIT_USAGE and "recorded no probe" not in err
    assert "probes.jsonl" in err and ("outside" in err or "not a regular file" in err)


def test_r4_l10_the_recorder_stops_at_what_the_diff_reads(tmp_path: Path, monkeypatch, capsys) -> None:
    """probe.monitor() of a 3,000,000-float list wrote 6,000,000 records (1.23 GB) that the diff refuses."""
    from kb.probe import recorder

    monkeypatch.setattr(recorder, "MAX_RECORDS", 50)
    recorder.configure(tmp_path / "log")
    try:
        from kb import probe

        probe.step(0)
        probe.monitor([float(i) for i in range(200)], "big")
    finally:
        recorder.close()
        recorder.configure(None)
    lines = (tmp_path / "log" / "probes.jsonl").read_text().splitlines()
    meta = json.loads((tmp_path / "log" / "meta.json").read_text())
    assert len(lines) == 50 and meta["truncated"] is True and meta["closed"] is True
    assert any(entry["where"] == "the log" for entry in meta["not_recorded"])
    code, err = _diff(capsys, tmp_path / "log", tmp_path / "log")
    assert code == EXIT_USAGE  # a truncated log is never called identical


def test_r4_l11_out_cleanup_never_removes_a_folder_under_a_log_name(tmp_path: Path, monkeypatch, capsys) -> None:
    kept = tmp_path / "out" / "run1" / "stdout.txt" / "thesis.tex"
    kept.parent.mkdir(parents=True)
    kept.write_text("years of work")
    code, out, err = _probe_run(tmp_path, monkeypatch, capsys, ENDS_WITH_OS_EXIT.format(end="pass"))
    assert code == EXIT_USAGE and "not probe logs" in err
    assert kept.read_text() == "years of work"
