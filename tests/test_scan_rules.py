"""Scan rules against a fixture index, with each expectation on the offending line.

tests/fixtures/scanrules/ is a small project: records with `scan:` blocks (data/, validated and
compiled as a test project, tests/kbproject.py) and code under code/ whose lines say what a scan
must report there: `# expect: <record> <level>[, <record> <level>...]` (level: raises,
nondeterministic, possible or note). A line without the comment must have no finding and no note.
Each file directly under code/ is scanned alone; each folder is scanned whole, as a repository.
Editing a shipped record never changes these tests; a new rule adds a line with its expectation.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kb import schema
from kb.scan import pins, resolvers
from kb.scan.run import scan
from tests.kbproject import answering, compiled

ROOT = Path(__file__).resolve().parent / "fixtures" / "scanrules"
CODE = ROOT / "code"
VERSIONS = "torch=2.11,tensorflow=2.20,jax=0.8"
EXPECT = re.compile(r"#\s*expect:\s*(.+?)\s*$")
LEVELS = ("raises", "nondeterministic", "possible", "note")


@pytest.fixture(scope="module")
def fixture_index() -> dict:
    return compiled(ROOT)


def expected(unit: Path) -> list[tuple[str, int, str, str]]:
    """(file, line, record, level) for every `# expect:` under `unit` (a file or a folder)."""
    out = []
    files = [unit] if unit.is_file() else sorted(p for p in unit.rglob("*.py"))
    for path in files:
        for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            match = EXPECT.search(text)
            if not match:
                continue
            for item in match.group(1).split(","):
                record, level = item.split()
                assert level in LEVELS, f"{path.name}:{number}: unknown level {level!r}"
                out.append((path.relative_to(CODE).as_posix(), number, record, level))
    return sorted(out)


def found(unit: Path, index: dict, versions: str = VERSIONS) -> list[tuple[str, int, str, str]]:
    with answering(index):
        report = scan([str(unit)], given=pins.parse_versions(versions), jobs=1)
    return sorted((Path(f.path).resolve().relative_to(CODE).as_posix(), f.line, f.record, f.level)
                  for f in (*report.findings, *report.notes))


UNITS = sorted(p.name for p in CODE.iterdir() if p.suffix == ".py" or p.is_dir())


@pytest.mark.parametrize("name", UNITS)
def test_each_line_reports_what_it_expects(fixture_index, name):
    unit = CODE / name
    assert found(unit, fixture_index) == expected(unit)


def test_every_fixture_unit_expects_something():
    assert all(expected(CODE / name) for name in UNITS if name not in ("seeded", "seeding"))


def test_the_named_rules_are_the_ones_records_may_name():
    """schema.SCAN_RESOLVERS (what lint KB023 accepts) and the table of kb/scan/resolvers.py agree,
    and every code rule has a docstring (rendered into docs/scan.md)."""
    assert set(resolvers.record_rules()) == set(schema.SCAN_RESOLVERS)
    assert all(entry.doc for entry in resolvers.TABLE.values())


def test_text_output_prints_locations_and_names_literally(fixture_index, tmp_path, capsys):
    """rich would read `:100:` in `t.py:100:5` as an emoji code and `[x]` as markup: every
    user-derived string is printed as it is."""
    from kb.scan.report_text import render

    code = tmp_path / "a:1234:[bold]b"
    code.mkdir()
    (code / "t.py").write_text("import torch\n" + "\n" * 98 + "torch.index_add(x, 0, i, s)  # :thumbs_up: [red]\n")
    with answering(fixture_index):
        report = scan([str(code)], given=pins.parse_versions(VERSIONS), jobs=1)
        render(report, fixture_index["solutions"])
    out = capsys.readouterr().out
    assert f"{code}/t.py:100:1: torch.index_add(...) [torch.index-add]" in out
    assert "\U0001F4AF" not in out and "\U0001F44D" not in out


def test_a_file_is_answered_with_the_same_records_alone_and_in_its_repository(fixture_index):
    """The model file of inference_only/ scanned alone gives the records it gives in the folder's scan."""
    unit = CODE / "inference_only"
    whole = [f for f in found(unit, fixture_index) if f[0].endswith("net.py")]
    assert whole and found(unit / "net.py", fixture_index) == whole


def test_the_summary_per_entry_point(fixture_index):
    """A seeding function re-exported by a package's __init__ is found where the training script calls
    it; runs that apply the same fixes share a line, and test files are counted, not credited by name."""
    from kb.scan.report_text import summary_lines

    with answering(fixture_index):
        report = scan([str(CODE / "seeding")], given=pins.parse_versions(VERSIONS), jobs=1)
    text = "\n".join(summary_lines(report, fixture_index["solutions"]))
    assert "train.py (__main__ block): applies PT_DET" in text and "seed.py:5" in text
    assert "convert.py (__main__ block); 3 test file(s): applies PT_DET" in text
    assert "check_a.py" not in text and "no entry point calls it" not in text


def test_sarif_rule_help_says_how_the_scan_reads_the_call(fixture_index):
    """A record's scan rules are part of its SARIF rule's help (kb/scan/ruledoc.py), from the same data."""
    from kb.scan.report_sarif import document

    with answering(fixture_index):
        report = scan([str(CODE / "literal_rules.py")], given=pins.parse_versions(VERSIONS), jobs=1)
    rules = {r["id"]: r for r in document(report, fixture_index["sources"])["runs"][0]["tool"]["driver"]["rules"]}
    help_text = rules["torch.data-loader-workers"]["help"]["text"]
    assert "Not reported when `num_workers` is 0" in help_text
    assert "Possible, depending on random augmentation in the dataset (shuffle is off)" in help_text
