"""`tf.keras.*` where TensorFlow's tf.keras is Keras 3 (kb/query/tfkeras.py), on a fixture project
whose records and registries are written here: the Keras release a TensorFlow release admits
(data/versions/tensorflow.yaml `keras:`), the Keras records answering beside the TensorFlow ones,
`op_versions` ending a TensorFlow record's Keras-2 op, and releases before Keras 3 answering as
before. The real data's answers are checked at the end (`kb status tf.keras.layers.Dropout`).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import kb
from kb.cli import main
from kb.lint import run
from kbproject import answering, compiled

MINI = Path(__file__).parent / "fixtures" / "mini"
REFERENCE = "references:\n  - kind: pr\n    repo: tensorflow/tensorflow\n    number: 31465\n"

SOLUTIONS = """\
# yaml-language-server: $schema=../schema/solutions.schema.json
- code: SEED
  title: Seed every generator
  frameworks: [tensorflow]
  kind: call
  how: tf.random.set_seed(1).
  phase: 30
  preference: 10
- code: TDO
  title: TF_DETERMINISTIC_OPS
  frameworks: [tensorflow]
  kind: env
  how: Set TF_DETERMINISTIC_OPS=1.
  phase: 10
  preference: 10
- code: KERAS_SEED
  title: keras.utils.set_random_seed
  frameworks: [keras]
  kind: call
  how: keras.utils.set_random_seed(1).
  phase: 30
  preference: 10
- code: KERAS_LSEED
  title: Seed the layer
  frameworks: [keras]
  kind: call
  how: Pass seed= to the layer.
  phase: 40
  preference: 20
"""


def registry(name: str, framework: str, releases: str) -> str:
    return (f"# yaml-language-server: $schema=../../schema/versions.schema.json\nname: {name}\n"
            f"framework: {framework}\nsource: test fixture\nreleases:\n{releases}")


def keras_requirement(spec: str) -> str:
    return f"    keras:\n      requires: '{spec}'\n      read_from: tensorflow_cpu-fixture.whl\n"


# 2.15 names no requirement (answers as TensorFlow records say); 2.16.1 admits every Keras 3 release;
# 2.17.0 only 3.0 and 3.1 (a fixture bound, to see the newest *admitted* release chosen); 2.18.0 is
# a release whose wheel was not read.
TENSORFLOW = registry("tensorflow", "tensorflow", (
    "  - version: 2.1.0\n  - version: 2.15.0\n"
    "  - version: 2.16.1\n" + keras_requirement(">=3.0.0")
    + "  - version: 2.17.0\n" + keras_requirement(">=3.0.0,<3.2")
    + "  - version: 2.18.0\n"))
KERAS = registry("keras", "keras", "".join(f"  - version: {v}\n" for v in ("2.15.0", "3.0.0", "3.1.0", "3.2.0")))


def record(rid: str, framework: str, ops: list[str], status: str, *, device: str = "any", extra: str = "") -> str:
    return (f"# yaml-language-server: $schema=../../../schema/source.schema.json\nid: {rid}\nframework: {framework}\n"
            f"title: {rid} sample\nops:\n" + "".join(f"  - {op}\n" for op in ops)
            + f"device: {device}\npass: forward\nmechanism: prng-seeding\nsummary: A fixture record.\n"
            + extra + "status:\n" + status + REFERENCE)


RECORDS = {
    # TensorFlow's global seed: its Dropout entry is Keras 2's, so it ends before 2.16
    "tensorflow/tf.seeds": record(
        "tf.seeds", "tensorflow", ["tf.random.uniform", "tf.keras.layers.Dropout"],
        "  - versions: '>=2.0'\n    solutions: [SEED]\n",
        extra="op_versions:\n  - ops: [tf.keras.layers.Dropout]\n    versions: <2.16\n"
              "    note: Keras 3's Dropout draws from Keras's own generator\n"),
    # a TensorFlow kernel Keras 3 layers still reach: it stays beside the Keras records
    "tensorflow/tf.conv": record("tf.conv", "tensorflow", ["tf.keras.layers.Conv2D"],
                                 "  - versions: '>=2.0'\n    solutions: [TDO]\n", device="gpu"),
    # Keras 3's own generator: unseeded in 3.0 and 3.1, deterministic (a fixture claim) from 3.2
    "keras/keras.unseeded": record(
        "keras.unseeded", "keras", ["keras.layers.Dropout", "keras.layers.Conv2D"],
        "  - versions: '>=3.0,<3.2'\n    solutions: [KERAS_SEED, KERAS_LSEED]\n  - versions: '>=3.2'\n    deterministic: true\n",
        extra="calls:\n  - ops: [keras.layers.Dropout]\n    when:\n      seed: [null]\n"),
}


def project(root: Path, records: dict[str, str] = RECORDS) -> Path:
    shutil.copytree(MINI, root)
    (root / "data/solutions.yaml").write_text(SOLUTIONS, encoding="utf-8")
    (root / "data/versions/tensorflow.yaml").write_text(TENSORFLOW, encoding="utf-8")
    (root / "data/versions/keras.yaml").write_text(KERAS, encoding="utf-8")
    (root / "data/sources/tensorflow/tf.sample.yaml").unlink()
    (root / "data/sources/keras").mkdir(exist_ok=True)
    for rid, text in records.items():
        (root / "data/sources" / f"{rid}.yaml").write_text(text, encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = project(tmp_path_factory.mktemp("tfkeras") / "project")
    return compiled(root, allowed=("KB009",))  # KB009: field order, not meaning


@pytest.fixture()
def idx(built: dict):
    with answering(built):
        yield built


def _ids(s: kb.Status) -> list[str]:
    return [src.id for src in s.sources]


def test_the_requirement_is_compiled_per_release(idx: dict) -> None:
    rows = idx["registries"]["tensorflow"]["keras"]
    # (key, release, requirement, newest admitted Keras release, Keras 3 or later)
    assert [(r[1], r[2], r[3], r[4]) for r in rows] == [("2.16.1", ">=3.0.0", "3.2.0", True),
                                                        ("2.17.0", ">=3.0.0,<3.2", "3.1.0", True)]


def test_before_keras_3_the_tensorflow_record_answers(idx: dict) -> None:
    s = kb.status("tf.keras.layers.Dropout", "2.15")
    assert _ids(s) == ["tf.seeds"] and s.recipe == ("SEED",)
    assert not any("Keras 3" in n for n in s.notes)


def test_keras_3_answers_from_the_keras_records_at_the_admitted_release(idx: dict) -> None:
    newest = kb.status("tf.keras.layers.Dropout", "2.16.1")  # admits 3.2.0: deterministic there
    assert newest.framework == "tensorflow" and newest.deterministic is True and _ids(newest) == ["keras.unseeded"]
    assert any("answered for Keras 3.2.0" in n and "keras>=3.0.0" in n for n in newest.notes)
    assert any(n.startswith("tf.seeds does not apply to tf.keras.layers.Dropout in 2.16.1") for n in newest.notes)
    bounded = kb.status("tf.keras.layers.Dropout", "2.17")  # admits up to 3.1.0: unseeded there
    assert (bounded.deterministic, bounded.recipe, bounded.solutions) == (False, ("KERAS_SEED",), ("KERAS_SEED", "KERAS_LSEED"))
    assert any("answered for Keras 3.1.0" in n for n in bounded.notes)
    assert [r.number for r in bounded.references] == [31465]  # the Keras record's; the dropped record's are gone


def test_the_call_and_the_device_pass_through(idx: dict) -> None:
    assert kb.status("tf.keras.layers.Dropout", "2.17", call={"seed": 1}).deterministic is True
    assert kb.status("tf.keras.layers.Dropout", "2.17", call={"seed": None}).deterministic is False
    conv = kb.status("tf.keras.layers.Conv2D", "2.17")  # the TensorFlow kernel stays beside the Keras record
    assert _ids(conv) == ["tf.conv", "keras.unseeded"] and conv.recipe == ("TDO", "KERAS_SEED")
    assert _ids(kb.status("tf.keras.layers.Conv2D", "2.17", device="cpu")) == ["keras.unseeded"]


def test_a_release_whose_wheel_was_not_read_is_unknown_for_keras(idx: dict) -> None:
    s = kb.status("tf.keras.layers.Dropout", "2.18")
    assert s.deterministic is None and s.recipe is None and _ids(s) == ["keras.unseeded"]
    assert any("was not read from its wheel" in n and "2.16.1" in n for n in s.notes)


def test_other_ops_and_builds_are_untouched(idx: dict) -> None:
    assert _ids(kb.status("tf.random.uniform", "2.17")) == ["tf.seeds"]  # only the listed op is limited
    assert _ids(kb.status("tf.seeds", "2.17")) == ["tf.seeds"]
    assert _ids(kb.status("tf.keras.layers.Dropout", "2")) == ["tf.seeds"]  # a major series names no requirement


def test_op_versions_must_name_the_records_ops(tmp_path: Path) -> None:
    bad = dict(RECORDS)
    bad["tensorflow/tf.seeds"] = bad["tensorflow/tf.seeds"].replace("ops: [tf.keras.layers.Dropout]",
                                                                    "ops: [tf.keras.layers.GaussianNoise]")
    _, findings = run(project(tmp_path / "project", bad))
    assert any("tf.keras.layers.GaussianNoise, which is not among the record's ops" in f.message for f in findings)


# --- the real data --------------------------------------------------------------------------------


def test_cli_dropout_in_2_21_is_keras_3(capsys: pytest.CaptureFixture) -> None:
    assert main(["status", "tf.keras.layers.Dropout", "2.21", "--json"]) == 0
    import json

    out = json.loads(capsys.readouterr().out)
    assert out["framework"] == "tensorflow" and out["deterministic"] is False
    assert [s["id"] for s in out["sources"]] == ["keras.unseeded-random"]
    assert out["recipe"] == ["KERAS_SEED"] and set(out["solutions"]) == {"KERAS_SEED", "KERAS_LSEED"}
    assert any("tf.keras in TensorFlow 2.21 is Keras 3 (keras>=3.12.0" in n for n in out["notes"])
    assert main(["status", "tf.keras.layers.Dropout", "2.21"]) == 0
    text = capsys.readouterr().out
    assert "keras.utils.set_random_seed" in text and "RuntimeError" not in text


def test_cli_dropout_in_2_15_is_unchanged(capsys: pytest.CaptureFixture) -> None:
    assert main(["status", "tf.keras.layers.Dropout", "2.15", "--json"]) == 0
    import json

    out = json.loads(capsys.readouterr().out)
    assert [s["id"] for s in out["sources"]] == ["tf.random-seeds"] and out["recipe"] == ["SEED"]
    assert out["sources"][0]["raises"] == "RuntimeError"
    assert not any("Keras 3" in n for n in out["notes"])


def test_scan_reports_the_keras_3_finding_and_fix(tmp_path: Path) -> None:
    from kb.scan.run import scan

    (tmp_path / "requirements.txt").write_text("tensorflow==2.21.0\n")
    (tmp_path / "model.py").write_text("import tensorflow as tf\n\nx = tf.keras.layers.Dropout(0.5)\n"
                                       "y = tf.keras.layers.Dropout(0.5, seed=1)\n")
    lock = str(tmp_path / "requirements.txt")
    report = scan([str(tmp_path / "model.py")], lockfile=lock)
    assert report.pins["tensorflow"].version == "2.21.0"
    found = [(f.line, f.record, f.codes) for f in report.findings]
    assert found == [(3, "keras.unseeded-random", ("KERAS_SEED", "KERAS_LSEED"))]  # the seeded layer is fine
    (tmp_path / "requirements.txt").write_text("tensorflow==2.15.0\n")  # Keras 2: TensorFlow's global seed
    older = scan([str(tmp_path / "model.py")], lockfile=lock).findings
    assert [(f.line, f.record) for f in older] == [(3, "tf.random-seeds"), (4, "tf.random-seeds")]
