"""Contract tests: kb.status() on the real data, for the answers shared/DESIGN.md promises and the
properties that must hold for every record (the range evaluator, order independence).

The API's semantics are tested on a fixture project in tests/test_query_api.py; a case here
names real records, so editing one of those may mean editing its case. Run these alone with
`pytest -m contract`."""

from __future__ import annotations

import gzip
import random
import shutil
from pathlib import Path

import pytest

import kb
from kb import query, versions
from kb.entries import HI, LO, VERSIONS



@pytest.mark.contract
def test_bias_add_115() -> None:
    s = kb.status("tf.nn.bias_add", "1.15")
    assert s.deterministic is False
    assert s.solutions == ("TDP",) and s.recipe == ("TDP",)
    assert [src.id for src in s.sources] == ["tf.bias-add-backprop"]
    assert any(r.kind == "pr" and r.number == 31465 for r in s.references)


@pytest.mark.contract
@pytest.mark.parametrize("version", ["2.1", "2.1.0", "2.1.4", "2.1.0rc1", "2.1.0.post1"])
def test_release_forms_answer_alike(version: str) -> None:
    s = kb.status("tf.nn.bias_add", version)
    assert (s.deterministic, s.solutions, s.recipe) == (False, ("TDO",), ("TDO",))


@pytest.mark.contract
def test_deterministic_by_default_and_unrecorded_ops() -> None:
    s = kb.status("tf.math.reduce_sum", "2.3")
    assert s.deterministic is True and s.recipe == () and s.solutions == ()
    plain = kb.status("tf.add", "2.1")
    assert (plain.deterministic, plain.solutions, plain.recipe, plain.sources) == (True, (), (), ())


@pytest.mark.contract
def test_unknown_op_error_has_close_matches() -> None:
    with pytest.raises(kb.UnknownOpError) as info:
        kb.status("tf.nn.bias_ad", "2.1")
    assert isinstance(info.value, LookupError)
    assert "tf.nn.bias_add" in info.value.suggestions and "tf.nn.bias_add" in str(info.value)


@pytest.mark.contract
def test_every_range_answers_through_the_evaluator() -> None:
    """The query's inlined interval test agrees with versions.contains for every record."""
    idx = query.index()
    probes = [versions.key_to_str(k) for k in idx["registries"]["tensorflow"]["keys"]] + ["0.1", "99.0"]
    for source_id, source in idx["sources"].items():
        if source["framework"] != "tensorflow":
            continue
        for probe in probes:
            key = versions.release_key(probe)
            matches = [r for r in source["status"] if versions.contains(r[LO], r[HI], key)]
            assert len(matches) <= 1
            answer = kb.status(source_id, probe, device="any").sources[0]
            assert answer.versions == (matches[0][VERSIONS] if matches else None), (source_id, probe)


@pytest.mark.contract
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


@pytest.mark.contract
def test_api_inventory_is_generated_and_sorted() -> None:
    path = Path(__file__).resolve().parents[1] / "data" / "api" / "tensorflow.txt.gz"
    header, *names = gzip.decompress(path.read_bytes()).decode("utf-8").splitlines()
    assert header.startswith("# tensorflow 2.21.0 public API") and "scripts/introspect_api.py" in header
    assert names == sorted(set(names)) and len(names) > 10_000
    assert {"tf.nn.bias_add", "tf.add", "tf.keras.layers.Dense"} <= set(names)
