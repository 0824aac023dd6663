"""Malformed-record fixtures: each must produce exactly the expected findings (code, line).

Each fixture under tests/fixtures/malformed/ is a whole file placed into a copy of the
valid mini project (tests/fixtures/mini/); lint must report exactly the listed findings
for the file it was placed at, with file:line in the message, and nothing in other files.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from kb.lint import CODES, run

HERE = Path(__file__).parent / "fixtures"
MINI = HERE / "mini"
RECORD = "data/sources/tensorflow/tf.sample.yaml"

TARGETS = {
    "ids-duplicate-id": "data/sources/tensorflow/tf.copy.yaml",
    "links-number-and-sha": "data/links.yaml",
    "links-duplicate-entry": "data/links.yaml",
    "links-unknown-version": "data/links.yaml",
    "registry-duplicate-release": "data/versions/tensorflow.yaml",
    "registry-version-as-number": "data/versions/tensorflow.yaml",
    "runs-contradicts-record": "data/runs/h100-test/2026-11-22T234000Z.yaml",
    "static-unclaimed-alert": "data/runs/static-tensorflow/2.1.0.yaml",
    "static-range-disagrees": "data/runs/static-tensorflow/2.1.0.yaml",
    # a sweep evidence file is JSON; the fixture is named .yaml like the others and copied to its place
    "sweeps-undocumented-source": "data/sweeps/h100-test/2026-11-25T230000Z-pytorch-eager.json",
    # a sweep's hand-built cases are Python; the fixture is named .yaml like the others and copied to its place
    "cases-misspelt-call-key": "kb/sweep/specials.py",
}


def target_for(name: str) -> str:
    return TARGETS.get(name, RECORD)


def run_fixture(fixture: Path, tmp: Path | None = None) -> list[tuple[str, str, int]]:
    import tempfile

    root = Path(tmp or tempfile.mkdtemp()) / "project"
    shutil.copytree(MINI, root)
    (root / target_for(fixture.stem)).parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(fixture, root / target_for(fixture.stem))
    _, findings = run(root)
    return [(f.path, f.code, f.line) for f in findings]


R, L, V = RECORD, "data/links.yaml", "data/versions/tensorflow.yaml"

# fixture name -> exact findings as (file, code, line)
EXPECTED: dict[str, list[tuple[str, str, int]]] = {
    "yaml-bad-indent": [(R, "KB001", 8)],
    "yaml-unsafe-python-object": [(R, "KB001", 4)],
    "yaml-duplicate-key": [(R, "KB001", 8)],
    "yaml-empty-file": [(R, "KB001", 1)],
    "yaml-unclosed-quote": [(R, "KB001", 13)],
    "yaml-not-utf8": [(R, "KB001", 4)],  # the line of the first byte that is not UTF-8
    "bounds-anchor": [(R, "KB012", 14)],
    "schema-top-level-list": [(R, "KB002", 1)],
    "schema-missing-title": [(R, "KB002", 2)],
    "schema-unknown-field": [(R, "KB002", 8)],
    "calls-unknown-parameter": [(R, "KB016", 13), (R, "KB016", 19)],  # both misspelt keys, at their lines
    "calls-op-not-in-record": [(R, "KB016", 13)],
    "calls-bad-ndim": [(R, "KB002", 12)],
    "schema-ops-not-a-list": [(R, "KB002", 5)],
    "schema-version-as-number": [(R, "KB002", 13)],
    "schema-bad-device": [(R, "KB002", 7)],
    "schema-bad-id": [(R, "KB002", 2)],
    "schema-deterministic-with-solutions": [(R, "KB002", 13)],
    "schema-unknown-reference-kind": [(R, "KB002", 16)],
    "schema-reference-number-not-int": [(R, "KB002", 18)],
    "schema-empty-status": [(R, "KB002", 11)],
    "schema-title-is-bool": [(R, "KB002", 4)],
    "schema-bad-solution-code-pattern": [(R, "KB002", 14)],
    "ids-duplicate-id": [("data/sources/tensorflow/tf.copy.yaml", "KB003", 2), (R, "KB003", 2)],
    "ids-name-mismatch": [(R, "KB003", 2)],
    "ids-wrong-framework-dir": [(R, "KB003", 3)],
    "ranges-overlap": [(R, "KB004", 13)],
    "ranges-empty": [(R, "KB004", 13)],
    "ranges-invalid-specifier": [(R, "KB004", 13)],
    "ranges-unsupported-operator": [(R, "KB004", 13)],
    "ranges-prerelease-bound": [(R, "KB004", 13)],
    "ranges-dispute-overlap": [(R, "KB004", 20)],
    "registry-unknown-version": [(R, "KB005", 13)],
    "registry-unknown-release-notes": [(R, "KB005", 18)],
    "solutions-unknown-code": [(R, "KB006", 14)],
    "solutions-other-framework": [(R, "KB006", 14)],
    "solutions-ns-as-code": [(R, "KB006", 13)],
    "links-dangling-pr": [(R, "KB007", 16)],
    "links-dangling-commit": [(R, "KB007", 16)],
    "references-none": [(R, "KB008", 15)],
    "format-not-canonical": [(R, "KB009", 4)],
    "format-field-order": [(R, "KB009", 7)],
    "comments-inline": [(R, "KB009", 7), (R, "KB010", 7)],
    "ops-no-prefix": [(R, "KB011", 7)],
    "ops-listed-twice": [(R, "KB011", 7)],
    "causes-unknown-record": [(R, "KB013", 16)],
    "causes-self": [(R, "KB013", 16)],
    # A broken links entry also leaves the record's reference dangling: both are reported.
    "links-number-and-sha": [(L, "KB002", 2), (R, "KB007", 16)],
    "links-duplicate-entry": [(L, "KB003", 9)],
    "links-unknown-version": [(L, "KB005", 8)],
    "registry-duplicate-release": [(V, "KB003", 11)],
    "registry-version-as-number": [(V, "KB002", 10)],
    "verifiers-unregistered": [(R, "KB014", 20)],
    "runs-contradicts-record": [("data/runs/h100-test/2026-11-22T234000Z.yaml", "KB015", 1)],
    # the private folder and the bare document; the URL and the in-repository run file are fine
    "paths-outside-repository": [(R, "KB019", 19), (R, "KB019", 19)],
    # the mini record claims the alert SampleOp; the 2.1.0 wheel holds it, so the range '>=2.1' must raise
    "static-range-disagrees": [(R, "KB017", 21)],
    "static-unclaimed-alert": [("data/runs/static-tensorflow/2.1.0.yaml", "KB018", 1)],
    # switch: silent, yet the switch (TDO) is listed as the fix
    "switch-silent-lists-the-switch": [(R, "KB020", 14)],
    # a silent case of an op no record covers: an undocumented source
    "sweeps-undocumented-source": [("data/sweeps/h100-test/2026-11-25T230000Z-pytorch-eager.json", "KB021", 1)],
    # the layer's inventory line forwards to tf.nn.bias_add (`>` field), which the record does not name
    "spellings-layer-without-its-op": [(R, "KB022", 6)],
    # scan rules: a misspelt parameter, an op that is not the record's, a resolver name that is no code rule
    "scanrules-misspelt": [(R, "KB023", 21), (R, "KB023", 28), (R, "KB023", 31)],
    # cases: a misspelt parameter of the op, and an op the KB does not know
    "cases-misspelt-call-key": [("kb/sweep/specials.py", "KB024", 7), ("kb/sweep/specials.py", "KB024", 8)],
}


def test_every_fixture_has_an_expectation() -> None:
    on_disk = {p.stem for p in (HERE / "malformed").glob("*.yaml")}
    assert on_disk == set(EXPECTED)
    assert len(on_disk) >= 30


def test_every_check_code_has_a_fixture() -> None:
    covered = {code for findings in EXPECTED.values() for _, code, _ in findings}
    assert covered == set(CODES)


def test_mini_project_is_clean(tmp_path: Path) -> None:
    root = tmp_path / "project"
    shutil.copytree(MINI, root)
    _, findings = run(root)
    assert findings == []


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fixture_findings(name: str, tmp_path: Path) -> None:
    root = tmp_path / "project"
    shutil.copytree(MINI, root)
    (root / target_for(name)).parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(HERE / "malformed" / f"{name}.yaml", root / target_for(name))
    _, findings = run(root)
    assert [(f.path, f.code, f.line) for f in findings] == sorted(EXPECTED[name])
    for finding in findings:
        rendered = finding.render()
        assert rendered.startswith(f"{finding.path}:{finding.line}: {finding.code} ")
        assert finding.message
    # every finding but the pure-format one carries a hint on how to fix it
    assert all(f.hint for f in findings)
