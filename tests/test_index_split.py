"""The compiled index in three modules: kb/_index.py (what every query reads), kb/_details.py
(evidence, parameters, record prose), loaded only when a query needs it, and kb/_seen.py (the
sweep cases of ops without a record), which a scan does not load. Answers are the same as from
the whole index, and a query without evidence never loads the details."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import kb
from kb import query

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def whole() -> dict:
    from kb.catalog import load
    from kb.compile import build_index

    return build_index(load(ROOT))


def test_split_and_join_give_back_the_index_key_order_included(whole: dict) -> None:
    core, details = query.split_index(whole)
    joined = query.join_index(core, details)
    assert joined == whole and list(joined) == list(whole)
    assert all(list(joined["sources"][sid]) == list(source) for sid, source in whole["sources"].items())
    assert not query.DETAIL_KEYS & set(core) and "evidence" in core


def test_the_generated_modules_join_into_the_index(whole: dict) -> None:
    query.reset()
    try:
        assert query.index() == whole
    finally:
        query.reset()


def _answers(ops: list[str], probes: list[str]) -> dict:
    out = {}
    for op in ops:
        for version in probes:
            for device in ("gpu", "cpu", "any"):
                try:
                    out[op, version, device] = kb.status(op, version, device=device)
                except (LookupError, ValueError) as exc:
                    out[op, version, device] = repr(exc)
    return out


def test_answers_from_the_two_modules_equal_answers_from_the_whole_index(whole: dict) -> None:
    runs = {run["version"] for evidence in whole["runs"].values() for run in evidence}
    static = {entry[1] for entries in whole["static"].values() for entry in entries}
    probes = sorted(runs | static | {"1.15", "2.0", "2.4", "2.11", "2.21.0rc1"})
    ops = sorted(set(whole["sources"]) | {n for table in whole["names"].values() for n in table})
    query.reset(whole)
    try:
        expected = _answers(ops, probes)
        query.reset()  # the generated modules, loaded lazily
        got = _answers(ops, probes)
    finally:
        query.reset()
    assert got == expected
    assert any(s.verified for s in got.values() if not isinstance(s, str))
    assert any(s.static for s in got.values() if not isinstance(s, str))


PROBE = """
import sys, kb
first = kb.status({first})
before = 'kb._details' in sys.modules
second = kb.status({second})
print(before, 'kb._details' in sys.modules, bool(first.verified or first.static), bool(second.verified or second.static))
"""


def test_only_a_query_with_evidence_loads_the_details(whole: dict) -> None:
    sid, runs = next((sid, runs) for sid, runs in whole["runs"].items() if runs)
    run = runs[0]
    code = PROBE.format(first="'tf.nn.bias_add', '1.15'",
                        second=f"{sid!r}, {run['version']!r}, framework={run['framework']!r}, device={run['device']!r}")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.split() == ["False", "True", "False", "True"]


def test_the_scan_index_is_the_whole_less_the_seen_module(whole: dict) -> None:
    query.reset()
    try:
        scan = query.scan_index()
        assert scan == {name: value for name, value in whole.items() if name not in query.SEEN_KEYS}
        assert query.state.detail(scan, "seen") == whole["seen"]  # loads kb/_seen.py on demand
        assert query.scan_index() is query.index()  # once whole, the whole
    finally:
        query.reset()


SCAN_PROBE = """
import sys
from kb.scan.run import scan
scan([{path!r}])
print('kb._details' in sys.modules, 'kb._seen' in sys.modules)
"""


def test_a_scan_reads_the_details_without_the_seen_module() -> None:
    code = SCAN_PROBE.format(path=str(ROOT / "tests/fixtures/scan"))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.split() == ["True", "False"]
