"""scripts/static_cross_check.py: each outcome on a fixture sweep file and fixture candidates."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "static_cross_check"
_spec = importlib.util.spec_from_file_location("static_cross_check", ROOT / "scripts" / "static_cross_check.py")
scc = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(scc)


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    out = tmp_path_factory.mktemp("scc") / "report.json"
    assert scc.main(["--static", str(FIXTURES / "candidates.yaml"), "--sweep", str(FIXTURES), "--out", str(out)]) == 0
    return json.loads(out.read_text())


def _by_kernel(report):
    return {r["kernel"]: r for r in report["results"]}


@pytest.mark.parametrize(
    ("kernel", "outcome", "agrees"),
    [
        ("k-silent", "confirmed", True),          # unguarded and silent: a source the switch misses
        ("k-fixed-alias", "confirmed", True),     # Tensor.index_add_ = index_add; index_select counts in backward only
        ("k-raises", "confirmed", True),          # raises: the guard seen; the forward case does not count
        ("k-same", "refuted", None),              # every counted case same; skipped ignored
        ("k-absent", "not-covered", None),        # no case of the op
        ("k-errors-only", "not-covered", None),   # error and skipped cases are no evidence
        ("k-when", "refuted", None),              # mode='nearest' and variant 'bicubic' contradict `when`
        ("k-wrong-pass", "not-covered", None),    # a forward case says nothing of a backward kernel
        ("k-guarded-silent", "confirmed", False),  # the static guard is contradicted
        ("k-require", "not-covered", None),       # a scatter case without a recorded reduce does not count
    ],
)
def test_each_outcome(report, kernel, outcome, agrees):
    r = _by_kernel(report)[kernel]
    assert r["outcome"] == outcome
    assert r["agrees_with_guard"] is agrees


def test_counts(report):
    c = report["counts"]
    assert c["kernels"] == 10
    assert c["candidates"] == {"total": 5, "confirmed": 1, "refuted": 1, "not-covered": 3}
    assert c["guarded"] == {"total": 5, "confirmed": 3, "refuted": 1, "not-covered": 1}
    assert c["disagree_with_guard"] == 1
    assert report["sweep_files"] == ["tests/fixtures/static_cross_check/env-a/2026-11-25T000000Z-pytorch-eager.json"]
    assert _by_kernel(report)["k-silent"]["envs"] == ["env-a"]


def test_op_key_spellings():
    assert scc.op_key("torch.Tensor.index_add_") == scc.op_key("torch.index_add")
    assert scc.op_key("torch.Tensor.__getitem__") == "torch.__getitem__"
    assert scc.op_key("torch.nn.functional.pad") == "torch.nn.functional.pad"


def test_unknown_class_is_refused(tmp_path):
    bad = tmp_path / "x-pytorch-eager.json"
    bad.write_text(json.dumps({"cases": [{"op": "torch.cumprod", "class": "maybe"}]}))
    with pytest.raises(ValueError, match="unknown class"):
        scc.load_cases([str(bad)])


def test_the_curated_file_loads():
    entries = scc.load_static(str(ROOT / "data" / "static" / "pytorch-cuda-atomics.yaml"))
    assert len(entries) >= 40
    assert any(not e["guarded"] for e in entries)
    for e in entries:
        assert e["mechanism"] in {"atomic-add", "atomic-mul", "parallel-scan", "cub-reduce"}
        assert e["guarded"] is (e["guard"] is not None), e["kernel"]


def test_tensor_facts_compare_by_dtype_kind():
    when = {"weights": ["float"], "input.dtype": ["float"]}
    assert not scc.contradicts(when, {"weights": {"tensor": [8], "dtype": "float32"}, "input.dtype": "bfloat16"})
    assert scc.contradicts(when, {"weights": {"tensor": [8], "dtype": "int64"}})
    assert scc.contradicts({"weights": [None]}, {"weights": {"tensor": [8], "dtype": "float32"}})
    assert not scc.contradicts({"weights": [None]}, {"weights": None})


def test_backward_ops_count_in_backward_only(report):
    r = _by_kernel(report)["k-fixed-alias"]
    assert r["classes"] == {"fixed": 1, "raises": 1}   # index_add forward + index_select backward
    assert r["cases"] == 2
