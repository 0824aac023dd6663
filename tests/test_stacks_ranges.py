"""Range boundaries that outside readings found wrong (issue 48), pinned twice: on fixture records
written here (the answer the query layer gives on each side of the boundary) and on the live
data (so a later edit cannot move the boundary back without failing here).

- transformer-engine.grouped-dbias-atomics: the atomic Triton kernel is already in 2.15 with no
  check (switch: silent); the RuntimeError under NVTE_ALLOW_NONDETERMINISTIC_ALGO=0 starts at 2.16.
- transformer-engine.attention-backward: the SM 12.0 refusal (PR 2798) is first in 2.14, through
  its cherry-pick, not 2.15.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import kb
from kb import yamlio
from kbproject import answering, compiled

ROOT = Path(__file__).resolve().parents[1]
MINI = Path(__file__).parent / "fixtures" / "mini"
HEADER = "# yaml-language-server: $schema=../../../schema/source.schema.json\n"
REFERENCE = "references:\n  - kind: pr\n    repo: tensorflow/tensorflow\n    number: 31465\n"

SOLUTIONS = """\
# yaml-language-server: $schema=../schema/solutions.schema.json
- code: NVTE_DET
  title: NVTE_ALLOW_NONDETERMINISTIC_ALGO=0
  frameworks: [transformer-engine]
  kind: env
  how: Set NVTE_ALLOW_NONDETERMINISTIC_ALGO=0 before the model is built.
  phase: 10
  preference: 10
- code: NS
  title: No solution
  frameworks: [tensorflow, transformer-engine]
  kind: none
  how: Written as an empty solutions list.
  phase: 99
  preference: 99
"""

REGISTRY = """\
# yaml-language-server: $schema=../../schema/versions.schema.json
name: transformer-engine
framework: transformer-engine
source: test fixture
releases:
""" + "".join(f"  - version: {v}\n" for v in ("1.9.0", "2.13.0", "2.14.0", "2.14.1", "2.15.0", "2.16.0", "2.17.0"))

GROUPED = "transformer_engine.pytorch.ops.GroupedLinear"
ATTENTION = "transformer_engine.pytorch.DotProductAttention"


def _record(rid: str, op: str, status: str) -> str:
    return (HEADER + f"id: {rid}\nframework: transformer-engine\ntitle: {rid} fixture\nops:\n  - {op}\n"
            "device: gpu\npass: backward\nmechanism: cuda-atomics\nsummary: A fixture record.\n"
            "status:\n" + status + REFERENCE)


RECORDS = {
    "te.grouped": _record("te.grouped", GROUPED,
                          "  - versions: '>=2.15,<2.16'\n    switch: silent\n"
                          "  - versions: '>=2.16'\n    raises: RuntimeError\n"),
    "te.attention": _record("te.attention", ATTENTION,
                            "  - versions: '>=1.9,<2.14'\n    solutions: [NVTE_DET]\n    note: no SM 12.0 case\n"
                            "  - versions: '>=2.14'\n    solutions: [NVTE_DET]\n"
                            "    note: SM 12.0 drops fused attention (PR 2798)\n"),
}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("ranges") / "project"
    shutil.copytree(MINI, root)
    (root / "data/solutions.yaml").write_text(SOLUTIONS, encoding="utf-8")
    (root / "data/versions/transformer-engine.yaml").write_text(REGISTRY, encoding="utf-8")
    (root / "data/sources/tensorflow/tf.sample.yaml").unlink()  # its TDO is not among these solutions
    folder = root / "data/sources/transformer-engine"
    folder.mkdir(parents=True)
    for rid, text in RECORDS.items():
        (folder / f"{rid}.yaml").write_text(text, encoding="utf-8")
    return compiled(root, allowed=("KB009",))  # KB009: field order, not meaning


def _grouped_answers() -> dict[str, tuple]:
    out = {}
    for version in ("2.14.1", "2.15", "2.16", "2.17"):
        status = kb.status(GROUPED, version)
        (source,) = [s for s in status.sources if s.id.endswith("grouped") or s.id.endswith("grouped-dbias-atomics")]
        out[version] = (source.deterministic, source.switch, source.raises, bool(status.silent), status.recipe)
    return out


def test_fixture_silent_range_then_raises(built: dict) -> None:
    with answering(built):
        answers = _grouped_answers()
    assert answers["2.14.1"] == (None, None, None, False, None)  # before the kernel: no range, unknown
    assert answers["2.15"] == (False, "silent", None, True, None)  # atomics run under the variable, no error
    assert answers["2.16"] == answers["2.17"] == (False, "raises", "RuntimeError", False, None)


def test_live_grouped_dbias_is_silent_in_2_15_and_raises_from_2_16() -> None:
    answers = _grouped_answers()
    assert answers["2.15"] == (False, "silent", None, True, None)
    assert answers["2.16"] == answers["2.17"] == (False, "raises", "RuntimeError", False, None)
    assert answers["2.14.1"][0] is None  # not in 2.14: no range, not a guess
    # the module-level GroupedLinear reaches the kernel only from 2.17 (op_versions)
    assert kb.status("transformer_engine.pytorch.GroupedLinear", "2.17").sources[0].raises == "RuntimeError"
    assert not kb.status("transformer_engine.pytorch.GroupedLinear", "2.16").sources


def _sm120_notes() -> dict[str, bool]:
    out = {}
    for version in ("2.13", "2.14", "2.14.1", "2.15"):
        (source,) = [s for s in kb.status(ATTENTION, version, call={"backend": "fused"}).sources
                     if s.id in ("te.attention", "transformer-engine.attention-backward")]
        out[version] = "SM 12.0" in (source.note or "") and "2798" in (source.note or "")
    return out


def test_fixture_sm120_note_starts_at_2_14(built: dict) -> None:
    with answering(built):
        assert _sm120_notes() == {"2.13": False, "2.14": True, "2.14.1": True, "2.15": True}


def test_live_sm120_refusal_first_in_2_14() -> None:
    assert _sm120_notes() == {"2.13": False, "2.14": True, "2.14.1": True, "2.15": True}
    links = yamlio.read(ROOT / "data/links.yaml").data
    (pr,) = [link for link in links if link["repo"] == "NVIDIA/TransformerEngine" and link.get("number") == 2798]
    assert pr["version"] == "2.14"


def test_live_fa3_backend_is_silent_where_te_pins_the_window_builds() -> None:
    fa3 = {"backend": "flash-attn-3"}
    for version, silent in (("2.1", False), ("2.2", True), ("2.9", True), ("2.10", False), ("2.18", False)):
        status = kb.status(ATTENTION, version, call=fa3)
        assert ("transformer-engine.attention-fa3-backward" in status.silent) is silent, version
        assert (status.recipe == ("NVTE_DET",)) is (not silent), version
    # a call on the fused backend is not told about FA3
    fused = kb.status(ATTENTION, "2.8", call={"backend": "fused"})
    assert "transformer-engine.attention-fa3-backward" in fused.excluded and fused.recipe == ("NVTE_DET",)
