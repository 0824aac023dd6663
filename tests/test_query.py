"""kb.status() against the public API contract (shared/DESIGN.md), on the real data."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pytest

import kb
from kb import query, versions


def test_bias_add_115() -> None:
    s = kb.status("tf.nn.bias_add", "1.15")
    assert s.deterministic is False
    assert s.solutions == ("TDP",) and s.recipe == ("TDP",)
    assert [src.id for src in s.sources] == ["tf.bias-add-backprop"]
    assert any(r.kind == "pr" and r.number == 31465 for r in s.references)


@pytest.mark.parametrize("version", ["2.1", "2.1.0", "2.1.4", "2.1.0rc1", "2.1.0.post1"])
def test_release_forms_answer_alike(version: str) -> None:
    s = kb.status("tf.nn.bias_add", version)
    assert (s.deterministic, s.solutions, s.recipe) == (False, ("TDO",), ("TDO",))


def test_recipe_uses_implications_and_phase_order() -> None:
    conv = kb.status("tf.keras.layers.Conv2D", "1.15")
    assert set(s.id for s in conv.sources) >= {"tf.cudnn-autotuning", "tf.bias-add-backprop"}
    assert conv.solutions == ("TCD", "TDP")  # TCD is an env var (phase 10), TDP a call after import
    assert conv.recipe == ("TDP",)  # the patch sets TF_CUDNN_DETERMINISTIC too
    assert kb.status("tf.keras.layers.Conv2D", "2.6").recipe == ("TDF",)
    assert kb.status("tf.keras.layers.Conv2D", "2.10").recipe == ("EOD",)


def test_unknown_version_gives_none() -> None:
    s = kb.status("tf.nn.ctc_loss", "2.4")  # 2.3-2.5 disputed and left unknown
    assert s.deterministic is None and s.recipe is None
    assert s.sources[0].deterministic is None and s.sources[0].versions is None
    assert s.sources[0].disputed


def test_no_solution_gives_recipe_none() -> None:
    s = kb.status("tf.image.resize", "2.3")
    assert s.deterministic is False and s.recipe is None and s.solutions == ()


def test_raises_under_determinism_is_reported() -> None:
    s = kb.status("tf.image.resize", "2.8")
    by_id = {src.id: src for src in s.sources}
    assert by_id["tf.resize-bilinear-backprop"].solutions == ("EOD",)
    assert by_id["tf.resize-nearest-backprop"].raises == "tf.errors.UnimplementedError"
    assert s.recipe is None and s.solutions == ("EOD",)


def test_deterministic_by_default_and_unrecorded_ops() -> None:
    s = kb.status("tf.math.reduce_sum", "2.3")
    assert s.deterministic is True and s.recipe == () and s.solutions == ()
    plain = kb.status("tf.add", "2.1")
    assert (plain.deterministic, plain.solutions, plain.recipe, plain.sources) == (True, (), (), ())


def test_record_id_and_aliases() -> None:
    assert kb.status("tf.bias-add-backprop", "2.0").solutions == ("TDP",)
    old = kb.status("tf.image.resize_bilinear", "1.15")
    assert "tf.resize-bilinear-backprop" in {s.id for s in old.sources}


def test_device_filter() -> None:
    gpu = kb.status("tf.image.crop_and_resize", "2.6")
    cpu = kb.status("tf.image.crop_and_resize", "2.6", device="cpu")
    assert {s.id for s in gpu.sources} == {"tf.crop-and-resize-backprop"}
    assert {s.id for s in cpu.sources} == {"tf.crop-and-resize-backprop-cpu"}
    assert cpu.recipe == ("TDO",) and gpu.recipe is None
    both = kb.status("tf.image.crop_and_resize", "2.6", device="any")
    assert len(both.sources) == 2


def test_ngc_distribution() -> None:
    assert kb.status("tf.nn.bias_add", "19.06", distribution="ngc").recipe == ("TDO",)
    later = kb.status("tf.nn.bias_add", "21.06", distribution="ngc")
    assert later.deterministic is None  # the sources do not cover that container
    unknown = kb.status("tf.nn.bias_add", "19.05", distribution="ngc")
    assert any("not a known ngc release" in n for n in unknown.notes)


def test_unknown_release_is_noted_not_refused() -> None:
    s = kb.status("tf.nn.bias_add", "2.99")
    assert s.recipe == ("EOD",)
    assert s.notes and "not a known tensorflow release" in s.notes[0]


def test_unknown_op_error_has_close_matches() -> None:
    with pytest.raises(kb.UnknownOpError) as info:
        kb.status("tf.nn.bias_ad", "2.1")
    assert isinstance(info.value, LookupError)
    assert "tf.nn.bias_add" in info.value.suggestions and "tf.nn.bias_add" in str(info.value)


def test_unknown_prefix_and_framework_without_data() -> None:
    with pytest.raises(kb.UnknownOpError, match="cannot tell the framework"):
        kb.status("nn.bias_add", "2.1")
    with pytest.raises(kb.UnknownOpError):
        kb.status("tf.nn.bias_add", "2.1", framework="pytorch")


@pytest.mark.parametrize("version", ["", "2.x", "latest", "v-two"])
def test_bad_version_raises_value_error(version: str) -> None:
    with pytest.raises(ValueError):
        kb.status("tf.nn.bias_add", version)


def test_bad_device_and_distribution() -> None:
    with pytest.raises(ValueError, match="device"):
        kb.status("tf.nn.bias_add", "2.1", device="tpu")
    with pytest.raises(ValueError, match="distribution"):
        kb.status("tf.nn.bias_add", "2.1", distribution="conda")


def test_status_is_immutable_printable_and_serializable() -> None:
    s = kb.status("tf.nn.bias_add", "1.15")
    with pytest.raises(AttributeError):
        s.deterministic = True  # type: ignore[misc]
    with pytest.raises(AttributeError):
        s.sources[0].solutions = ()  # type: ignore[misc]
    assert "NOT deterministic" in str(s) and "TDP" in str(s)
    assert repr(s).startswith("Status(op='tf.nn.bias_add'")
    data = json.loads(json.dumps(s.to_dict()))
    assert data["solutions"] == ["TDP"] and data["sources"][0]["pass"] == "backward"
    query.reset()
    again = kb.status("tf.nn.bias_add", "1.15")
    assert again is not s and again == s and hash(again) == hash(s)


def test_every_range_answers_through_the_evaluator() -> None:
    """The query's inlined interval test agrees with versions.contains for every record."""
    idx = query.index()
    probes = [versions.key_to_str(k) for k in idx["registries"]["tensorflow"]["keys"]] + ["0.1", "99.0"]
    for source_id, source in idx["sources"].items():
        if source["framework"] != "tensorflow":
            continue
        for probe in probes:
            key = versions.release_key(probe)
            matches = [r for r in source["status"] if versions.contains(r[0], r[1], key)]
            assert len(matches) <= 1
            answer = kb.status(source_id, probe, device="any").sources[0]
            assert answer.versions == (matches[0][2] if matches else None), (source_id, probe)


def test_answers_do_not_depend_on_record_order(tmp_path: Path) -> None:
    """Shuffle every record's ranges and the order records load in: all answers stay equal."""
    import yaml

    from kb.catalog import load
    from kb.compile import build_index

    root = Path(__file__).resolve().parents[1]
    copy = tmp_path / "p"
    shutil.copytree(root / "data", copy / "data")
    rng = random.Random(20261122)
    for path in (copy / "data" / "sources").rglob("*.yaml"):
        data = yaml.safe_load(path.read_text())
        rng.shuffle(data["status"])
        for ranges in data.get("distributions", {}).values():
            rng.shuffle(ranges)
        rng.shuffle(data["ops"])
        path.write_text(yaml.safe_dump(data, sort_keys=False))
    shuffled = build_index(load(copy))
    original = query.index()
    ops = sorted({n for table in original["names"].values() for n in table})
    probes = ["1.13", "1.14", "1.15.5", "2.0", "2.1", "2.2", "2.3", "2.4.1", "2.5", "2.6", "2.7", "2.8", "2.9.3", "2.10", "2.21"]
    before = {(op, v): kb.status(op, v, device="any") for op in ops for v in probes}
    try:
        query.reset(shuffled)
        after = {(op, v): kb.status(op, v, device="any") for op in ops for v in probes}
    finally:
        query.reset(original)
    assert after == before


def test_api_inventory_is_generated_and_sorted() -> None:
    path = Path(__file__).resolve().parents[1] / "data" / "api" / "tensorflow.txt"
    header, *names = path.read_text(encoding="utf-8").splitlines()
    assert header.startswith("# tensorflow 2.21.0 public API") and "scripts/introspect_api.py" in header
    assert names == sorted(set(names)) and len(names) > 10_000
    assert {"tf.nn.bias_add", "tf.add", "tf.keras.layers.Dense"} <= set(names)
