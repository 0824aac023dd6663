"""The in-browser "check my stack" logic (site/assets/stack-core.js) gives kb.status()'s answers.

Runs the JS with node over api/v1/all.json for many (op, version, device, distribution)
cases and for whole stacks, and compares with kb.status() / kb.site.model.stack().
"""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

import kb
from kb import query
from kb.compile import build_index
from kb.site import api, model
from shared import repo_lint
from site_build import ROOT

NODE = shutil.which("node")
CORE = ROOT / "site/assets/stack-core.js"
VERSIONS = ("0.12", "1.13", "1.14", "1.15", "1.15.5", "2.0", "2.1", "2.1.0rc1", "2.2", "2.3", "2.3.1", "2.4",
            "2.5", "2.6", "2.7", "2.8", "2.9.1", "2.10", "2.15", "2.21.0", "3.0", "0.19", "0.21", "0.28.1")
RUNNER = """
const core = require(process.argv[1]);
const fs = require('fs');
const data = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const cases = JSON.parse(fs.readFileSync(0, 'utf8'));
const out = cases.map(c => c.kind === 'op'
  ? core.opStatus(data, c.op, c.version, c.framework, c.device, c.distribution)
  : core.stackStatus(data, c.framework, c.version, c.device, c.distribution));
process.stdout.write(JSON.stringify(out));
"""


def _project(status: dict) -> dict:
    return {
        "deterministic": status["deterministic"], "solutions": list(status["solutions"]),
        "recipe": None if status["recipe"] is None else list(status["recipe"]),
        "sources": [[s["id"], s["versions"], s["deterministic"], list(s["solutions"]), s["raises"]] for s in status["sources"]],
        "basis": status["basis"], "headline": status["headline"], "depends_on_call": status["depends_on_call"],
    }


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    if NODE is None:
        pytest.skip("node is not installed: the JS logic cannot run outside a browser here")
    catalog, _ = repo_lint()
    index = build_index(catalog)
    path = tmp_path_factory.mktemp("api") / "all.json"
    path.write_text(json.dumps(api.all_json(catalog, index)))
    return catalog, index, path


def _node(path, cases):
    result = subprocess.run([NODE, "-e", RUNNER, str(CORE), str(path)], input=json.dumps(cases),
                            capture_output=True, text=True, check=True)
    return json.loads(result.stdout)


def test_op_answers_match_kb_status(setup) -> None:
    catalog, index, path = setup
    cases, expected = [], []
    query.reset(index)
    try:
        for framework, table in index["names"].items():
            for op in table:
                for version in VERSIONS:
                    for device in ("gpu", "cpu", "any"):
                        for distribution in (None, "ngc"):
                            if distribution and framework != "tensorflow":
                                continue
                            try:
                                st = kb.status(op, version, framework=framework, device=device, distribution=distribution)
                            except ValueError:
                                continue
                            cases.append({"kind": "op", "op": op, "version": version, "framework": framework,
                                          "device": device, "distribution": distribution})
                            expected.append(_project(st.to_dict()))
    finally:
        query.reset()
    assert len(cases) > 1000
    got = [_project(g) for g in _node(path, cases)]
    mismatches = [(c, e, g) for c, e, g in zip(cases, expected, got) if e != g]
    assert not mismatches, [(c, {k: (e[k], g[k]) for k in e if e[k] != g[k]}) for c, e, g in mismatches[:3]]


def test_stack_answers_match_python(setup) -> None:
    catalog, index, path = setup
    cases, expected = [], []
    query.reset(index)
    try:
        for framework in model.frameworks(index):
            for version in VERSIONS:
                for device in ("gpu", "cpu"):
                    cases.append({"kind": "stack", "framework": framework, "version": version, "device": device,
                                  "distribution": None})
                    expected.append(model.stack(index, framework, version, device))
    finally:
        query.reset()
    got = _node(path, cases)
    for case, exp, g in zip(cases, expected, got):
        assert {k: g[k] for k in exp} == exp, case


def test_release_key_matches_python(setup) -> None:
    from kb.versions import release_key

    versions = ["2.1", "2.1.0", "2.21.0rc1", "1.15.5+nv", "2.1.0.post1", "2.1.0.dev5", "1!2.0", "20.03", "v2.3", "2.10.0"]
    script = "const c=require(process.argv[1]);process.stdout.write(JSON.stringify(JSON.parse(process.argv[2]).map(c.releaseKey)))"
    out = subprocess.run([NODE, "-e", script, str(CORE), json.dumps(versions)], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == [list(release_key(v)) for v in versions]


# --- names with no record: the page must suggest, never give an all-clear (kb.status() raises) ---

LOOKUP_RUNNER = """
const core = require(process.argv[1]);
const fs = require('fs');
const data = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const inventory = {};
for (const [fw, file] of Object.entries(JSON.parse(process.argv[3]))) inventory[fw] = core.decodeNames(fs.readFileSync(file, 'utf8'));
const cases = JSON.parse(fs.readFileSync(0, 'utf8'));
process.stdout.write(JSON.stringify({
  sizes: Object.fromEntries(Object.entries(inventory).map(([k, v]) => [k, v.length])),
  out: cases.map(c => core.lookup(data, inventory, c.op, c.version, c.framework, c.device, null)),
}));
"""
SHORT_NAMES = {
    "tensorflow": ["bias_add", "tf.nn.bias_ad", "conv2d", "tf.add", "tf.nn.bias_add", "segment_sum", "resize",
                   "tf.math.unsorted_segment_sum", "torch.Tensor.index_add_", "tf.bias-add-backprop", "zzzz", "BiasAdd"],
    "pytorch": ["index_add", "scatter_add", "index_add_", "torch.index_add", "torch.Tensor.index_add_", "interpolate",
                "torch.add", "torch.nn.functional.interpolat", "embedding_bag", "tf.nn.bias_add", "torch.scatter-add",
                "cumsum", "torch.bmm"],
    "jax": ["segment_sum", "jax.ops.segment_sum", "scatter_add", "jax.numpy.add", "jax.lax.scatter_ad"],
    "cudnn": ["conv", "cudnnConvolutionBackwardFilter"],
    "nccl": ["allreduce"],
}


def _python_lookup(op: str, version: str, framework: str) -> dict:
    try:
        return {"status": _project(kb.status(op, version, framework=framework).to_dict())}
    except kb.UnknownOpError as error:
        return {"unknown": list(error.suggestions)}


def test_unknown_and_short_names_suggest_like_kb_status(setup, tmp_path) -> None:
    """`bias_add` in TF, `index_add` in PyTorch: kb.status() raises with suggestions; so must the page."""
    catalog, index, path = setup
    names = api.inventory_names(catalog)
    files = {}
    for fw, listed in names.items():
        files[fw] = str(tmp_path / f"{fw}.txt")
        (tmp_path / f"{fw}.txt").write_text(api.front_coded(listed))
    cases, expected = [], []
    query.reset(index)
    try:
        for framework, ops in SHORT_NAMES.items():
            for op in ops:
                version = {"tensorflow": "2.15", "pytorch": "2.11", "jax": "0.4.30"}.get(framework, "8.0")
                cases.append({"op": op, "version": version, "framework": framework, "device": "gpu"})
                expected.append(_python_lookup(op, version, framework))
    finally:
        query.reset()
    result = subprocess.run([NODE, "-e", LOOKUP_RUNNER, str(CORE), str(path), json.dumps(files)],
                            input=json.dumps(cases), capture_output=True, text=True, check=True)
    body = json.loads(result.stdout)
    assert body["sizes"] == {fw: len(v) for fw, v in names.items()}  # every name survives the encoding
    got = [{"status": _project(g["status"])} if "status" in g else {"unknown": g["unknown"]["suggestions"]}
           for g in body["out"]]
    # Answers must agree exactly; for an unknown name both must refuse, and the page must offer
    # suggestions whenever kb.status() does (kb.status() bounds its search for speed, so the two
    # lists may rank differently; the cases of the issue are checked by name below).
    def agree(e: dict, g: dict) -> bool:
        if "unknown" in e or "unknown" in g:
            return "unknown" in e and "unknown" in g and bool(g["unknown"]) >= bool(e["unknown"])
        return e == g

    mismatches = [(c["framework"], c["op"], e, g) for c, e, g in zip(cases, expected, got) if not agree(e, g)]
    assert not mismatches, mismatches[:3]
    # The cases of the issue: short names are never an all-clear, and the full name is offered.
    by_op = {(c["framework"], c["op"]): g for c, g in zip(cases, got)}
    assert "tf.nn.bias_add" in by_op[("tensorflow", "bias_add")]["unknown"]
    assert any("index_add" in s for s in by_op[("pytorch", "index_add")]["unknown"])
    assert any("scatter_add" in s for s in by_op[("pytorch", "scatter_add")]["unknown"])
    assert by_op[("tensorflow", "tf.add")]["status"]["deterministic"] is True  # a real op with no record


# --- call facts: the page answers kb.status(..., call=...) (docs/calls.md) ----------------------

CALL_RUNNER = """
const core = require(process.argv[1]);
const fs = require('fs');
const data = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const cases = JSON.parse(fs.readFileSync(0, 'utf8'));
process.stdout.write(JSON.stringify(cases.map(c => {
  try {
    const call = c.call === null ? null : core.parseCall(c.call);
    return core.lookup(data, {}, c.op, c.version, c.framework, 'gpu', null, call);
  } catch (e) { return {error: e.message}; }
})));
"""
CALLS = [None, "method=bilinear", "method=nearest", "method=bilinear, antialias=True", "antialias=False",
         "method='bicubic', antialias=False", "input.ndim=2", "input.ndim=3", "input.dtype=float, input.ndim=1",
         "input.dtype=int", "input.dtype=float", "bogus=1", "input.ndim=-1", "method=None"]


def _call_of(text: str | None) -> dict | None:
    """The CLI's reading of `--call KEY=VALUE` (kb/cli.py), for the same text the page reads."""
    from kb.cli import _parse_call

    return None if text is None else _parse_call([item.strip() for item in text.split(",")])


def test_call_facts_answer_like_kb_status(tmp_path) -> None:
    """Records with `calls:` and a range `when:` (the fixtures of test_calls.py): same answers, same
    conditions, same sources left out, and an error where kb.status() raises ValueError."""
    if NODE is None:
        pytest.skip("node is not installed: the JS logic cannot run outside a browser here")
    from kb.catalog import load
    from test_calls import MINI, RESIZE, SEGMENT

    root = tmp_path / "project"
    shutil.copytree(MINI, root)
    for name, text in (("tf.resize-sample", RESIZE), ("tf.segment-sample", SEGMENT)):
        (root / "data/sources/tensorflow" / f"{name}.yaml").write_text(text, encoding="utf-8")
    catalog = load(root)
    index = build_index(catalog)
    path = tmp_path / "all.json"
    cases, expected = [], []
    query.reset(index)
    try:
        path.write_text(api.files(catalog, index)[f"{api.PREFIX}/all.json"])
        for op in ("tf.image.resize", "tf.math.segment_sum", "tf.resize-sample"):
            for version in ("2.0", "2.1", "2.3"):
                for text in CALLS:
                    cases.append({"op": op, "version": version, "framework": "tensorflow", "call": text})
                    try:
                        st = kb.status(op, version, framework="tensorflow", call=_call_of(text)).to_dict()
                    except ValueError:
                        expected.append("error")
                        continue
                    expected.append({**_project(st), "excluded": list(st["excluded"]), "depends": st["depends_on_call"],
                                     "conditions": [[s["id"], s["condition"], s["applies"]] for s in st["sources"]]})
    finally:
        query.reset()
    result = subprocess.run([NODE, "-e", CALL_RUNNER, str(CORE), str(path)], input=json.dumps(cases),
                            capture_output=True, text=True, check=True)
    got = []
    for g in json.loads(result.stdout):
        if "error" in g:
            got.append("error")
            continue
        st = g["status"]
        got.append({**_project(st), "excluded": st["excluded"], "depends": st["depends_on_call"],
                    "conditions": [[s["id"], s["condition"], s["applies"]] for s in st["sources"]]})
    mismatches = [(c, e, g) for c, e, g in zip(cases, expected, got) if e != g]
    assert not mismatches, mismatches[:3]
    assert expected.count("error") >= 6 and sum(1 for e in expected if e != "error" and e["excluded"]) >= 6


# --- issue 31 item 6: hostile permalinks (stack.html?op=...&call=...) -----------------------------

HOSTILE_RUNNER = """
const core = require(process.argv[1]);
const fs = require('fs');
const data = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const cases = JSON.parse(fs.readFileSync(0, 'utf8'));
const out = cases.map(c => {
  try {
    const found = core.lookup(data, {}, c.op, c.version, c.framework, 'gpu', null, core.parseCall(c.call));
    return found.unknown ? {unknown: true} : {answer: found.status.deterministic, sources: found.status.sources.length};
  } catch (e) { return {error: String(e.message).slice(0, 200)}; }
});
const polluted = ({}).t !== undefined || ({}).v !== undefined || Object.prototype.polluted !== undefined;
process.stdout.write(JSON.stringify({out, polluted}));
"""

PROTO_NAMES = ["__proto__", "constructor", "prototype", "hasOwnProperty", "toString", "valueOf",
               "__defineGetter__", "tf.__proto__", "torch.constructor"]


@pytest.mark.parametrize("framework", ["tensorflow", "pytorch"])
def test_prototype_names_as_op_are_unknown_like_kb_status(setup, framework: str) -> None:
    _, _, path = setup
    cases = [{"op": op, "version": "2.10", "framework": framework, "call": ""} for op in PROTO_NAMES]
    result = subprocess.run([NODE, "-e", HOSTILE_RUNNER, str(CORE), str(path)], input=json.dumps(cases),
                            capture_output=True, text=True, check=True, timeout=60)
    doc = json.loads(result.stdout)
    assert not doc["polluted"]
    for op, got in zip(PROTO_NAMES, doc["out"]):
        with pytest.raises((kb.UnknownOpError, ValueError)):
            kb.status(op, "2.10", framework=framework)
        assert got == {"unknown": True} or "error" in got, (op, got)


@pytest.mark.parametrize("call", ["__proto__=1", "__proto__={'t': 1}", "constructor=1", "prototype=1",
                                  "toString=x", "__proto__=1,input.ndim=4"])
def test_prototype_keys_in_a_call_are_ordinary_keys(setup, call: str) -> None:
    """A call key named like an Object member is an ordinary (unknown) key, answered exactly as
    any other unknown key (all.json carries no parameter lists, so the page does not refuse
    unknown keys as kb.status() does), and it pollutes no prototype."""
    _, _, path = setup
    op = "torch.nn.functional.interpolate"
    plain = call.replace("__proto__", "zz_key").replace("constructor", "zz_key").replace("prototype", "zz_key") \
        .replace("toString", "zz_key")
    cases = [{"op": op, "version": "2.10", "framework": "pytorch", "call": c} for c in (call, plain)]
    runner = HOSTILE_RUNNER.replace("const polluted", "const keys = cases.map(c => Object.keys(core.parseCall(c.call)).length);\nconst polluted") \
        .replace("JSON.stringify({out, polluted})", "JSON.stringify({out, polluted, keys})")
    result = subprocess.run([NODE, "-e", runner, str(CORE), str(path)], input=json.dumps(cases),
                            capture_output=True, text=True, check=True, timeout=60)
    doc = json.loads(result.stdout)
    assert not doc["polluted"]
    assert doc["out"][0] == doc["out"][1]
    assert doc["keys"][0] == doc["keys"][1] == call.count("=")  # the key is kept, not swallowed as a prototype


def test_huge_permalink_values_answer_fast(setup) -> None:
    import time

    _, _, path = setup
    cases = [{"op": "x" * 2_000_000, "version": "2.10", "framework": "pytorch", "call": ""},
             {"op": "torch.nn.functional.interpolate", "version": "2.10", "framework": "pytorch",
              "call": ",".join(f"k{i}=1" for i in range(100_000))},
             {"op": "torch.nn.functional.interpolate", "version": "9" * 100_000, "framework": "pytorch", "call": ""}]
    start = time.monotonic()
    result = subprocess.run([NODE, "-e", HOSTILE_RUNNER, str(CORE), str(path)], input=json.dumps(cases),
                            capture_output=True, text=True, check=True, timeout=120)
    assert time.monotonic() - start < 30
    out = json.loads(result.stdout)["out"]
    assert "error" in out[0] and "1 to 256" in out[0]["error"]  # bounded as kb.status() bounds it
    assert "error" in out[2] and "at most 64" in out[2]["error"]


# --- tf.keras in TensorFlow 2.16 and later is Keras 3 (kb/query/tfkeras.py) ----------------------------

def test_tf_keras_answers_like_kb_status(setup, tmp_path) -> None:
    """Every tf.keras.* op a record names, at releases before, at and after Keras 3 began (2.22: a wheel
    not read), on each device and with calls: the page gives kb.status()'s Keras 3 answer."""
    catalog, index, _ = setup
    path = tmp_path / "all.json"
    cases, expected = [], []
    query.reset(index)
    try:
        path.write_text(api.files(catalog, index)[f"{api.PREFIX}/all.json"])  # with params, as the site has
        ops = sorted({op for table in index["names"].values() for op in table if op.startswith("tf.keras.")})
        assert "tf.keras.layers.Dropout" in ops
        for op in ops:
            for version in ("2", "2.15", "2.16", "2.16.1", "2.17", "2.20", "2.21", "2.22"):
                for device in ("gpu", "cpu"):
                    for text in (None, "seed=1", "seed=None"):
                        if text is not None and op != "tf.keras.layers.Dropout":
                            continue
                        st = kb.status(op, version, framework="tensorflow", device=device, call=_call_of(text)).to_dict()
                        cases.append({"op": op, "version": version, "framework": "tensorflow", "device": device,
                                      "call": text})
                        expected.append({**_project(st), "excluded": list(st["excluded"]), "depends": st["depends_on_call"]})
    finally:
        query.reset()
    runner = CALL_RUNNER.replace("'gpu'", "c.device")
    result = subprocess.run([NODE, "-e", runner, str(CORE), str(path)], input=json.dumps(cases),
                            capture_output=True, text=True, check=True)
    got = [{**_project(g["status"]), "excluded": g["status"]["excluded"], "depends": g["status"]["depends_on_call"]}
           for g in json.loads(result.stdout)]
    mismatches = [(c, e, g) for c, e, g in zip(cases, expected, got) if e != g]
    assert not mismatches, mismatches[:3]
    dropout = [e for c, e in zip(cases, expected) if c["op"] == "tf.keras.layers.Dropout" and c["call"] is None]
    assert [s[0] for s in dropout[0]["sources"]] == ["tf.random-seeds"]  # "2": no single Keras requirement
    assert all([s[0] for s in e["sources"]] == ["keras.unseeded-random"] for e in dropout[4:])  # 2.16 on


def test_js_call_facts_mirror_kb_calls() -> None:
    """The page's FACTS list is kb/calls.py's: a fact the page does not know (at.method) would be
    read as a parameter and answer differently from kb.status."""
    import re

    from kb import calls

    text = CORE.read_text(encoding="utf-8")
    listed = re.search(r"var FACTS = \[([^\]]*)\]", text)
    assert listed is not None
    assert tuple(json.loads("[" + listed.group(1) + "]")) == calls.FACTS


def test_jax_at_method_answers_like_kb_status(setup) -> None:
    """x.at[i].set / .add / .get are one name told apart by the at.method fact: the page answers
    each as kb.status does on the real data (set and add differ, get's gradient is a gather's)."""
    catalog, index, path = setup
    texts = ["at.method=set", "at.method=set, unique_indices=False", "at.method=set, unique_indices=True",
             "at.method=add", "at.method=get", None]
    cases, expected = [], []
    query.reset(index)
    try:
        for text in texts:
            cases.append({"op": "jax.numpy.ndarray.at", "version": "0.11.2", "framework": "jax", "call": text})
            st = kb.status("jax.numpy.ndarray.at", "0.11.2", framework="jax", call=_call_of(text)).to_dict()
            expected.append({**_project(st), "depends": st["depends_on_call"]})
    finally:
        query.reset()
    result = subprocess.run([NODE, "-e", CALL_RUNNER, str(CORE), str(path)], input=json.dumps(cases),
                            capture_output=True, text=True, check=True)
    got = [{**_project(g["status"]), "depends": g["status"]["depends_on_call"]} for g in json.loads(result.stdout)]
    assert got == expected, [{k: (e[k], g[k]) for k in e if e[k] != g[k]} for e, g in zip(expected, got)]
    ids = [[s[0] for s in e["sources"]] for e in expected]
    # get is a gather: only its gradient (a scatter-add) is a source (jax.gather-backward)
    assert ids[1] == ["jax.at-set-repeated-indices"] and ids[3] == ["jax.scatter-add"] and ids[4] == ["jax.gather-backward"]
    assert ids[2] == ["jax.at-set-unique-indices-promise"] and expected[2]["recipe"] is None
