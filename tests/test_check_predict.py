"""`kb check`'s prediction from a fixture knowledge base: an inventory written here (the calls
a program made, with their facts) is answered from records written here, and the predicted
outcome under the recipe is the one each record's switch and solutions imply. No framework
is imported; no GPU is needed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from kbproject import answering, compiled

from kb.check.predict import predict

MINI = Path(__file__).parent / "fixtures" / "mini"

VERSIONS = """\
# yaml-language-server: $schema=../../schema/versions.schema.json
name: pytorch
framework: pytorch
source: test fixture
releases:
  - version: 2.10.0
  - version: 2.11.0
"""

SOLUTIONS = """\
- code: PT_DET
  title: torch.use_deterministic_algorithms(True)
  frameworks: [pytorch]
  kind: call
  how: Call it at program start.
  phase: 30
  preference: 10
  implies: [PT_DETW]
- code: PT_DETW
  title: torch.use_deterministic_algorithms(True, warn_only=True)
  frameworks: [pytorch]
  kind: call
  how: Warn instead of raising.
  phase: 30
  preference: 30
- code: SEED
  title: Seed every pseudorandom number generator
  frameworks: [pytorch]
  kind: practice
  how: Seed them.
  phase: 30
  preference: 10
- code: PT_EAGER_OP
  title: Keep the op eager inside torch.compile
  frameworks: [pytorch]
  kind: practice
  how: Wrap it in torch.compiler.disable.
  phase: 40
  preference: 70
"""

SIGNATURES = """\
torch.nn.functional.conv2d\tinput\tweight\tbias=None\tstride=1\tpadding=0\tdilation=1\tgroups=1
torch.nn.functional.cross_entropy\tinput\ttarget\tweight=None\tsize_average=None\tignore_index=-100\treduce=None\treduction='mean'\tlabel_smoothing=0.0
torch.cumsum\tinput\tdim\tdtype=None\tout=None
torch.nn.functional.relu\tinput\tinplace=False
torch.nn.functional.adaptive_avg_pool2d\tinput\toutput_size
"""


def record(rid: str, op: str, pass_: str, status: str, calls: str = "") -> str:
    return f"""\
# yaml-language-server: $schema=../../../schema/source.schema.json
id: {rid}
framework: pytorch
title: {rid}
ops:
  - {op}
device: gpu
pass: {pass_}
mechanism: cuda-atomics
summary: A fixture record.
{calls}status:
{status}
references:
  - kind: doc
    url: https://example.org/{rid}
    title: fixture
verify:
  unverifiable: A test fixture.
"""


RECORDS = {
    "torch.fx-conv": record("torch.fx-conv", "torch.nn.functional.conv2d", "backward",
                            "  - versions: '>=2.10'\n    solutions: [PT_DET, PT_DETW]\n    switch: fixes\n"),
    "torch.fx-nll": record("torch.fx-nll", "torch.nn.functional.cross_entropy", "forward",
                           "  - versions: '>=2.10'\n    raises: RuntimeError\n    switch: raises\n",
                           "calls:\n  - when:\n      input.ndim: [3, 4, 5]\n"),
    "torch.adaptive-avg-pool-fx": record("torch.adaptive-avg-pool-fx", "torch.nn.functional.adaptive_avg_pool2d",
                                         "backward", "  - versions: '>=2.10'\n    raises: RuntimeError\n    switch: raises\n"),
    "torch.fx-scan": record("torch.fx-scan", "torch.cumsum", "both",
                            "  - versions: '>=2.10'\n    solutions: [PT_EAGER_OP]\n    switch: silent\n"),
}


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("check") / "project"
    shutil.copytree(MINI, root)
    data = root / "data"
    (data / "versions" / "pytorch.yaml").write_text(VERSIONS, encoding="utf-8")
    solutions = (data / "solutions.yaml").read_text(encoding="utf-8")
    (data / "solutions.yaml").write_text(solutions.rstrip("\n") + "\n" + SOLUTIONS, encoding="utf-8")
    (data / "api" / "pytorch.signatures.txt").write_text("# pytorch 2.11.0 test signatures\n" + SIGNATURES, encoding="utf-8")
    (data / "sources" / "pytorch").mkdir(parents=True)
    for rid, text in RECORDS.items():
        (data / "sources" / "pytorch" / f"{rid}.yaml").write_text(text, encoding="utf-8")
    return compiled(root, allowed=("KB009",))  # canonical key order is not what is tested here


def call(op: str, facts: dict | None = None, *, grad: bool = True, device: str = "gpu") -> dict:
    return {"op": op, "call": facts or {}, "device": device, "count": 1, "modules": ["Net"], "grad": grad,
            "shown": op.rsplit(".", 1)[-1] + "()", "step": 0}


def run(index: dict, calls: list[dict], **inventory) -> dict:
    with answering(index):
        return predict({"calls": calls, **inventory}, {}, {"pytorch": "2.11.0"}, "gpu")


CONV = call("torch.nn.functional.conv2d", {"input.ndim": 4, "input.dtype": "float32"})
RELU = call("torch.nn.functional.relu", {"input.ndim": 4})


def test_a_source_the_switch_fixes_is_predicted_fixed_with_its_recipe(index: dict) -> None:
    p = run(index, [CONV, RELU])
    assert p["under_recipe"] == "fixed" and p["expect"] == "identical"
    assert p["recipe"] == ["PT_DET"] and p["applied"] == ["PT_DET"]
    assert p["as_written"] == "differs" and p["as_written_expect"] == "differs"
    assert [f["source"]["id"] for f in p["findings"]] == ["torch.fx-conv"]
    assert "relu()" in p["unverified"]  # no record: no known source, not verified


def test_a_source_the_switch_raises_for_is_predicted_raises_naming_the_call(index: dict) -> None:
    p = run(index, [CONV, call("torch.nn.functional.cross_entropy", {"input.ndim": 4, "target": "int64"})])
    assert p["under_recipe"] == "raises" and p["expect"] == "raises"
    assert p["raising"] == ["torch.nn.functional.cross_entropy"]


def test_the_call_facts_decide_a_conditional_record(index: dict) -> None:
    p = run(index, [CONV, call("torch.nn.functional.cross_entropy", {"input.ndim": 2, "target": "int64"})])
    assert p["under_recipe"] == "fixed", p["findings"]  # a 2-D input is not the spatial kernel


def test_a_silent_source_still_differs_and_names_its_code_change(index: dict) -> None:
    p = run(index, [CONV, call("torch.cumsum", {"input.ndim": 1, "dim": 0})])
    assert p["under_recipe"] == "differs" and p["differing"] == ["torch.cumsum"]
    assert p["fixes_for_differing"]["torch.cumsum"] == [{"code": "PT_EAGER_OP", "applied_by_check": False}]
    assert "PT_EAGER_OP" in p["not_applied"]


def test_a_backward_source_needs_a_gradient_through_the_call(index: dict) -> None:
    p = run(index, [call("torch.nn.functional.conv2d", {"input.ndim": 4}, grad=False), RELU])
    assert p["findings"] == [] and p["under_recipe"] == "unknown"
    conv = next(a for a in p["answers"] if a["op"] == "torch.nn.functional.conv2d")
    assert conv["not_applying"][0]["id"] == "torch.fx-conv"


def test_no_known_source_is_unknown_never_deterministic(index: dict) -> None:
    p = run(index, [RELU])
    assert p["under_recipe"] == "unknown" and p["expect"] == "identical" and p["recipe"] == []
    assert p["as_written"] == "unknown"


def test_unseeded_random_draws_are_a_finding_the_seed_fixes(index: dict) -> None:
    p = run(index, [RELU], draws_before_seed={"torch.nn.functional.dropout": 3}, reseeded=["torch.seed"])
    assert p["under_recipe"] == "fixed" and p["recipe"] == ["SEED"] and p["applied"] == ["SEED"]
    assert p["as_written"] == "differs"
    assert "torch.seed" in p["findings"][0]["shown"]


def test_the_prediction_is_json_without_nan(index: dict) -> None:
    p = run(index, [CONV, call("torch.cumsum", {"input.ndim": 1})])
    json.loads(json.dumps(p, allow_nan=False))


def test_adaptive_pooling_to_size_one_is_a_mean(index: dict) -> None:
    pool = call("torch.nn.functional.adaptive_avg_pool2d", {"input.ndim": 4})
    assert run(index, [CONV, dict(pool, output_ones=False)])["under_recipe"] == "raises"
    p = run(index, [CONV, dict(pool, output_ones=True)])
    assert p["under_recipe"] == "fixed"
    answer = next(a for a in p["answers"] if a["op"] == "torch.nn.functional.adaptive_avg_pool2d")
    assert "mean" in answer["not_applying"][0]["why"]
