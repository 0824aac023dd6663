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
from kb.lint import run
from kb.site import api, model
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
    }


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    if NODE is None:
        pytest.skip("node is not installed: the JS logic cannot run outside a browser here")
    catalog, _ = run(ROOT)
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
    assert not mismatches, mismatches[:3]


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
