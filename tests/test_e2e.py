"""`kb verify --e2e` for TensorFlow and JAX on CPU: a small model trained 2x without and 2x with
the recipe kb.status gives for its ops, each training in a fresh process.

What could fail: the recipe is the union of kb.status answers (not a hard-coded list), every
code in it is accounted for in the run file, and under the recipe the two CPU runs end with
identical weights and no churn (checked on this 2-core CPU before being asserted). The
default pair is only checked for shape: whether it differs on CPU is data, not a contract.
A child that fails, a code nobody can apply, or a timeout is an error in its pair, never a crash.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
SCALE = "0.05"  # 256 training samples, 128 test: a few seconds per training on 2 cores


def _run(tmp_path: Path, framework: str, capsys) -> tuple[int, dict, dict]:
    from kb.cli import main

    out = tmp_path / "runs"
    code = main(["--root", str(ROOT), "verify", "--e2e", "--framework", framework, "--device", "cpu",
                 "--scale", SCALE, "--timeout", "120", "--out", str(out)])
    printed = json.loads(capsys.readouterr().out)
    (path,) = list(out.rglob("*.yaml"))
    assert printed["file"] == str(path)
    return code, printed, yaml.safe_load(path.read_text())


def _expected_recipe(framework: str, version: str) -> list[str]:
    import kb
    from kb.verify.e2e import OPS

    codes: list[str] = []
    for op in OPS[framework]:
        try:
            recipe = kb.status(op, version, framework=framework, device="cpu").recipe
        except LookupError:
            continue
        codes += [c for c in recipe or () if c not in codes]
    return codes


def _check(framework: str, code: int, printed: dict, doc: dict) -> dict:
    from kb.verify.e2e import OPS

    assert code == 0
    assert doc["kind"] == "e2e" and doc["schema_version"] == 1 and doc["environment"]["env_id"].startswith("cpu-")
    (result,) = doc["results"]
    assert result["framework"] == framework and result["verifier"] == f"e2e.{framework}"
    assert result["device"] == "cpu" and result["modes"] == [] and result["n"] == 2
    expected = _expected_recipe(framework, result["version"])
    if expected:
        assert result["recipe"] == expected and result["recipe_from"].startswith("kb.status")
    else:
        assert result["recipe"] and result["recipe_from"].startswith("fallback")
    assert [c["code"] for c in result["codes"]] == result["recipe"] and all(c["how"] for c in result["codes"])
    assert [a["op"] for a in result["ops"]] == list(OPS[framework])  # every op's answer, unknown ones too
    pairs = result["e2e"]
    assert pairs["default"]["solutions"] == [] and pairs["recipe"]["solutions"] == result["recipe"]
    for pair in pairs.values():
        assert "error" not in pair, pair
        assert len(pair["runs"]) == 2 and all(len(r["weights"]) == 16 and r["train_s"] > 0 for r in pair["runs"])
        assert isinstance(pair["churn"], float) and 0.0 <= pair["churn"] <= 1.0
        assert pair["weights_identical"] == (pair["runs"][0]["weights"] == pair["runs"][1]["weights"])
    # Under the recipe, two CPU trainings of the same seeded model end bit-identical.
    assert pairs["recipe"]["weights_identical"] is True and pairs["recipe"]["churn"] == 0.0
    assert pairs["recipe"]["time_ratio"] > 0
    assert printed["results"][framework]["recipe"]["churn"] == pairs["recipe"]["churn"]
    return result


def test_tensorflow_e2e_recipe_gives_identical_weights_on_cpu(tmp_path, capsys) -> None:
    pytest.importorskip("tensorflow", reason="tensorflow(-cpu) not installed")
    result = _check("tensorflow", *_run(tmp_path, "tensorflow", capsys))
    # The non-fallback path: the KB records SEED (dropout) and DL1 (Model.fit) for these Keras ops on any device.
    assert result["recipe_from"].startswith("kb.status")


def test_jax_e2e_recipe_gives_identical_weights_on_cpu(tmp_path, capsys) -> None:
    pytest.importorskip("jax", reason="jax not installed")
    _check("jax", *_run(tmp_path, "jax", capsys))


def test_code_that_fails_in_the_child_is_an_error_in_its_pair(tmp_path, capsys, monkeypatch) -> None:
    """The parent is told XLA_BOGUS exists (so it starts the children); the child's own table
    does not know it, so each recipe training fails; the default pair still trains. (Its
    children share a JAX compilation cache, so the second default training loads what the
    first compiled: nothing here compares the pair's weights. The two tests above compile in
    every child, as `kb verify --e2e` does.)"""
    pytest.importorskip("jax", reason="jax not installed")
    monkeypatch.setenv("JAX_COMPILATION_CACHE_DIR", str(tmp_path / "jax-cache"))
    monkeypatch.setenv("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "0")
    monkeypatch.setenv("JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES", "0")
    from kb.verify import e2e
    from verifiers import solutions

    monkeypatch.setitem(solutions.TABLES["jax"], "XLA_BOGUS", ({}, None, False))
    monkeypatch.setattr(e2e, "recipe", lambda *a: (("XLA_BOGUS",), "test: a code only the parent knows", []))
    code, printed, doc = _run(tmp_path, "jax", capsys)
    assert code == 0  # ran, whatever the outcome
    pairs = doc["results"][0]["e2e"]
    assert "error" not in pairs["default"] and pairs["default"]["weights_identical"] in (True, False)
    assert "XLA_BOGUS" in pairs["recipe"]["error"] and all("error" in r for r in pairs["recipe"]["runs"])
    assert "churn" not in pairs["recipe"] and "time_ratio" not in pairs["recipe"]
    assert doc["results"][0]["codes"] == [{"code": "XLA_BOGUS", "how": "no action"}]  # what the parent was told
    assert printed["results"]["jax"]["recipe"]["error"] == pairs["recipe"]["error"]


def test_unknown_code_and_timeout_are_errors_not_crashes(monkeypatch) -> None:
    from kb.verify import e2e
    from verifiers.solutions import UnknownCode

    with pytest.raises(UnknownCode, match="NOPE"):
        e2e.describe("jax", ("NOPE",))
    with pytest.raises(UnknownCode, match="PT_DLSEED.*tensorflow"):  # another framework's code
        e2e.describe("tensorflow", ("PT_DLSEED",))
    assert "NOPE" in e2e._train(ROOT, "jax", ("NOPE",), "cpu", 0.05, 60)["error"]
    assert e2e._train(ROOT, "jax", (), "cpu", 0.05, 0.2)["error"] == "timed out after 0.2 s; killed"
    # A practice code is applied by the child or declared not applicable, with the reason recorded.
    (how,) = e2e.describe("tensorflow", ("GATE",))
    assert how["how"].startswith("not applicable: ")
    (how,) = e2e.describe("tensorflow", ("DL1",))
    assert how["how"].startswith("practice: ")
    # A new practice code the child neither honours nor declares not applicable: an error, never dropped.
    from verifiers import solutions

    monkeypatch.setitem(solutions.TABLES["tensorflow"], "NEWPRACTICE", ({}, None, True))
    with pytest.raises(UnknownCode, match="NEWPRACTICE is a practice"):
        e2e.describe("tensorflow", ("NEWPRACTICE",))


def test_every_training_failing_still_writes_the_run_file(tmp_path, capsys, monkeypatch) -> None:
    from kb.cli import main
    from kb.verify import e2e

    monkeypatch.setitem(e2e.CHILDREN, "jax", "verifiers.no_such_child")
    monkeypatch.setattr("kb.verify.env.framework_versions", lambda: {"jax": "0.10.2"})  # installed or not
    out = tmp_path / "runs"
    code = main(["--root", str(ROOT), "verify", "--e2e", "--framework", "jax", "--device", "cpu", "--out", str(out)])
    assert code == 1  # every training errored: documented exit code, no traceback
    (path,) = list(out.rglob("*.yaml"))
    pairs = yaml.safe_load(path.read_text())["results"][0]["e2e"]
    assert all("no_such_child" in pairs[p]["error"] for p in ("default", "recipe"))
    assert "e2e jax [default] run 1/2 ... error" in capsys.readouterr().err


def test_parent_imports_no_framework() -> None:
    code = ("import sys, kb; from kb.verify import e2e; e2e.handled('tensorflow'); e2e.describe('tensorflow', ('SEED', 'DL1'));"
            "print(any(m in sys.modules for m in ('tensorflow', 'jax', 'torch', 'pydantic')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT,
                         env={**os.environ, "PYTHONPATH": str(ROOT)}).stdout.split()
    assert out == ["False"]
