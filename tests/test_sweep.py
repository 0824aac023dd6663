"""The operator sweep (kb verify --sweep): classification, the evidence file, and a CPU run that
proves the harness with planted operators (docs/sweep.md)."""

from __future__ import annotations

import datetime as dt
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from kb.verify import sweep, sweepfile

ROOT = Path(__file__).resolve().parents[1]


def mode(distinct=1, raised=None, runs=4):
    return {"runs": runs, "distinct": None if raised else distinct, "max_abs": 0.0, "median_ms": 1.0, "raised": raised}


REFUSAL = "RuntimeError: cumsum_cuda_kernel does not have a deterministic implementation, but you set 'torch.use_deterministic_algorithms(True)'"


@pytest.mark.parametrize(("modes", "expected"), [
    ({"default": mode(1), "switch": mode(1)}, "same"),
    ({"default": mode(3), "switch": mode(1)}, "fixed"),
    ({"default": mode(3), "switch": mode(2)}, "silent"),
    ({"default": mode(1), "switch": mode(2)}, "silent"),
    ({"default": mode(2), "switch": mode(raised=REFUSAL)}, "raises"),
    # a raise under the switch that does not name determinism says nothing about the op
    ({"default": mode(1), "switch": mode(raised="torch.OutOfMemoryError: CUDA out of memory")}, "error"),
    # the op did not run by default: never evidence
    ({"default": mode(raised="RuntimeError: shape mismatch"), "switch": mode(raised=REFUSAL)}, "error"),
    ({"default": mode(1)}, "error"),
])
def test_classify(modes, expected):
    assert sweep.classify(modes) == expected


def test_classify_jax_switch_and_error_wins():
    modes = {"default": mode(4), "deterministic_ops": mode(1), "exclude_nondeterministic_ops": mode(1)}
    assert sweep.classify(modes, "deterministic_ops") == "fixed"
    assert sweep.classify(modes, "deterministic_ops", error="the worker died") == "error"


def _doc(cases, env_id="cpu-x86-64-00000000"):
    counts = {k: 0 for k in sweep.CLASSES}
    for c in cases:
        counts[c["class"]] += 1
    return {"kind": "sweep", "suite": "pytorch-eager", "framework": "pytorch", "environment": {"env_id": env_id},
            "started": "2026-11-25T00:00:00Z", "wall_s": 1.0, "runs_per_mode": 4, "modes": sweep.TORCH_MODES,
            "counts": counts, "cases": cases}


def _case(cls="same"):
    return {"op": "torch.cumsum", "variant": "", "case": "cumsum||float32|forward", "pass": "forward", "dtype": "float32",
            "call": {"dim": 0, "input.ndim": 1, "input.dtype": "float32"}, "numel": 4_000_000,
            "modes": {"default": mode(1), "switch": mode(1)}, "class": cls, "error": None}


def test_evidence_round_trip_and_write_once(tmp_path):
    created = dt.datetime(2026, 11, 25, 23, 15, 14, tzinfo=dt.UTC)
    out = tmp_path / "data" / "sweeps"
    path = sweep.write_evidence(out, _doc([_case()]), created)
    assert path == out / "cpu-x86-64-00000000" / "2026-11-25T231514Z-pytorch-eager.json"
    assert sweep.read_evidence(path)["cases"][0]["call"]["input.ndim"] == 1
    with pytest.raises(FileExistsError):
        sweep.write_evidence(out, _doc([_case()]), created)


@pytest.mark.parametrize(("change", "words"), [
    (lambda d: d.pop("counts"), "missing top-level"),
    (lambda d: d["cases"][0].pop("call"), "lacks call"),
    (lambda d: d["cases"][0].update({"class": "flaky"}), "unknown class"),
    (lambda d: d["counts"].update({"same": 2}), "do not match"),
    (lambda d: d.update({"kind": "verify"}), "not a sweep"),
])
def test_read_evidence_refuses_a_damaged_file(tmp_path, change, words):
    doc = _doc([_case()])
    change(doc)
    path = tmp_path / "data" / "sweeps" / "x.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match=words):
        sweep.read_evidence(path)


def test_committed_evidence_files_read_clean():
    """Every evidence file the GPU wrote reads within bounds, with the fields the KB side uses."""
    files = sorted(p for p in (ROOT / "data" / "sweeps").glob("*/*.json")
                   if not p.name.endswith(sweepfile.CPU_SWEEP_SUFFIXES))  # the CPU sweeps' own format
    for path in files:
        doc = sweep.read_evidence(path)
        assert doc["environment"]["env_id"] == path.parent.name
        assert path.name.endswith(f"-{doc['suite']}.json")


def test_every_committed_sweep_file_speaks_the_one_vocabulary():
    """Every sweep file under data/sweeps/, GPU and CPU, read through the one mapping of classes:
    the CPU files written before it keep their own words, as written, and each maps to one class."""
    files = sorted((ROOT / "data" / "sweeps").glob("*/*.json"))
    cpu = [p for p in files if p.name.endswith(sweepfile.CPU_SWEEP_SUFFIXES)]
    assert cpu and len(cpu) < len(files)
    seen: dict[str, set[str]] = {}
    for path in files:
        doc = json.loads(path.read_text(encoding="utf-8"))
        for case in doc["cases"]:
            klass = sweepfile.cpu_class(case["class"], doc["suite"]) if path in cpu else case["class"]
            assert klass in sweepfile.CLASSES, (path.name, case["class"])
            seen.setdefault(doc["suite"], set()).add(klass)
    assert "silent" in seen["tensorflow-cpu"] and "differs" in seen["keras-jax"]  # the switch decides the word
    assert "sequence" in seen["tensorflow-cpu"] and "same" in seen["keras"]
    with pytest.raises(ValueError, match="unknown class 'identicall'"):
        sweepfile.cpu_class("identicall", "keras")


def test_driver_imports_no_framework():
    code = "import sys, kb.verify.sweep; print(sorted(m for m in ('torch', 'jax', 'tensorflow') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "[]"


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="PyTorch is not installed")
def test_cpu_sweep_finds_the_planted_operators(tmp_path):
    """Planted units (verifiers/sweep/torch_worker.py PLANTED) prove each class end to end on the
    CPU: a crash and a hang are `error` and the workers that replace them go on; one real op_db
    entry runs through the same input building as on the GPU."""
    only = tuple(f"planted:{n}" for n in ("silent", "fixed", "raises", "same", "crash", "hang")) + ("abs",)
    doc, path = sweep.run_sweep("pytorch-eager", ROOT, device="cpu", runs=2, workers=2, unit_timeout=25.0,
                                start_timeout=240.0, only=only, planted=True, out_dir=tmp_path / "data" / "sweeps",
                                environment={"env_id": "cpu-test-00000000"}, verbose=False)
    by_op: dict[str, list[dict]] = {}
    for case in doc["cases"]:
        by_op.setdefault(case["op"], []).append(case)
    assert [c["class"] for c in by_op["planted.silent"]] == ["silent"]
    assert [c["class"] for c in by_op["planted.fixed"]] == ["fixed"]
    assert [c["class"] for c in by_op["planted.raises"]] == ["raises"]
    assert "deterministic implementation" in by_op["planted.raises"][0]["modes"]["switch"]["raised"]
    assert [c["class"] for c in by_op["planted.same"]] == ["same"]
    assert "died" in by_op["planted:crash"][0]["error"]
    assert "timed out" in by_op["planted:hang"][0]["error"]
    abs_cases = by_op["torch.abs"]
    assert {c["pass"] for c in abs_cases} == {"forward", "backward"}
    assert all(c["class"] == "same" and c["numel"] >= 1_000_000 for c in abs_cases)
    assert path is not None and sweep.read_evidence(path)["counts"]["silent"] == 1
