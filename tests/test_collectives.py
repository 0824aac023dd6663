"""The multi-GPU collectives sweep (verifiers/collectives) and what the KB makes of its run files.

On this CPU machine the sweep runs with the gloo backend (the same code path as NCCL on GPUs);
a verifier that needs 4 GPUs says so and runs nothing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import kb

ROOT = Path(__file__).resolve().parents[1]
RUN = "data/runs/h200-x4-dbb5341e/2026-11-27T175610Z.yaml"


def test_fingerprints_of_pieces_add_up_to_the_whole_and_see_one_bit() -> None:
    torch = pytest.importorskip("torch")
    from verifiers.collectives import bits

    x = torch.randn(4096) * 1000
    whole = bits.fingerprint(torch, x)
    pieces = [bits.fingerprint(torch, x[i * 1024:(i + 1) * 1024], i * 1024) for i in range(4)]
    assert bits.combine(pieces[::-1]) == whole  # any rank count, any order
    y = x.clone()
    y.view(torch.int32)[1234] ^= 1  # one last bit
    assert bits.fingerprint(torch, y) != whole
    assert bits.fingerprint(torch, x.to(torch.bfloat16)) != bits.fingerprint(torch, x.to(torch.bfloat16), 1)


def _launch(group_lines: list[list[dict]], world: int = 4) -> dict:
    lines = [dict(line, group=g) for g, chunk in enumerate(group_lines) for line in chunk]
    return {"world": world, "groups": len(group_lines), "exitcodes": [0] * world, "timed_out": False, "wall_s": 1.0,
            "lines": lines, "trace": [], "stderr": {}}


def test_a_refusal_in_the_first_group_stays_the_outcome_of_the_later_groups() -> None:
    """Group 0 sees NCCL refuse reduce_scatter; groups 1-2 do not try again. The setting's outcome
    is NCCL's refusal with its message (the runs of 2026-11-27 recorded 'error: not tried' instead)."""
    from verifiers.collectives import aggregate

    refused = "DistBackendError: ... no algorithm/protocol available for function ReduceScatter ... NCCL_ALGO was set to Tree."
    first = [{"case": "reduce_scatter:float32:1024", "rank": r, "error": refused} for r in range(4)] + [
        {"case": "reduce_scatter:float32:4096", "rank": r, "skipped": "not tried"} for r in range(4)]
    later = [{"case": c, "rank": r, "skipped": "not tried"} for c in ("reduce_scatter:float32:1024", "reduce_scatter:float32:4096")
             for r in range(4)]
    merged = aggregate.per_setting([_launch([first, later, later])])
    rows = [aggregate.case_row(c, merged[c], None, 4) for c in sorted(merged)]
    mode = aggregate.mode("Tree", (), {"NCCL_ALGO": "Tree"}, 4, rows, 1, 3, None)
    assert mode["outcome"] == "raised" and "no algorithm/protocol available" in mode["message"]
    assert {r["outcome"] for r in rows} == {"raised"}


def test_repeats_and_agreement_with_the_defaults_are_kept_apart() -> None:
    from verifiers.collectives import aggregate

    def ok(prints):
        return [{"case": "all_reduce:float32:1024", "rank": r, "prints": prints, "times": [0.001], "sample": [1.0]}
                for r in range(4)]

    default = aggregate.per_setting([_launch([ok(["a" * 32] * 2), ok(["a" * 32] * 2)])])
    tree = aggregate.per_setting([_launch([ok(["b" * 32] * 2)])])
    flaky = aggregate.per_setting([_launch([ok(["a" * 32, "c" * 32])])])
    case = "all_reduce:float32:1024"
    row = aggregate.case_row(case, tree[case], default[case], 4)
    assert row["distinct"] == 1 and row["same_as_default"] is False
    row = aggregate.case_row(case, flaky[case], default[case], 4)
    assert row["distinct"] == 2 and row["same_as_default"] is None  # not comparable: it does not repeat


def test_the_sweep_runs_on_cpu_with_gloo_and_writes_a_valid_run_file(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    from kb.verify import runfile
    from kb.yamlio import read

    cmd = [sys.executable, "-m", "verifiers.collectives", "--backend", "gloo", "--sizes", "1024", "--groups", "1",
           "--settings", "default,2 ranks: default", "--no-framework", "--no-jax", "--out", str(tmp_path)]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr[-2000:]
    (path,) = tmp_path.rglob("*.yaml")
    doc = read(path).data
    assert runfile.problems(doc, None) == []
    assert doc["kind"] == "collectives" and doc["environment"]["backend"] == "gloo"
    by_op = {(r["framework"], r["op"]): r for r in doc["results"]}
    all_reduce = by_op[("nccl", "nccl.ncclAllReduce")]
    modes = {m["mode"]: m for m in all_reduce["modes"]}
    assert modes["default"]["distinct"] == 1
    assert modes["2 ranks: default"]["same_as_default"] is False  # two local sums: another order
    assert ("pytorch", "torch.distributed.all_reduce") in by_op


def test_a_verifier_that_needs_four_gpus_is_skipped_here_with_the_reason() -> None:
    from kb.verify import multigpu
    from verifiers import discover

    found = discover.scan()
    assert found["nccl.collectives"].gpus == 4
    planned = {m["verifier"]: m for m in multigpu.plan(found, 0, {"pytorch": "2.11.0", "jax": "0.11.2"})}
    assert planned["nccl.collectives"]["reason"] == "skipped: needs 4 GPUs (this machine has 0)"
    assert not planned["jax.collectives"]["runs"]
    assert all(m["runs"] for m in multigpu.plan(found, 4, {"pytorch": "2.11.0", "jax": "0.11.2"}))
    proc = subprocess.run([sys.executable, "-m", "kb", "verify", "--dry-run", "--verifier", "nccl.collectives"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0
    assert "nccl.collectives: skipped: needs 4 GPUs" in proc.stderr


def test_the_sweep_itself_refuses_nccl_without_four_gpus() -> None:
    proc = subprocess.run([sys.executable, "-m", "verifiers.collectives", "--backend", "nccl"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    if "this machine has 4" in proc.stderr or proc.returncode == 0:
        pytest.skip("this machine has four GPUs")
    assert proc.returncode == 3 and "skipped: needs 4 GPUs" in proc.stderr


def test_framework_and_nccl_answers_agree_and_keep_run_to_run_apart_from_configuration() -> None:
    """The issue's two questions: torch.distributed.all_reduce 2.11 and nccl.ncclAllReduce 2.28.9 give
    one answer: not deterministic only through NVLS (fix NCCL_NO_NVLS), repeats run to run otherwise,
    and changes with the algorithm, protocol, channels and ranks (NCCL_PIN keeps them), as measured."""
    torch_answer = kb.status("torch.distributed.all_reduce", "2.11")
    nccl_answer = kb.status("nccl.ncclAllReduce", "2.28.9")
    for answer in (torch_answer, nccl_answer):
        assert answer.deterministic is False and answer.recipe == ("NCCL_NO_NVLS",)
        assert {"algorithm", "protocol", "channels", "ranks"} <= set(answer.varies_with)
        # "not deterministic" rests on the NVLS record (documented: NVLS is off on the machines that ran);
        # the runs of the reduction order that repeated are shown beside it
        assert answer.basis == "documented" and answer.verified
        order = [s for s in answer.sources if s.varies == "configuration"]
        assert len(order) == 1 and order[0].deterministic is True and order[0].solutions == ("NCCL_PIN",)
        nvls = [s for s in answer.sources if s.deterministic is False]
        assert nvls and all(s.varies == "run-to-run" for s in nvls)
    assert [s.caused_by for s in torch_answer.sources if s.varies == "configuration"] == [
        ("nccl.allreduce-order", "nccl.reduce-scatter-order")]
    runs = {e.file for e in nccl_answer.verified} | {e.file for e in torch_answer.verified}
    assert RUN in runs
    assert all(e.op in (None, "nccl.ncclAllReduce") for e in nccl_answer.verified)  # other collectives: own records


def test_reduce_scatter_and_copies_answer_from_their_own_records() -> None:
    rs = kb.status("nccl.ncclReduceScatter", "2.28.9")
    assert rs.deterministic is True and rs.varies_with == ("algorithm", "ranks", "version", "topology")
    gather = kb.status("torch.distributed.all_gather_into_tensor", "2.11")
    assert gather.deterministic is True and gather.varies_with == () and gather.basis == "verified"
    psum = kb.status("jax.lax.psum", "0.11.2")
    assert psum.deterministic is False and "ranks" in psum.varies_with


def test_varies_is_checked_by_the_schema() -> None:
    pytest.importorskip("pydantic")
    from pydantic import ValidationError

    from kb.schema import Range

    assert Range(versions=">=2.5", deterministic=True, varies="configuration", varies_with=["ranks"],
                 solutions=["NCCL_PIN"]).varies == "configuration"
    for bad in ({"varies": "configuration", "varies_with": ["ranks"]},  # not deterministic
                {"deterministic": True, "varies": "configuration"},  # says nothing about what
                {"deterministic": True, "varies_with": ["ranks"]},  # varies_with without configuration
                {"deterministic": True, "solutions": ["NCCL_PIN"]}):  # solutions for nothing
        with pytest.raises(ValidationError):
            Range(versions=">=2.5", **bad)


def test_a_configuration_record_is_contradicted_only_when_a_changed_setting_kept_the_bits() -> None:
    from kb.verify.merge import contradictions
    from shared import repo_lint

    catalog, _ = repo_lint()
    record = next(r for r in catalog.sources.values() if r.id == "nccl.allreduce-order")

    def result(same: bool | None, env: dict, default_distinct: int = 1) -> dict:
        mode = {"mode": "x", "solutions": [], "outcome": "ok", "distinct": 1, "ranks": 4, "env": env,
                "same_as_default": same}
        return {"source": record.id, "verifier": "nccl.collectives", "framework": "nccl", "version": "2.28.9",
                "device": "gpu", "n": 12, "ranks": 4, "cross_mode_distinct": 1, "op": "nccl.ncclAllReduce",
                "modes": [{"mode": "default", "solutions": [], "outcome": "ok", "distinct": default_distinct,
                           "ranks": 4, "env": {}, "same_as_default": True}, mode]}

    assert contradictions(record, result(False, {"NCCL_ALGO": "Tree"})) == []
    assert contradictions(record, result(True, {"NCCL_ALGO": "Tree"})) == [
        "the record says the result follows the configuration; every configuration gave the same bits"]
    assert contradictions(record, result(True, {"XLA_FLAGS": "x"})) == []  # no NCCL setting changed
    assert contradictions(record, result(False, {"NCCL_ALGO": "Tree"}, default_distinct=2)) == [
        "the record says deterministic; default mode gave 2 distinct of 12"]


def test_the_scan_lists_a_configuration_source_as_a_note(tmp_path: Path) -> None:
    import json

    (tmp_path / "train.py").write_text(
        "import torch\nimport torch.distributed as dist\nt = torch.ones(4, device='cuda')\ndist.all_reduce(t)\n")
    proc = subprocess.run([sys.executable, "-m", "kb", "scan", str(tmp_path), "--versions", "torch=2.11", "--format", "json"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    report = json.loads(proc.stdout)
    notes = [n for n in report["notes"] if n["record"] == "torch.distributed-reduction-order"]
    assert len(notes) == 1 and notes[0]["kind"] == "configuration" and "ranks" in notes[0]["note"]
    assert [f["record"] for f in report["findings"] if f["op"] == "torch.distributed.all_reduce"] == ["torch.distributed-nvls"]
