"""Per-call verification: a case is one op called one way, and a record's condition decides what
each case should show (kb/verify/cases.py, merge, the child that measures every case of a mode)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from kb.verify.cases import applies, holds, label
from kb.verify.runner import run_mode

ROOT = Path(__file__).resolve().parents[1]
NLL_OPS = ["torch.nn.functional.nll_loss"]


def test_holds_is_and_of_keys_or_of_values_and_unknown_when_a_fact_is_missing() -> None:
    when: dict[str, list] = {"mode": ["bilinear", "bicubic"], "antialias": [False]}
    assert holds(when, {"mode": "bicubic", "antialias": False}) is True
    assert holds(when, {"mode": "nearest", "antialias": False}) is False
    assert holds(when, {"mode": "bilinear"}) is None
    assert holds({"accumulate": [True]}, {"accumulate": 1}) is False  # True and 1 are not the same literal
    assert holds(None, {}) is True


def test_applies_narrows_by_op_and_range_and_leaves_unnamed_ops_unconditional() -> None:
    calls = [{"ops": NLL_OPS, "when": {"input.ndim": [3, 4], "reduction": ["mean", "sum"]}}]
    assert applies(calls, None, NLL_OPS[0], {"input.ndim": 4, "reduction": "sum"}) is True
    assert applies(calls, None, NLL_OPS[0], {"input.ndim": 2, "reduction": "sum"}) is False
    assert applies(calls, None, NLL_OPS[0], {"reduction": "sum"}) is None
    assert applies(calls, None, "torch.nn.NLLLoss", {"input.ndim": 2}) is True  # no pattern names it
    assert applies(calls, {"weights": ["float"]}, NLL_OPS[0], {"input.ndim": 4, "reduction": "mean"}) is None
    assert applies([], {"weights": ["float", "int"]}, "torch.bincount", {"weights": None}) is False
    assert applies(calls, None, None, None) is None  # a result of no particular call: the record's claim
    assert label("torch.bincount", {"weights": None}) == "torch.bincount(weights=None)"


def _record(record_id: str):
    from shared import repo_lint

    catalog, _ = repo_lint()
    return next(r for r in catalog.sources.values() if r.id == record_id), list(catalog.sources.values())


def _result(op: str, call: dict, default: int, det: dict, version: str = "2.11.0") -> dict:
    return {"source": "torch.nll-loss", "verifier": "torch.nll_loss", "framework": "pytorch", "version": version,
            "device": "gpu", "n": 5, "op": op, "call": call,
            "modes": [{"mode": "default", "solutions": [], "outcome": "ok", "distinct": default},
                      {"mode": "PT_DET", "solutions": ["PT_DET"], **det}]}


RAISED = {"outcome": "raised", "distinct": None, "message": "RuntimeError: no deterministic implementation"}
CLEAN = {"outcome": "ok", "distinct": 1}


def test_a_complementary_case_expects_nothing_to_differ_and_nothing_to_raise() -> None:
    from kb.verify.merge import contradictions

    record, every = _record("torch.nll-loss")
    spatial = {"input.ndim": 4, "reduction": "mean"}
    classify = {"input.ndim": 2, "reduction": "mean"}
    assert contradictions(record, _result(NLL_OPS[0], spatial, 5, RAISED), every) == []
    assert contradictions(record, _result(NLL_OPS[0], spatial, 5, CLEAN), every) == [
        "the record says RuntimeError under the solution; PT_DET did not raise"]
    assert contradictions(record, _result(NLL_OPS[0], classify, 1, CLEAN), every) == []
    assert contradictions(record, _result(NLL_OPS[0], classify, 1, RAISED), every) == [
        "the record's condition excludes torch.nn.functional.nll_loss(input.ndim=2, reduction='mean'), "
        "yet PT_DET raised: RuntimeError: no deterministic implementation"]
    assert contradictions(record, _result(NLL_OPS[0], classify, 3, CLEAN), every) == [
        "the record's condition excludes torch.nn.functional.nll_loss(input.ndim=2, reduction='mean'), "
        "yet default mode gave 3 distinct of 5"]


def test_a_call_another_record_claims_is_no_evidence_against_this_one() -> None:
    """Antialiased bilinear is outside the plain-bilinear record's condition but inside the
    antialias record's (2.13): its raise under the switch is no contradiction of either."""
    from kb.verify.merge import contradictions

    record, every = _record("torch.interpolate-bilinear-backward")
    aa = {"mode": "bilinear", "antialias": True, "input.ndim": 4}
    result = _result("torch.nn.functional.interpolate", aa, 5, RAISED, version="2.13.0")
    assert contradictions(record, result, every) == []
    assert contradictions(record, result, [record]) != []  # without the other record it would be flagged


def test_one_child_measures_every_case_and_a_raising_case_stops_none_after_it() -> None:
    from verifiers import discover

    cases = discover.scan()["synthetic.cases"].cases
    assert [c.call["mode"] for c in cases] == ["threads", "fixed", "raise", "fixed"]
    out = run_mode("synthetic.cases", "verifiers.synthetic", "synthetic", (), (), n=5, device="cpu", scale=1.0,
                   timeout=60.0, root=ROOT, cases=cases)
    per = out["cases"]
    assert [c["outcome"] for c in per] == ["ok", "ok", "raised", "ok"]
    assert per[0]["distinct"] > 1 and per[1]["distinct"] == 1 and per[3]["distinct"] == 1
    assert "synthetic case" in per[2]["message"]
    fixed = run_mode("synthetic.cases", "verifiers.synthetic", "synthetic", (), ("SYN_FIX",), n=5, device="cpu",
                     scale=1.0, timeout=60.0, root=ROOT, cases=cases[:1])
    assert fixed["cases"][0]["distinct"] == 1


def test_a_crashed_child_is_an_error_for_each_of_its_cases() -> None:
    from kb.verify.runner import per_case

    crashed = {"outcome": "error", "message": "crashed: killed by signal SIGABRT"}
    assert per_case(crashed, 3) == [crashed] * 3
    partial = {"outcome": "ok", "cases": [{"outcome": "ok", "distinct": 1}]}
    assert [c["outcome"] for c in per_case(partial, 2)] == ["ok", "error"]


def test_run_file_results_name_their_case_and_evidence_carries_op_and_call(tmp_path, capsys) -> None:
    from kb.cli import main

    out = tmp_path / "runs"
    assert main(["verify", "--verifier", "synthetic.cases", "--device", "cpu", "-n", "3", "--out", str(out)]) == 0
    (path,) = out.rglob("*.yaml")
    doc = yaml.safe_load(path.read_text())
    results = [r for r in doc["results"] if r["verifier"] == "synthetic.cases"]
    assert [(r["op"], r["call"]["mode"]) for r in results] == [("synthetic.op", m) for m in ("threads", "fixed", "raise", "fixed")]
    assert [len(r["modes"]) for r in results] == [2, 2, 2, 2]  # default and SYN_FIX, each in one child for all cases
    assert main(["verify", "--verifier", "synthetic.cases", "--dry-run"]) == 0
    err = capsys.readouterr()
    assert "case synthetic.op(mode='raise')" in err.out and "4 case(s)" in err.err


@pytest.mark.parametrize("record_id", [
    "torch.nll-loss", "torch.interpolate-bilinear-backward", "torch.bincount", "torch.histc", "torch.cumsum",
    "torch.scatter-src-tensor", "torch.scatter-reduce-sum-mean", "torch.adaptive-avg-pool-backward", "jax.scatter-add",
])
def test_every_op_of_a_conditional_record_has_a_case_and_a_complementary_call(record_id: str) -> None:
    """The cases cover each op the record lists (or the record's verifier names why not) and at
    least one call the record's condition excludes."""
    from kb.versions import range_at
    from verifiers import discover

    record, _ = _record(record_id)
    cases = discover.scan()[record.verify.verifier].cases
    ops = {c.op for c in cases}
    assert set(record.ops) <= ops
    item = range_at(record.status, {"pytorch": "2.11.0", "jax": "0.11.2"}[record.framework])
    assert item is not None, record_id
    assert any(applies(record.calls, item.when, c.op, c.call) is False for c in cases)
    assert any(applies(record.calls, item.when, c.op, c.call) is True for c in cases)
