"""Branch sweeps (docs/sweep.md, "Branches"): the branch inventory and its loader, the call facts of
tensor arguments (kb.calls, kb.status, records' `when:`, sweep cases), and planted operators with
branches whose inputs must collide, run on the CPU."""

from __future__ import annotations

import copy
import importlib.util
import json
from pathlib import Path

import pytest

import kb
from kb import calls
from kb.verify import sweep, sweepbranches, sweepfile

ROOT = Path(__file__).resolve().parents[1]
INVENTORIES = {"pytorch": ROOT / "data/branches/pytorch-2.11.json", "jax": ROOT / "data/branches/jax-0.11.json"}


# --- the inventory ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def torch_inventory() -> dict:
    return sweepbranches.load(INVENTORIES["pytorch"])


def test_committed_inventories_load_and_cover_the_catalogs(torch_inventory) -> None:
    jax_inv = sweepbranches.load(INVENTORIES["jax"])
    assert torch_inventory["version"] == "2.11.0" and jax_inv["version"] == "0.11.2"
    assert len(torch_inventory["ops"]) >= 800 and len(jax_inv["ops"]) >= 450
    branches = [b for o in torch_inventory["ops"] for b in o["branches"]]
    assert len(branches) > 7000
    assert sum(1 for b in branches if b["source"].get("line")) > 0.9 * len(branches)


def test_inventory_reads_the_selecting_lines(torch_inventory) -> None:
    """The cuDNN branch of grid_sample is found at its anchor in the release's header; interpolate's
    Python branches carry the `if` that selects each kernel, as call facts."""
    grid = [b for o in torch_inventory["ops"] if o["op"] == "torch.nn.functional.grid_sample" for b in o["branches"]]
    header = [b for b in grid if b["source"]["file"] == "torch/include/ATen/native/GridSamplerUtils.h"]
    assert header and header[0]["source"]["line"] == 93 and "cond_cudnn_grid_sampler" in header[0]["source"]["text"]
    interp = [b for o in torch_inventory["ops"] if o["op"] == "torch.nn.functional.interpolate" for b in o["branches"]]
    bilinear = [b for b in interp if b["kind"] == "python" and b["kernel"].endswith("-> upsample_bilinear2d")]
    assert bilinear and bilinear[0]["when"] == {"input.ndim": 4, "mode": "bilinear"}
    assert any(b["kind"] == "backward" and "upsample_bilinear2d_backward" in b["kernel"] for b in interp)
    cumsum = [b for o in torch_inventory["ops"] if o["op"] == "torch.cumsum" for b in o["branches"]]
    assert any(b["kind"] == "layout" and b["source"]["file"].endswith("native_functions.yaml") for b in cumsum)


@pytest.mark.parametrize(("change", "words"), [
    (lambda d: d.pop("ops"), "missing top-level"),
    (lambda d: d["ops"][0]["branches"][0].update(kind="guess"), "kind 'guess'"),
    (lambda d: d["ops"][0]["branches"][0].update(when={"targets.dtype": "int33"}), "when.targets.dtype"),
    (lambda d: d["ops"][0]["branches"][0].update(when={"mode;": "x"}), "neither a parameter nor a call fact"),
    (lambda d: d["ops"][0]["branches"].append(copy.deepcopy(d["ops"][0]["branches"][0])), "twice"),
    (lambda d: d["ops"][0]["branches"][0]["source"].update(read="wheel", line=None), "names its file and line"),
    (lambda d: d["ops"][0]["branches"][0].update({"pass": "sideways"}), "pass must be"),
])
def test_a_damaged_inventory_is_refused_with_its_place(tmp_path, torch_inventory, change, words) -> None:
    doc = {**torch_inventory, "ops": [copy.deepcopy(o) for o in torch_inventory["ops"][:3] if o["branches"]]}
    change(doc)
    path = tmp_path / "pytorch-2.11.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(ValueError, match="pytorch-2.11.json") as exc:
        sweepbranches.load(path)
    assert words in str(exc.value)


def test_coverage_needs_the_branch_facts_stated_by_the_case() -> None:
    inv = {"framework": "pytorch", "version": "2.11.0", "tag": "v2.11.0", "read": {}, "ops": [
        {"op": "torch.nn.functional.grid_sample", "catalog": None, "branches": [
            {"id": "cudnn", "kind": "library", "pass": "backward", "when": {"align_corners": True, "input.ndim": 4},
             "kernel": "cudnn", "source": {"file": None, "line": None, "text": "", "read": "code-index"}}]}]}
    case = {"op": "torch.nn.functional.grid_sample", "case": "x|float32|backward", "pass": "backward", "dtype": "float32",
            "call": {"align_corners": True, "input.ndim": 4}, "class": "silent", "modes": {}}
    data = {"framework": "pytorch", "suite": "pytorch-branches", "cases": [case]}
    assert sweepbranches.coverage(inv, [data], ROOT)["with_evidence"] == 1
    data["cases"] = [dict(case, call={"input.ndim": 4})]  # align_corners not stated: no evidence for the branch
    assert sweepbranches.coverage(inv, [data], ROOT)["with_evidence"] == 0


# --- call facts of tensor arguments -------------------------------------------------------------


def test_tensor_argument_facts_are_validated() -> None:
    assert calls.normalize({"targets.dtype": "int32", "targets.device": "cpu", "weight.layout": "sparse_coo",
                            "grid.ndim": 4, "input.memory_format": "channels_last"})
    for bad, words in (({"targets.dtype": "int33"}, "dtype kind"), ({"targets.device": "tpu"}, "device type"),
                       ({"grid.ndim": -1}, "rank"), ({"input.memory_format": "nhwc"}, "memory format"),
                       ({"weight.layout": "dense"}, "layout")):
        with pytest.raises(ValueError, match=words):
            calls.normalize(bad)


def test_kb_status_decides_on_a_tensor_arguments_facts() -> None:
    """ctc_loss: int32 1-D targets with float32 log-probs take cuDNN, which the switch does not refuse;
    int64 targets take the native kernel, which it does (data/sources/pytorch/torch.ctc-loss-backward.yaml)."""
    op = "torch.nn.functional.ctc_loss"
    cudnn = kb.status(op, "2.11", call={"targets.dtype": "int32", "targets.ndim": 1, "input.dtype": "float32"})
    native = kb.status(op, "2.11", call={"targets.dtype": "int64", "targets.ndim": 2, "input.dtype": "float32"})
    assert "torch.ctc-loss-backward" not in [s.id for s in cudnn.sources]
    assert "torch.ctc-loss-backward" in [s.id for s in native.sources]
    with pytest.raises(ValueError, match="has no parameter 'target.dtype'"):
        kb.status(op, "2.11", call={"target.dtype": "int32"})


def test_kb_status_tells_the_cudnn_grid_sampler_from_the_native_one() -> None:
    op = "torch.nn.functional.grid_sample"
    cudnn = {"mode": "bilinear", "padding_mode": "zeros", "align_corners": True, "input.ndim": 4, "input.dtype": "float32"}
    ids = [s.id for s in kb.status(op, "2.11", call=cudnn).sources]
    assert "torch.grid-sample-cudnn-backward" in ids and "torch.grid-sample-backward" not in ids
    ids = [s.id for s in kb.status(op, "2.11", call=dict(cudnn, align_corners=False)).sources]
    assert "torch.grid-sample-backward" in ids and "torch.grid-sample-cudnn-backward" not in ids


def test_sparse_operand_facts_choose_the_cusparse_record() -> None:
    dense = kb.status("torch.addmm", "2.11", call={"mat1.layout": "strided"})
    sparse = kb.status("torch.addmm", "2.11", call={"mat1.layout": "sparse_csr"})
    assert "torch.sparse-mm-cusparse" not in [s.id for s in dense.sources]
    assert "torch.sparse-mm-cusparse" in [s.id for s in sparse.sources]


def test_sweep_cases_keep_tensor_argument_facts_and_the_exact_dtype() -> None:
    case = {"op": "torch.nn.functional.ctc_loss", "pass": "backward", "dtype": "float32",
            "call": {"input.dtype": "float32", "targets.dtype": "int32", "targets.device": "cpu",
                     "targets": {"tensor": [64], "dtype": "int32"}, "inputs.collide": "labels 1 and 2 only"}}
    params = sweepfile.params_for("pytorch", case["op"], ROOT)
    got = sweepfile.case_call(case, "pytorch-branches", params)
    assert got["input.dtype"] == "float32" and got["targets.dtype"] == "int32" and got["targets.device"] == "cpu"
    assert got["targets"] == "int" and "inputs.collide" not in got
    old = {"op": "torch.nn.functional.ctc_loss", "pass": "backward", "dtype": "float32",
           "call": {"args[0]": {"tensor": [8, 12], "dtype": "int64"}, "input.dtype": "float32"}}
    got = sweepfile.case_call(old, "pytorch-eager", params)  # op_db's sweep: a tensor literal's dtype and rank
    assert got["targets.dtype"] == "int64" and got["targets.ndim"] == 2


def test_a_record_may_condition_on_a_tensor_argument() -> None:
    from kb.schema import CallPattern

    CallPattern(when={"targets.dtype": ["int32"], "mat1.layout": ["sparse_csr"]})
    with pytest.raises(ValueError, match="targets.dtype"):
        CallPattern(when={"targets.dtype": ["int33"]})


# --- planted operators with branches (CPU) ------------------------------------------------


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="PyTorch is not installed")
def test_planted_branches_differ_only_where_inputs_collide(tmp_path) -> None:
    """The planted scatter adds in an order that changes per call: only its colliding inputs (32
    addends per slot) can show it, its unique-index inputs cannot; the `alert` branch raises under
    the switch, as PyTorch's alerts do; the `sorted` branch never differs."""
    doc, path = sweep.run_sweep("pytorch-branches", ROOT, device="cpu", runs=3, workers=1, unit_timeout=200.0,
                                start_timeout=240.0, only=("branch:planted_scatter",), planted=True,
                                out_dir=tmp_path / "data" / "sweeps", environment={"env_id": "cpu-test-00000000"},
                                verbose=False)
    got = {c["variant"]: c["class"] for c in doc["cases"]}
    assert got == {"mode=atomic|collide": "silent", "mode=atomic|unique": "same", "mode=alert|collide": "raises",
                   "mode=alert|unique": "raises", "mode=sorted|collide": "same", "mode=sorted|unique": "same"}
    collide = next(c for c in doc["cases"] if c["variant"] == "mode=atomic|collide")
    assert collide["call"]["index.dtype"] == "int64" and collide["call"]["inputs.addends"] == 32
    assert collide["branch"] == "planted.scatter|mode=atomic|collide" and "aten" in collide["reached"]
    assert sweep.read_evidence(path)["suite"] == "pytorch-branches"


def test_cross_check_settles_a_candidate_with_the_case_that_reached_its_kernel() -> None:
    """A branch case records the kernels it reached: the cross-check names it as the settling case,
    and a case that reached another branch (an entry's `not_reached` autograd node) does not count."""
    spec = importlib.util.spec_from_file_location("static_cross_check_b", ROOT / "scripts" / "static_cross_check.py")
    scc = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(scc)
    entry = {"kernel": "atomicadaptivemaxgradinput (gpuAtomicAdd)", "file": "x.cu", "mechanism": "atomic-add", "guarded": False,
             "ops": ["torch.nn.functional.adaptive_max_pool3d"], "pass": "backward", "not_reached": ["OtherBackward0"]}
    base = {"op": "torch.nn.functional.adaptive_max_pool3d", "pass": "backward", "_file": "f.json", "_env": "e"}
    cases = [dict(base, case="plain", **{"class": "silent"}),
             dict(base, case="reached", reached={"kernels": ["void atomicadaptivemaxgradinput<float>(...)"]}, **{"class": "silent"}),
             dict(base, case="elsewhere", reached={"autograd": ["OtherBackward0"]}, **{"class": "same"})]
    result = scc.check([entry], cases)["results"][0]
    assert result["outcome"] == "confirmed" and result["cases"] == 2
    assert result["settled_by"]["case"] == "reached" and "atomicadaptivemaxgradinput" in result["settled_by"]["reached"][0]
