"""The call model's second pass (docs/calls.md): forms (overloads), exact dtypes, layout,
sequence lengths, closed value sets, and values no record names; then the same on the
shipped data through the command line.

The fixture project is the mini one plus inline records and extra signature lines, compiled
into an index and swapped in, so each test states exactly the fact it exercises.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import kb
from kb import calls, query, signatures
from kb.catalog import load
from kb.verify.cases import applies as case_applies
from kbproject import answering, compiled

MINI = Path(__file__).parent / "fixtures" / "mini"
ROOT = Path(__file__).resolve().parents[1]

# Extra inventory lines: an op with two forms, a closed value set, a sequence parameter.
SIGNATURES = """\
tf.math.sample_median\tinput
tf.math.sample_median\tinput\taxis\tkeepdims=False
tf.image.sample_resize\timages\tmethod='bilinear'\t@method=bilinear|nearest|area
tf.sample_pad\tinput\tpaddings\tmode='constant'
tf.sparse.sample_matmul\ta\tb
tf.math.sample_add\tx\ty
"""


def _record(rid: str, ops: list[str], when: str) -> str:
    return f"""\
# yaml-language-server: $schema=../../../schema/source.schema.json
id: {rid}
framework: tensorflow
title: {rid}
ops:
{''.join(f'  - {op}' + chr(10) for op in ops)}device: gpu
pass: forward
mechanism: cuda-atomics
summary: A fixture record for one call fact.
calls:
  - when:
{when}status:
  - versions: <2.1
  - versions: '>=2.1'
    solutions: [TDO]
references:
  - kind: pr
    repo: tensorflow/tensorflow
    number: 31465
"""


RECORDS = {
    "tf.median-form": _record("tf.median-form", ["tf.math.sample_median"], "      axis: [given]\n"),
    "tf.sparse-only": _record("tf.sparse-only", ["tf.sparse.sample_matmul"], "      input.layout: [sparse_coo]\n"),
    "tf.add-bf16": _record("tf.add-bf16", ["tf.math.sample_add"], "      input.dtype: [bfloat16]\n"),
    "tf.resize-closed": _record("tf.resize-closed", ["tf.image.sample_resize"], "      method: [bilinear]\n"),
    "tf.pad-short": _record("tf.pad-short", ["tf.sample_pad"],
                            "      mode: [reflect]\n      paddings.len: [2]\n      input.ndim: [2, 3]\n"),
}


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("forms") / "project"
    shutil.copytree(MINI, root)
    with (root / "data/api/tensorflow.signatures.txt").open("a", encoding="utf-8") as handle:
        handle.write(SIGNATURES)
    for name, text in RECORDS.items():
        (root / "data/sources/tensorflow" / f"{name}.yaml").write_text(text, encoding="utf-8")
    return compiled(root)


@pytest.fixture()
def kbq(index: dict):
    with answering(index) as answering_kb:
        yield answering_kb


# --- forms -------------------------------------------------------------------------------

def test_parse_keeps_every_form_and_their_union() -> None:
    fields = ("input", signatures.FORM_BREAK, "input", "axis", "keepdims=False", "@mode=a|b", ">tf.other")
    params = signatures.parse(fields)
    assert params == (("input", kb.NO_DEFAULT), ("axis", kb.NO_DEFAULT), ("keepdims", False))
    assert params.forms == ((("input", kb.NO_DEFAULT),),
                            (("input", kb.NO_DEFAULT), ("axis", kb.NO_DEFAULT), ("keepdims", False)))
    assert params.choices == {"mode": ("a", "b")} and params.forwards == ("tf.other",)


def test_a_call_is_matched_to_the_first_form_its_keys_fit() -> None:
    params = signatures.parse(("input", "|", "input", "axis", "keepdims=False"))
    assert dict(calls.bind("op", {}, params))["axis"] is None  # the plain form: axis not given
    assert dict(calls.bind("op", {"axis": 0}, params))["keepdims"] is False
    two = signatures.parse(("x", "other", "|", "x", "dim", "keepdim=False"))
    with pytest.raises(ValueError, match=r"no form that takes other, dim together; its forms: \(x, other\); \(x, dim"):
        calls.bind("op", {"other": 1, "dim": 0}, two)


def test_the_form_decides_the_record(kbq) -> None:
    with_axis = kbq.status("tf.math.sample_median", "2.3", call={"axis": 0})
    assert with_axis.deterministic is False and with_axis.sources[0].applies is True
    plain = kbq.status("tf.math.sample_median", "2.3", call={})
    assert plain.deterministic is True and plain.excluded == ("tf.median-form",)
    assert any("axis is not given" in n for n in plain.notes)
    # a key only the second form has selects it: keepdims without axis is the axis form (axis unknown)
    assert kbq.status("tf.math.sample_median", "2.3", call={"keepdims": True}).sources[0].applies is None
    assert kbq.status("tf.math.sample_median", "2.3").sources[0].condition == "axis is given"


# --- exact dtypes ------------------------------------------------------------------------

def test_exact_dtypes_against_exact_and_kind_conditions(kbq) -> None:
    assert kbq.status("tf.math.sample_add", "2.3", call={"input.dtype": "bfloat16"}).sources[0].applies is True
    assert kbq.status("tf.math.sample_add", "2.3", call={"input.dtype": "float32"}).deterministic is True
    kind = kbq.status("tf.math.sample_add", "2.3", call={"input.dtype": "float"})
    assert kind.sources[0].applies is None and kind.sources[0].depends_on == ("input.dtype",)
    assert kbq.status("tf.math.sample_add", "2.3", call={"input.dtype": "int"}).deterministic is True
    assert calls.value_holds("bfloat16", ("float",)) is True
    assert calls.value_holds("int8", ("float",)) is False
    assert calls.value_holds("bool", ("bool",)) is True


def test_every_exact_dtype_is_a_pytorch_dtype_of_its_kind() -> None:
    torch = pytest.importorskip("torch")
    for name, kind in calls.DTYPES.items():
        dtype = getattr(torch, name)
        assert isinstance(dtype, torch.dtype), name
        found = "bool" if dtype == torch.bool else "complex" if dtype.is_complex else "float" if dtype.is_floating_point else "int"
        assert found == kind, name


# --- layout ------------------------------------------------------------------------------

def test_layout_decides_sparse_only_records_and_is_unknown_when_left_out(kbq) -> None:
    dense = kbq.status("tf.sparse.sample_matmul", "2.3", call={"input.ndim": 3, "input.layout": "strided"})
    assert dense.deterministic is True and dense.recipe == () and dense.excluded == ("tf.sparse-only",)
    unsaid = kbq.status("tf.sparse.sample_matmul", "2.3", call={"input.ndim": 3})  # the contract: input.* left out is unknown
    assert unsaid.deterministic is False and unsaid.depends_on_call and unsaid.excluded == ()
    sparse = kbq.status("tf.sparse.sample_matmul", "2.3", call={"input.layout": "sparse_coo"})
    assert sparse.deterministic is False and sparse.recipe == ("TDO",)
    unknown = kbq.status("tf.sparse.sample_matmul", "2.3")
    assert unknown.depends_on_call and unknown.sources[0].condition == "input.layout is 'sparse_coo'"
    with pytest.raises(ValueError, match="input's layout: strided, sparse_coo"):
        kbq.status("tf.sparse.sample_matmul", "2.3", call={"input.layout": "coo"})


# --- sequence lengths --------------------------------------------------------------------

def test_a_sequence_length_decides_the_kernel(kbq) -> None:
    call = {"mode": "reflect", "input.ndim": 3}
    assert kbq.status("tf.sample_pad", "2.3", call=call).sources[0].depends_on == ("paddings.len",)
    assert kbq.status("tf.sample_pad", "2.3", call={**call, "paddings.len": 2}).sources[0].applies is True
    longer = kbq.status("tf.sample_pad", "2.3", call={**call, "paddings.len": 4})
    assert longer.deterministic is True and any("len(paddings) is 4" in n for n in longer.notes)
    with pytest.raises(ValueError, match="length of the sequence paddings"):
        kbq.status("tf.sample_pad", "2.3", call={"paddings.len": "2"})
    with pytest.raises(ValueError, match="no parameter 'padings.len'"):
        kbq.status("tf.sample_pad", "2.3", call={"padings.len": 2})


# --- values ------------------------------------------------------------------------------

@pytest.mark.parametrize("value", ["bilinar", "Bilinear", 3])
def test_a_value_outside_the_closed_set_is_refused(kbq, value) -> None:
    with pytest.raises(ValueError, match=r"method=.* is not one of its values: 'bilinear', 'nearest', 'area'"):
        kbq.status("tf.image.sample_resize", "2.3", call={"method": value})


def test_values_in_the_closed_set_are_answered(kbq) -> None:
    assert kbq.status("tf.image.sample_resize", "2.3", call={"method": "bilinear"}).deterministic is False
    nearest = kbq.status("tf.image.sample_resize", "2.3", call={"method": "nearest"})
    assert nearest.deterministic is True and not any("no record's condition" in n for n in nearest.notes)


def test_a_value_no_record_names_is_said_where_the_set_is_open(kbq) -> None:
    s = kbq.status("tf.sample_pad", "2.3", call={"mode": "reflekt"})
    assert any("no record's condition names mode='reflekt' (they name 'reflect')" in n for n in s.notes)
    assert not any("no record's condition" in n for n in kbq.status("tf.sample_pad", "2.3", call={"mode": "reflect"}).notes)


# --- verified cases match as queries do --------------------------------------------------

def test_cases_read_given_dtypes_and_layout_as_queries_do() -> None:
    median = [{"ops": [], "when": {"dim": ["given"]}}]
    assert case_applies(median, None, "torch.median", {"dim": 1}) is True
    assert case_applies(median, None, "torch.median", {"dim": None}) is False
    sparse = [{"ops": [], "when": {"input.layout": ["sparse_coo"]}}]
    assert case_applies(sparse, None, "torch.bmm", {"input.ndim": 3}) is False  # a case that ran: dense
    floats = [{"ops": [], "when": {"input.dtype": ["float"]}}]
    assert case_applies(floats, None, "torch.index_add", {"input.dtype": "bfloat16"}) is True


# --- the shipped data, through the command line (issues 27 and 34) ------------------------

def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kb", "status", *args, "--json"], capture_output=True, text=True,
                          cwd=ROOT, timeout=60)


def _answer(*args: str) -> dict:
    done = _cli(*args)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.parametrize("op", ["torch.median", "torch.nanmedian"])
def test_cli_median_dim_form_raises_and_the_plain_form_does_not(op) -> None:
    dim = _answer(op, "2.11", "--call", "dim=0")
    assert any(s["id"] == "torch.median-indices" and s["raises"] == "RuntimeError" for s in dim["sources"])
    plain = _answer(op, "2.11", "--call", "input.ndim=2")
    assert all(s.get("raises") is None for s in plain["sources"]) and "torch.median-indices" in plain["excluded"]


def test_cli_index_add_in_bfloat16_is_answered() -> None:
    s = _answer("torch.Tensor.index_add_", "2.11", "--call", "input.dtype=bfloat16")
    assert s["deterministic"] is False and s["recipe"] == ["PT_DET"]


def test_cli_bmm_sparse_condition_is_shown_and_dense_calls_are_not_told_to_set_it() -> None:
    every = _answer("torch.bmm", "2.5")
    (sparse,) = [s for s in every["sources"] if s["id"] == "torch.sparse-bmm"]
    assert sparse["condition"] == "input.layout is 'sparse_coo'"
    dense = _answer("torch.bmm", "2.5", "--call", "input.ndim=3", "--call", "input.layout=strided")
    assert "torch.sparse-bmm" in dense["excluded"] and "PT_DET" not in (dense["recipe"] or [])


@pytest.mark.parametrize("mode", ["bilinar", "Bilinear"])
def test_cli_interpolate_mode_typo_exits_2_listing_the_modes(mode) -> None:
    done = _cli("torch.nn.functional.interpolate", "2.5", "--call", f"mode={mode}")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert f"mode={mode!r} is not one of its values" in done.stderr and "'bilinear', 'bicubic'" in done.stderr


def test_cli_pad_spelling_reaches_the_module_records() -> None:
    s = _answer("torch.nn.functional.pad", "2.11", "--call", "mode=reflect", "--call", "input.ndim=3",
                "--call", "pad.len=2")
    assert [x["id"] for x in s["sources"] if x.get("raises")] == ["torch.reflection-pad-1d-2d-backward"]
    assert _answer("torch.nn.functional.pad", "2.11", "--call", "mode=circular", "--call", "input.ndim=3")["recipe"] == []


def test_cli_scatter_reduce_multiply_raises_and_add_is_fixed() -> None:
    multiply = _answer("torch.Tensor.scatter_", "2.11", "--call", "reduce=multiply", "--call", "src=float")
    assert [s["id"] for s in multiply["sources"]] == ["torch.scatter-reduce-multiply-arg"]
    assert multiply["sources"][0]["raises"] == "RuntimeError"
    add = _answer("torch.Tensor.scatter_", "2.11", "--call", "reduce=add", "--call", "src=float")
    assert add["recipe"] == ["PT_DET"]


# --- the site's lookup (site/assets/stack-core.js) answers these calls as kb.status does ------

JS_CASES = [
    ("tf.math.sample_median", ["", "axis=0", "keepdims=True", "axis=None"]),
    ("tf.math.sample_add", ["input.dtype=bfloat16", "input.dtype=float32", "input.dtype=float", "input.dtype=int",
                            "input.dtype=floaty"]),
    ("tf.sparse.sample_matmul", ["input.ndim=3", "input.layout=sparse_coo", "input.layout=coo"]),
    ("tf.sample_pad", ["mode=reflect, input.ndim=3", "mode=reflect, input.ndim=3, paddings.len=2",
                       "mode=reflect, paddings.len=4", "paddings.len=x", "padings.len=2"]),
    ("tf.image.sample_resize", ["method=bilinear", "method=nearest", "method=bilinar", "method=Bilinear"]),
]


def test_the_site_lookup_answers_like_kb_status(index: dict, tmp_path: Path) -> None:
    import os

    from test_site_stack_js import CALL_RUNNER, CORE, NODE, _call_of, _project

    if NODE is None:
        pytest.skip("node is not installed: the JS logic cannot run outside a browser here")
    from kb.site import api

    root = tmp_path / "project"
    shutil.copytree(MINI, root)
    with (root / "data/api/tensorflow.signatures.txt").open("a", encoding="utf-8") as handle:
        handle.write(SIGNATURES)
    for name, text in RECORDS.items():
        (root / "data/sources/tensorflow" / f"{name}.yaml").write_text(text, encoding="utf-8")
    catalog = load(root)
    path = tmp_path / "all.json"
    cases, expected = [], []
    query.reset(index)
    try:
        path.write_text(api.files(catalog, index)[f"{api.PREFIX}/all.json"])
        for op, texts in JS_CASES:
            for text in texts:
                cases.append({"op": op, "version": "2.3", "framework": "tensorflow", "call": text or None})
                try:
                    st = kb.status(op, "2.3", framework="tensorflow", call=_call_of(text) if text else {}).to_dict()
                except ValueError:
                    expected.append("error")
                    continue
                expected.append({**_project(st), "excluded": list(st["excluded"]),
                                 "conditions": [[s["id"], s["condition"], s["applies"]] for s in st["sources"]]})
    finally:
        query.reset()
    for case in cases:
        case["call"] = case["call"] or " "  # the page's empty call: every parameter at its default
    runner = CALL_RUNNER.replace("c.call === null ? null : core.parseCall(c.call)",
                                 "c.call.trim() ? core.parseCall(c.call) : Object.create(null)")
    result = subprocess.run([NODE, "-e", runner, str(CORE), str(path)], input=json.dumps(cases),
                            capture_output=True, text=True, check=True, env={**os.environ})
    got = []
    for g in json.loads(result.stdout):
        if "error" in g:
            got.append("error")
            continue
        st = g["status"]
        got.append({**_project(st), "excluded": st["excluded"],
                    "conditions": [[s["id"], s["condition"], s["applies"]] for s in st["sources"]]})
    mismatches = [(c, e, g) for c, e, g in zip(cases, expected, got) if e != g]
    assert not mismatches, mismatches[:3]
    assert expected.count("error") >= 6
