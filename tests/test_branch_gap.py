"""Branches without sweep evidence (docs/sweep.md, "Branches without evidence"): which cases count for an
inventory entry, the stated reasons a branch cannot run (data/branches/<inventory>.reasons.yaml), the
causes scripts/branch_gap.py gives, and the sweep options and branch units that reach the rest."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from kb.verify import sweepbranches

ROOT = Path(__file__).resolve().parents[1]
SOURCE = {"file": None, "line": None, "text": "", "read": "code-index"}


def _inv(framework: str, ops: list[dict]) -> dict:
    return {"framework": framework, "version": "0", "tag": "", "read": {}, "ops": ops}


def _branch(bid: str, when: dict | None = None, kind: str = "lowering", pass_: str = "forward") -> dict:
    return {"id": bid, "kind": kind, "pass": pass_, "when": when or {}, "kernel": bid, "source": SOURCE}


def _case(op: str, unit: str, cls: str = "same", call: dict | None = None, pass_: str = "forward") -> dict:
    return {"op": op, "branch": unit, "case": f"{unit}|float32|{pass_}", "pass": pass_, "dtype": "float32",
            "call": call or {}, "class": cls, "modes": {}}


def _gap() -> Any:
    spec = importlib.util.spec_from_file_location("branch_gap_t", ROOT / "scripts" / "branch_gap.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_a_jax_unit_entry_takes_its_own_cases_only() -> None:
    """x.at[i].multiply's entry is not evidenced by x.at[i].add's cases, and a branch unit's entry
    (its catalog name|b:variant) only by the cases of that unit; the record's name takes them all."""
    inv = _inv("jax", [
        {"op": "jax.numpy.ndarray.at.multiply", "catalog": "jax.numpy.ndarray.at.multiply|b:1d", "branches": [_branch("mul")]},
        {"op": "jax.numpy.ndarray.at.multiply", "catalog": "jax.numpy.ndarray.at.multiply|b:2d-rows", "branches": [_branch("rows")]},
        {"op": "jax.numpy.ndarray.at.add", "catalog": None, "branches": [_branch("add")]},
        {"op": "jax.numpy.ndarray.at", "catalog": None, "branches": [_branch("any")]},
    ])
    data = {"framework": "jax", "suite": "jax-branches",
            "cases": [_case("jax.numpy.ndarray.at.multiply", "jax.numpy.ndarray.at.multiply|b:1d")]}
    per = sweepbranches.coverage(inv, [data], ROOT)["per_branch"]
    got = {k.rsplit("|", 1)[1]: bool(v) for k, v in per.items()}
    assert got == {"mul": True, "rows": False, "add": False, "any": True}


def test_a_parameter_the_case_left_out_holds_at_its_default() -> None:
    """op_db's l1_loss sample passes no reduction: it ran reduction='mean', not 'sum'."""
    op = "torch.nn.functional.l1_loss"
    inv = _inv("pytorch", [{"op": op, "catalog": "nn.functional.l1_loss|", "branches": [
        _branch("mean", {"reduction": "mean"}, "python"), _branch("sum", {"reduction": "sum"}, "python")]}])
    data = {"framework": "pytorch", "suite": "pytorch-eager", "cases": [_case(op, "nn.functional.l1_loss|")]}
    per = sweepbranches.coverage(inv, [data], ROOT)["per_branch"]
    assert {k.rsplit("|", 1)[1]: bool(v) for k, v in per.items()} == {"mean": True, "sum": False}


def _reasons(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "x.reasons.yaml"
    path.write_text(body, encoding="utf-8")
    return path


WHY = "read in torch/nn/modules/padding.py:42 of the wheel"


@pytest.mark.parametrize(("entry", "words"), [
    (f"  - {{op: torch.x, branches: [a], unrunnable: no-time, why: '{WHY}'}}", "unrunnable must be one of"),
    (f"  - {{op: torch.x, branches: [zz], unrunnable: not-reachable, why: '{WHY}'}}", "has no branch 'zz'"),
    (f"  - {{op: torch.y, branches: [a], unrunnable: not-reachable, why: '{WHY}'}}", "not in the inventory"),
    ("  - {op: torch.x, branches: [a], unrunnable: not-reachable, why: short}", "why:"),
    (f"  - {{op: torch.x, branches: [a], unrunnable: not-reachable, why: '{WHY}', seen: 1}}", "unknown field"),
])
def test_a_bad_reason_is_refused_with_its_place(tmp_path: Path, entry: str, words: str) -> None:
    inv = _inv("pytorch", [{"op": "torch.x", "catalog": "x|", "branches": [_branch("a")]}])
    with pytest.raises(ValueError, match="x.reasons.yaml: reasons\\[0\\]") as exc:
        sweepbranches.load_reasons(_reasons(tmp_path, "reasons:\n" + entry + "\n"), inv)
    assert words in str(exc.value)


def test_a_branch_with_evidence_and_a_reason_is_a_conflict(tmp_path: Path) -> None:
    inv = _inv("pytorch", [{"op": "torch.x", "catalog": "x|", "branches": [_branch("a"), _branch("b", {"dim": 1})]}])
    reasons = sweepbranches.load_reasons(_reasons(tmp_path, f"""reasons:
  - {{op: torch.x, branches: [a, b], unrunnable: not-reachable, why: '{WHY}'}}
"""), inv)
    data = {"framework": "pytorch", "suite": "pytorch-eager", "cases": [_case("torch.x", "x|")]}
    cov = sweepbranches.coverage(inv, [data], ROOT, reasons)
    assert cov["conflicts"] == ["torch.x|x||a"] and cov["unrunnable"] == 1 and cov["without"] == 0


def test_a_jax_reason_names_its_unit_by_catalog(tmp_path: Path) -> None:
    """A JAX reasons file (data/branches/jax-0.11.reasons.yaml) is read like PyTorch's; `catalog` picks one
    branch unit's entry of a function, and without it every entry of that function has the reason."""
    inv = _inv("jax", [
        {"op": "jax.nn.f", "catalog": "jax.nn.f|b:impl=cudnn", "branches": [_branch("f64", {"input.dtype": "float64"}, "dtype")]},
        {"op": "jax.nn.f", "catalog": "jax.nn.f|b:impl=xla", "branches": [_branch("f64", {"input.dtype": "float64"}, "dtype")]},
    ])
    one = sweepbranches.load_reasons(_reasons(tmp_path, f"""reasons:
  - {{op: jax.nn.f, catalog: 'jax.nn.f|b:impl=cudnn', branches: [f64], unrunnable: no-cuda-kernel, why: '{WHY}'}}
"""), inv)
    assert list(one) == ["jax.nn.f|jax.nn.f|b:impl=cudnn|f64"]
    every = sweepbranches.load_reasons(_reasons(tmp_path, f"""reasons:
  - {{op: jax.nn.f, branches: [f64], unrunnable: no-cuda-kernel, why: '{WHY}'}}
"""), inv)
    assert len(every) == 2


def test_a_raises_on_device_reason_names_a_sweep_file_that_exists(tmp_path: Path) -> None:
    """`raises-on-device`: the message of a GPU case is the evidence, so `why` names its sweep file."""
    inv = _inv("pytorch", [{"op": "torch.x", "catalog": "x|", "branches": [_branch("a")]}])
    root = tmp_path / "repo"
    (root / "data/branches").mkdir(parents=True)
    (root / "data/sweeps/env").mkdir(parents=True)
    (root / "data/sweeps/env/s.json").write_text("{}", encoding="utf-8")

    def load(why: str) -> dict:
        path = root / "data/branches/x.reasons.yaml"
        path.write_text(f"reasons:\n  - {{op: torch.x, branches: [a], unrunnable: raises-on-device, why: '{why}'}}\n",
                        encoding="utf-8")
        return sweepbranches.load_reasons(path, inv)

    assert load("data/sweeps/env/s.json, case x|coo: NotImplementedError: Could not run")
    with pytest.raises(ValueError, match="names the sweep file"):
        load("it raised on the GPU: NotImplementedError: Could not run")
    with pytest.raises(ValueError, match="not a sweep file"):
        load("data/sweeps/env/gone.json, case x|coo: NotImplementedError")


def test_the_committed_reasons_load_and_none_has_evidence() -> None:
    gap = _gap()
    for name, inv, reasons, sweeps in gap.inventories():
        if name.startswith("pytorch"):
            assert len(reasons) >= 30 and {r for r, _ in reasons.values()} <= set(sweepbranches.UNRUNNABLE)
        assert not sweepbranches.coverage(inv, sweeps, ROOT, reasons)["conflicts"]


def test_each_missing_branch_gets_the_first_cause_that_applies() -> None:
    gap = _gap()
    ev = [(_case("torch.x", "x|"), {"input.dtype": "float32", "dim": 0})]
    assert gap.cause(_branch("d", {"input.dtype": "int"}, "dtype"), ev, ev) == ("dtype-not-swept", "int")
    assert gap.cause(_branch("v", {"dim": 1}, "value"), ev, ev) == ("value-not-run", "dim=1")
    assert gap.cause(_branch("f", {"mode": "x"}, "value"), ev, ev) == ("fact-not-stated", "mode")
    assert gap.cause(_branch("g", {}, "backward", "backward"), ev, ev) == ("no-backward-case", "")
    skipped: list[tuple[dict, dict]] = [(dict(_case("torch.x", "x|", "skipped"), skipped="not reached within the time budget (--budget)"), {})]
    assert gap.cause(_branch("l"), [], skipped) == ("budget", "")
    assert gap.cause(_branch("l"), [], []) == ("no-case", "")


def test_a_dtype_group_runs_the_first_dtype_the_op_takes() -> None:
    pytest.importorskip("torch")
    from verifiers.sweep.torch_worker import Worker

    groups = [("int64", "int32", "uint8"), ("bool",), ("complex64", "complex128")]
    fake = SimpleNamespace(dtype_groups=groups)
    picked = Worker.pick_dtypes(fake, {"int32", "uint8", "complex128"})  # type: ignore[arg-type]  # only its groups are read
    assert picked == ["int32", "complex128"]


def test_the_new_branch_units_run_on_the_cpu() -> None:
    """Each case of the FFT-norm and argument-value units runs once on the CPU; the sparse-layout unit's
    cases run where the CPU has the sparse kernel (its CUDA-only ones, and the losses and modules that take
    no sparse input, whose raising is the evidence sought, fail here)."""
    torch = pytest.importorskip("torch")
    from verifiers.sweep.torch_branches_more import UNITS

    for key, least in (("fft_norms", 1.0), ("values", 1.0), ("module_values", 1.0), ("sparse_layouts", 0.6), ("rest", 0.3)):
        specs = UNITS[key](torch, "cpu", torch.float32, 0.02)
        ran = 0
        for s in specs:
            try:
                s.build()()  # a branch Case builds the call with its inputs made already
                ran += 1
            except (RuntimeError, NotImplementedError, ValueError):  # ValueError: torch 2.13's RNN dtype check
                pass
        assert specs and ran >= least * len(specs), f"{key}: {ran} of {len(specs)} ran"
        assert all("inputs.collide" in s.call for s in specs)


def test_an_uninitialised_output_reason_is_a_word_and_names_its_doc_line(tmp_path: Path) -> None:
    """torch.empty and its kin return uninitialised memory: `uninitialised-output` is accepted with the
    release's file:line that says so, refused without one."""
    inv = _inv("pytorch", [{"op": "torch.empty", "catalog": "empty|", "branches": [_branch("a")]}])
    ok = sweepbranches.load_reasons(_reasons(tmp_path, """reasons:
  - {op: torch.empty, branches: [a], unrunnable: uninitialised-output,
     why: 'torch/_torch_docs.py:12213 (torch 2.11.0 wheel): Returns a tensor filled with uninitialized data.'}
"""), inv)
    assert ok == {"torch.empty|empty||a": ("uninitialised-output",
                                           "torch/_torch_docs.py:12213 (torch 2.11.0 wheel): Returns a tensor filled with uninitialized data.")}
    with pytest.raises(ValueError, match="names the release's file:line"):
        sweepbranches.load_reasons(_reasons(tmp_path, """reasons:
  - {op: torch.empty, branches: [a], unrunnable: uninitialised-output, why: 'its output is uninitialised memory, as documented'}
"""), inv)


def test_a_padding_module_case_states_the_mode_its_class_fixes() -> None:
    """ReplicationPad2d's forward is F.pad(input, self.padding, "replicate"): its module_db cases, which state
    no mode, are evidence for F.pad's mode='replicate' branch and not for 'constant'; ZeroPad is constant. A
    Conv2d case states F.pad's mode only when built with a padding_mode other than 'zeros'."""
    inv = _inv("pytorch", [
        {"op": "torch.nn.ReplicationPad2d", "catalog": "module:torch.nn.ReplicationPad2d|",
         "branches": [_branch("rep", {"mode": "replicate"}, "value"), _branch("const", {"mode": "constant"}, "value")]},
        {"op": "torch.nn.ZeroPad1d", "catalog": "module:torch.nn.ZeroPad1d|", "branches": [_branch("const", {"mode": "constant"}, "value")]},
        {"op": "torch.nn.Conv2d", "catalog": "module:torch.nn.Conv2d|", "branches": [_branch("rep", {"mode": "replicate"}, "value")]},
    ])
    cases = [_case("torch.nn.ReplicationPad2d", "module:torch.nn.ReplicationPad2d|"),
             _case("torch.nn.ZeroPad1d", "module:torch.nn.ZeroPad1d|"),
             _case("torch.nn.Conv2d", "module:torch.nn.Conv2d|")]
    data = {"framework": "pytorch", "suite": "pytorch-eager", "cases": cases}
    per = {k.split("|", 1)[0] + ":" + k.rsplit("|", 1)[1]: bool(v)
           for k, v in sweepbranches.coverage(inv, [data], ROOT)["per_branch"].items()}
    assert per == {"torch.nn.ReplicationPad2d:rep": True, "torch.nn.ReplicationPad2d:const": False,
                   "torch.nn.ZeroPad1d:const": True, "torch.nn.Conv2d:rep": False}
    built = _case("torch.nn.Conv2d", "module:torch.nn.Conv2d|", call={"ctor.padding_mode": "replicate"})
    data["cases"] = [built]
    assert any(sweepbranches.coverage(inv, [data], ROOT)["per_branch"].values())
    assert sweepbranches.module_facts("torch.nn.Conv2d", {"padding_mode": "zeros"}) == {"padding_mode": "zeros"}


def test_a_python_complex_output_is_compared() -> None:
    """Tensor.item() of a complex tensor returns a Python complex: the worker compares it as a tensor (on
    2026-11-28 every complex item case raised `no tensor output`)."""
    torch = pytest.importorskip("torch")
    from verifiers.sweep.torch_worker import Worker

    fake = SimpleNamespace(torch=torch)
    got = Worker.flat(fake, torch.tensor(1 + 2j, dtype=torch.complex64).item())  # type: ignore[arg-type]
    assert len(got) == 1 and got[0].is_complex()


def test_an_embedding_module_case_states_its_weight_dtype() -> None:
    """nn.Embedding's forward input is int64 indices; its dtype branches (from F.embedding's op_db entry, whose
    input is the weight, and from module_db) are the weight's, which is the case's own dtype."""
    inv = _inv("pytorch", [{"op": "torch.nn.Embedding", "catalog": "module:torch.nn.Embedding|", "branches": [
        _branch("f16", {"input.dtype": "float16"}, "dtype"), _branch("f64", {"input.dtype": "float64"}, "dtype")]}])
    case = dict(_case("torch.nn.Embedding", "module:torch.nn.Embedding|", call={"input.dtype": "int64"}), dtype="float16")
    data = {"framework": "pytorch", "suite": "pytorch-eager", "cases": [case]}
    per = sweepbranches.coverage(inv, [data], ROOT)["per_branch"]
    assert {k.rsplit("|", 1)[1]: bool(v) for k, v in per.items()} == {"f16": True, "f64": False}


def test_the_rest_unit_takes_exactly_the_sparse_cases_it_names() -> None:
    """run_rest.sh runs the `rest` unit instead of sparse_coo and sparse_csr again: it holds each REST_SPARSE case once."""
    torch = pytest.importorskip("torch")
    from verifiers.sweep.torch_branches_more import REST_SPARSE, UNITS

    specs = UNITS["rest"](torch, "cpu", torch.float32, 0.02)
    assert sorted(s.branch for s in specs if s.branch in REST_SPARSE) == sorted(REST_SPARSE)
    # the calls meant to run do; those meant to show a message (an int or bool input) and the CUDA-only CSR kernels
    # (baddbmm's CSR batch1, triangular_solve's CSR A) are the rest
    for s in specs:
        if " input" not in s.branch and "|csr " not in s.branch and not s.branch.endswith(("|int64", "|bool")):
            s.build()()
    csr = {s.branch: s.call for s in specs if "|csr " in s.branch}
    assert csr["torch.baddbmm|csr batch1"]["batch1.layout"] == "sparse_csr"
    assert csr["torch.baddbmm|csr batch1"]["input.layout"] == "strided"
    assert csr["torch.triangular_solve|csr A"]["A.layout"] == "sparse_csr"


def test_a_sparse_dispatch_branch_is_stated_by_any_sparse_argument() -> None:
    """The dispatcher takes SparseCsrCUDA from every tensor argument: baddbmm with a CSR batch1 (its kernel's CSR
    operand) reaches the branch the inventory writes input.layout=sparse_csr; a dense call does not, and a strided
    branch still wants a dense input."""
    csr_batch1 = {"input.layout": "strided", "batch1.layout": "sparse_csr", "batch2.layout": "strided"}
    assert sweepbranches.states({"input.layout": "sparse_csr"}, csr_batch1)
    assert not sweepbranches.states({"input.layout": "sparse_coo"}, csr_batch1)
    assert not sweepbranches.states({"input.layout": "sparse_csr"}, {"input.layout": "strided", "batch1.layout": "strided"})
    assert not sweepbranches.states({"input.layout": "strided"}, {"input.layout": "sparse_csr"})


def test_an_op_db_name_finds_the_cases_spelled_with_torch() -> None:
    """data/branches/pytorch-2.11.json names binary_cross_entropy's and embedding_bag's entries by their op_db names
    (nn.functional.X, from a unit-error case); their cases that ran spell torch.nn.functional.X and count for them.
    evidence_names, which named them, now prefers a case's torch. spelling."""
    inv = _inv("pytorch", [{"op": "nn.functional.binary_cross_entropy", "catalog": "nn.functional.binary_cross_entropy|",
                            "branches": [_branch("f16", {"input.dtype": "float16"}, "dtype")]}])
    case = _case("torch.nn.functional.binary_cross_entropy", "nn.functional.binary_cross_entropy|",
                 call={"input.dtype": "float16"})
    data = {"framework": "pytorch", "suite": "pytorch-eager", "cases": [case]}
    assert all(sweepbranches.coverage(inv, [data], ROOT)["per_branch"].values())


def test_evidence_names_prefers_a_torch_spelling(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location("branch_inventory_t", ROOT / "scripts" / "branch_inventory.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    f = tmp_path / "s.json"
    f.write_text('{"cases": [{"op": "nn.functional.embedding_bag", "case": "nn.functional.embedding_bag||unit"},'
                 ' {"op": "nn.functional.embedding_bag", "case": "nn.functional.embedding_bag||float16|forward"},'
                 ' {"op": "torch.nn.functional.embedding_bag", "case": "nn.functional.embedding_bag||float32|forward"}]}')
    assert mod.evidence_names([str(f)])["nn.functional.embedding_bag|"] == "torch.nn.functional.embedding_bag"
