"""kb.status() semantics (shared/DESIGN.md's contract) on a small fixture project whose records
are written here, so each case states exactly what it exercises and editing data/ breaks none.

The project is the lint tests' mini fixture plus the records, solutions and release registries
below, compiled and swapped in with `query.reset(index)`. Only the API inventory (data/api/,
which names real public ops such as tf.add) comes from the checkout. The few cases that must
hold on the real data are in tests/test_query.py, marked `contract`.
"""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pytest

import kb
from kb import query, versions
from kb.catalog import load
from kb.compile import build_index
from kb.entries import HI, LO, VERSIONS
from kbproject import answering, compiled

MINI = Path(__file__).parent / "fixtures" / "mini"
HEADER = "# yaml-language-server: $schema=../../../schema/source.schema.json\n"
REFERENCE = "references:\n  - kind: pr\n    repo: tensorflow/tensorflow\n    number: 31465\n"

SOLUTIONS = """\
# yaml-language-server: $schema=../schema/solutions.schema.json
- code: TDO
  title: TF_DETERMINISTIC_OPS
  frameworks: [tensorflow]
  kind: env
  how: Set TF_DETERMINISTIC_OPS=1.
  phase: 10
  preference: 10
- code: TCD
  title: TF_CUDNN_DETERMINISTIC
  frameworks: [tensorflow]
  kind: env
  how: Set TF_CUDNN_DETERMINISTIC=1.
  phase: 10
  preference: 20
- code: TDP
  title: tfdeterminism.patch()
  frameworks: [tensorflow]
  kind: patch
  how: Call tfdeterminism.patch() after importing TensorFlow; it sets TF_CUDNN_DETERMINISTIC too.
  phase: 30
  preference: 30
  implies: [TCD]
- code: NS
  title: No solution
  frameworks: [tensorflow, horovod]
  kind: none
  how: Written as an empty solutions list.
  phase: 99
  preference: 99
- code: HFT0
  title: Disable Horovod Tensor Fusion
  frameworks: [horovod]
  kind: env
  how: Set HOROVOD_FUSION_THRESHOLD=0.
  phase: 10
  preference: 20
"""

TENSORFLOW = """\
# yaml-language-server: $schema=../../schema/versions.schema.json
name: tensorflow
framework: tensorflow
source: test fixture
releases:
""" + "".join(f"  - version: {v}\n" for v in ("1.13.0", "1.14.0", "1.15.0", "2.0.0", "2.1.0", "2.2.0", "2.3.0", "2.4.0"))

NGC = """\
# yaml-language-server: $schema=../../schema/versions.schema.json
name: ngc-tensorflow
framework: tensorflow
source: test fixture
releases:
  - version: '19.06'
    based_on: ['1.13']
  - version: '20.06'
    based_on: ['1.15']
"""


def record(rid: str, ops: list[str], status: str, device: str = "gpu", extra: str = "") -> str:
    return (HEADER + f"id: {rid}\nframework: tensorflow\ntitle: {rid} sample\nops:\n"
            + "".join(f"  - {op}\n" for op in ops)
            + f"device: {device}\npass: backward\nmechanism: cuda-atomics\nsummary: A fixture record.\n"
            + "status:\n" + status + extra + REFERENCE)


RECORDS = {
    # <1.14: a range with no solution; 1.14-2.0: the patch only; 2.1 on: the env var.
    "tf.bias": record("tf.bias", ["tf.nn.bias_add", "tf.keras.layers.Conv2D"],
                      "  - versions: <1.14\n  - versions: '>=1.14,<2.1'\n    solutions: [TDP]\n"
                      "  - versions: '>=2.1'\n    solutions: [TDO]\n",
                      extra="aliases:\n  - tf.nn.bias_add_v1\ndistributions:\n  ngc:\n"
                            "    - versions: '>=19.06,<20.06'\n      solutions: [TDO]\n"),
    # TCD alone, or TDO: with tf.bias on Conv2D at 1.15 the recipe is TDP (which implies TCD).
    "tf.cudnn": record("tf.cudnn", ["tf.keras.layers.Conv2D"], "  - versions: '>=1.14'\n    solutions: [TCD]\n"),
    # no solution from 2.0 on; requesting determinism raises from 2.3
    "tf.resize": record("tf.resize", ["tf.image.resize"],
                        "  - versions: '>=1.14,<2.3'\n    solutions: []\n"
                        "  - versions: '>=2.3'\n    solutions: []\n    raises: tf.errors.UnimplementedError\n"),
    # deterministic by default up to 2.0, then a gap (unknown), then fixed by TDO
    "tf.ctc": record("tf.ctc", ["tf.nn.ctc_loss"],
                     "  - versions: '>=1.14,<2.1'\n    deterministic: true\n"
                     "  - versions: '>=2.3'\n    solutions: [TDO]\n"),
    # one op, a GPU record and a CPU record
    "tf.crop": record("tf.crop", ["tf.image.crop_and_resize"], "  - versions: '>=1.14'\n    solutions: []\n"),
    "tf.crop-cpu": record("tf.crop-cpu", ["tf.image.crop_and_resize"], "  - versions: '>=1.14'\n    solutions: [TDO]\n",
                          device="cpu"),
}


def project(root: Path, records: dict[str, str] = RECORDS) -> Path:
    shutil.copytree(MINI, root)
    (root / "data/solutions.yaml").write_text(SOLUTIONS, encoding="utf-8")
    (root / "data/versions/tensorflow.yaml").write_text(TENSORFLOW, encoding="utf-8")
    (root / "data/versions/ngc-tensorflow.yaml").write_text(NGC, encoding="utf-8")
    (root / "data/sources/tensorflow/tf.sample.yaml").unlink()
    for rid, text in records.items():
        (root / "data/sources/tensorflow" / f"{rid}.yaml").write_text(text, encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = project(tmp_path_factory.mktemp("api") / "project")
    return compiled(root, allowed=("KB009",))  # KB009: field order, not meaning


@pytest.fixture()
def idx(built: dict):
    with answering(built):
        yield built


def test_answer_from_a_range_with_a_solution(idx: dict) -> None:
    s = kb.status("tf.nn.bias_add", "1.15")
    assert (s.deterministic, s.solutions, s.recipe) == (False, ("TDP",), ("TDP",))
    assert [src.id for src in s.sources] == ["tf.bias"] and s.sources[0].versions == ">=1.14,<2.1"
    assert any(r.kind == "pr" and r.number == 31465 for r in s.references)


@pytest.mark.parametrize("version", ["2.1", "2.1.0", "2.1.4", "2.1.0rc1", "2.1.0.post1"])
def test_release_forms_answer_alike(idx: dict, version: str) -> None:
    s = kb.status("tf.nn.bias_add", version)
    assert (s.deterministic, s.solutions, s.recipe) == (False, ("TDO",), ("TDO",))


def test_recipe_uses_implications_and_phase_order(idx: dict) -> None:
    conv = kb.status("tf.keras.layers.Conv2D", "1.15")
    assert {s.id for s in conv.sources} == {"tf.bias", "tf.cudnn"}
    assert conv.solutions == ("TCD", "TDP")  # phase 10 before phase 30
    assert conv.recipe == ("TDP",)  # the patch implies TCD: one code covers both
    assert kb.status("tf.keras.layers.Conv2D", "2.2").recipe == ("TDO", "TCD")  # no implication: both, by phase


def test_a_range_without_solutions_gives_no_recipe(idx: dict) -> None:
    s = kb.status("tf.image.resize", "2.0")
    assert s.deterministic is False and s.recipe is None and s.solutions == ()
    raising = kb.status("tf.image.resize", "2.3")
    assert raising.sources[0].raises == "tf.errors.UnimplementedError" and raising.recipe is None


def test_a_gap_between_ranges_is_unknown(idx: dict) -> None:
    s = kb.status("tf.nn.ctc_loss", "2.2")
    assert s.deterministic is None and s.recipe is None and s.solutions == ()
    assert s.sources[0].deterministic is None and s.sources[0].versions is None


def test_deterministic_by_default(idx: dict) -> None:
    s = kb.status("tf.nn.ctc_loss", "1.15")
    assert (s.deterministic, s.solutions, s.recipe) == (True, (), ())


def test_a_public_op_without_a_record_is_not_verified(idx: dict) -> None:
    """DESIGN.md: a real public op with no record and no evidence is "no known source, not verified":
    deterministic None (never True without a basis), basis unverified. (The fixture has no data/basis,
    so tf.add's elementwise kernel class is not known here.)"""
    plain = kb.status("tf.add", "2.1")  # in data/api/tensorflow.txt, in no record
    assert (plain.deterministic, plain.solutions, plain.recipe, plain.sources) == (None, (), (), ())
    assert plain.basis == "unverified" and plain.headline == "no known source, not verified"
    assert str(plain).endswith(": no known source, not verified")


def test_record_id_and_alias_name_the_record(idx: dict) -> None:
    assert kb.status("tf.bias", "2.0").solutions == ("TDP",)
    assert [s.id for s in kb.status("tf.nn.bias_add_v1", "2.2").sources] == ["tf.bias"]


def test_device_filter(idx: dict) -> None:
    gpu = kb.status("tf.image.crop_and_resize", "2.2")
    cpu = kb.status("tf.image.crop_and_resize", "2.2", device="cpu")
    assert [s.id for s in gpu.sources] == ["tf.crop"] and gpu.recipe is None
    assert [s.id for s in cpu.sources] == ["tf.crop-cpu"] and cpu.recipe == ("TDO",)
    assert len(kb.status("tf.image.crop_and_resize", "2.2", device="any").sources) == 2


def test_ngc_distribution(idx: dict) -> None:
    assert kb.status("tf.nn.bias_add", "19.06", distribution="ngc").recipe == ("TDO",)
    assert kb.status("tf.nn.bias_add", "20.06", distribution="ngc").deterministic is None  # past the range
    unknown = kb.status("tf.nn.bias_add", "19.05", distribution="ngc")
    assert any("not a known ngc release" in n for n in unknown.notes)


def test_an_unknown_release_is_noted_not_refused(idx: dict) -> None:
    s = kb.status("tf.nn.bias_add", "2.99")
    assert s.recipe == ("TDO",)
    assert s.notes and "2.99 is not a known tensorflow release (latest known: 2.4.0)" in s.notes[0]


def test_unknown_op_error_has_close_matches(idx: dict) -> None:
    with pytest.raises(kb.UnknownOpError) as info:
        kb.status("tf.nn.bias_ad", "2.1")
    assert isinstance(info.value, LookupError)
    assert "tf.nn.bias_add" in info.value.suggestions and "tf.nn.bias_add" in str(info.value)


def test_unknown_prefix_and_wrong_framework(idx: dict) -> None:
    with pytest.raises(kb.UnknownOpError, match="cannot tell the framework"):
        kb.status("nn.bias_add", "2.1")
    with pytest.raises(kb.UnknownOpError):
        kb.status("tf.nn.bias_add", "2.1", framework="pytorch")


@pytest.mark.parametrize("version", ["", "2.x", "latest", "v-two"])
def test_bad_version_raises_value_error(idx: dict, version: str) -> None:
    with pytest.raises(ValueError):
        kb.status("tf.nn.bias_add", version)


@pytest.mark.parametrize("version", ["2.a", "2.A", "2-a", "2.alpha", "2.c", "2.rc", "2.pre", "2.1.0rc", "2.dev", "2.post",
                                     "2.r", "v2.a"])
def test_round3_l8_a_label_with_no_number_is_refused_not_read_as_the_release(idx: dict, version: str) -> None:
    """PEP 440 fills in a missing number ('2.a' is 2a0): the typo answered as 2.0 with no word."""
    with pytest.raises(ValueError, match=r"is not a version: its '[a-z]+' has no number.*expected a version such as"):
        kb.status("tf.nn.bias_add", version)


@pytest.mark.parametrize("version", ["2.1.0rc1", "2.1.0-rc1", "2.1.0.dev3", "2.1.0.post1", "2.1.0+cu118", "2.1.0a0+gitabc",
                                     "v2.1", "2.1rc1.post2.dev3"])
def test_round3_l8_labels_with_their_number_still_answer_as_the_release(idx: dict, version: str) -> None:
    assert kb.status("tf.nn.bias_add", version).recipe == kb.status("tf.nn.bias_add", "2.1").recipe == ("TDO",)


@pytest.mark.parametrize(("op", "owner"), [("tf.nn.bias_add", "tensorflow"), ("tf.add", "tensorflow"),
                                           ("tf.bias", "tensorflow"), ("torch.cumsum", "pytorch")])
def test_r4_l15_a_name_of_another_framework_says_whose_it_is(idx: dict, op: str, owner: str) -> None:
    """`kb status torch.cumsum 2.5 --framework jax` answered "did you mean: torch.cumsum, ...":
    the very name asked, offered as the fix."""
    with pytest.raises(kb.UnknownOpError) as info:
        kb.status(op, "2.1", framework="jax")
    assert op not in info.value.suggestions
    assert f"{op!r} is a {owner} name, not jax's" in str(info.value) and f"framework {owner}" in str(info.value)
    assert "did you mean" not in str(info.value)


def test_bad_device_and_distribution(idx: dict) -> None:
    with pytest.raises(ValueError, match="device"):
        kb.status("tf.nn.bias_add", "2.1", device="tpu")
    with pytest.raises(ValueError, match="distribution"):
        kb.status("tf.nn.bias_add", "2.1", distribution="conda")


def test_status_is_immutable_printable_and_serializable(idx: dict) -> None:
    s = kb.status("tf.nn.bias_add", "1.15")
    with pytest.raises(AttributeError):
        s.deterministic = True  # type: ignore[misc]
    with pytest.raises(AttributeError):
        s.sources[0].solutions = ()  # type: ignore[misc]
    assert "NOT deterministic" in str(s) and "TDP" in str(s)
    assert repr(s).startswith("Status(op='tf.nn.bias_add'")
    data = json.loads(json.dumps(s.to_dict()))
    assert data["solutions"] == ["TDP"] and data["sources"][0]["pass"] == "backward"
    query.reset(idx)  # a fresh evaluation, not the memoized answer
    again = kb.status("tf.nn.bias_add", "1.15")
    assert again is not s and again == s and hash(again) == hash(s)


def test_every_range_answers_through_the_evaluator(idx: dict) -> None:
    """The query's inlined interval test agrees with versions.contains for every range."""
    probes = [versions.key_to_str(k) for k in idx["registries"]["tensorflow"]["keys"]] + ["0.1", "2.2.5", "99.0"]
    for source_id, source in idx["sources"].items():
        for probe in probes:
            key = versions.release_key(probe)
            matches = [r for r in source["status"] if versions.contains(r[LO], r[HI], key)]
            assert len(matches) <= 1
            answer = kb.status(source_id, probe, device="any").sources[0]
            assert answer.versions == (matches[0][VERSIONS] if matches else None), (source_id, probe)


def test_answers_do_not_depend_on_record_order(tmp_path: Path, idx: dict) -> None:
    """Ranges, ops and the order records load in shuffled: every answer stays equal."""
    rng = random.Random(20261126)
    shuffled = {}
    for rid in rng.sample(sorted(RECORDS), len(RECORDS)):
        head, status_and_rest = RECORDS[rid].split("status:\n")
        lines = status_and_rest.split("\n")
        ranges, rest, current = [], [], None
        for line in lines:  # the status block: one item per '  - versions:' line and its continuation
            if line.startswith("  - versions:"):
                current = [line]
                ranges.append(current)
            elif line.startswith("    ") and current is not None and not rest:
                current.append(line)
            else:
                rest.append(line)
                current = None
        rng.shuffle(ranges)
        shuffled[rid] = head + "status:\n" + "\n".join(line for r in ranges for line in r) + "\n" + "\n".join(rest)
    other = build_index(load(project(tmp_path / "p", shuffled)))
    ops = sorted({n for table in idx["names"].values() for n in table}) + sorted(idx["sources"])
    probes = ["1.13", "1.14", "1.15.5", "2.0", "2.1", "2.2", "2.3", "2.4", "2.99"]
    before = {(op, v): kb.status(op, v, device="any") for op in ops for v in probes}
    query.reset(other)
    assert {(op, v): kb.status(op, v, device="any") for op in ops for v in probes} == before


def test_parameters_of_a_record_op_come_from_the_compiled_index(idx: dict) -> None:
    # tests/fixtures/mini/data/api/tensorflow.signatures.txt, compiled into the index
    assert kb.parameters("tf.nn.bias_add") == (
        ("value", kb.NO_DEFAULT), ("bias", kb.NO_DEFAULT), ("data_format", None), ("name", None))
    with pytest.raises(kb.UnknownOpError):
        kb.parameters("tf.nn.bias_ad")
