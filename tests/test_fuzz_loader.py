"""Property-based fuzzing of the YAML loader, lint and the JSON reader (issue 10).

Inputs: random text, random YAML documents, and real records from data/sources/ mutated
(characters inserted or deleted, lines swapped, duplicated or dropped, YAML syntax such as
anchors, tags and brackets spliced in). Properties: the loader returns a Document or raises
YamlError (never another exception); lint on a project holding the mutated record returns
findings with a known code and a line >= 1 (never a traceback). The per-example deadline
of one second is hypothesis's own (`deadline`), the budget the issue sets per file.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from kb import jsonio, yamlio
from kb.lint import CODES, run

ROOT = Path(__file__).resolve().parents[1]
MINI = Path(__file__).parent / "fixtures" / "mini"
RECORDS = sorted((ROOT / "data" / "sources").rglob("*.yaml"))
TEXTS = [p.read_text(encoding="utf-8") for p in RECORDS]

FUZZ = settings(
    max_examples=200,
    deadline=1000,  # ms per example: a file must never cost more than a second
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    database=None,  # CI runs are independent; a failure prints the reproducing example
)
LINT_FUZZ = settings(FUZZ, max_examples=100)

# Fragments that exercise the loader's refusals and the parser's error paths.
SPLICES = [
    "&a ", "*a", "<<: ", "!!python/object:os.system ", "!!set ", "!!binary ", "? ", "- ", ": ", "---\n",
    "[", "]", "{", "}", "'", '"', "\t", "\x00", "\x07", "\ufeff", "#", "|", ">", "%YAML 1.1\n", "~",
    "2020-13-45", "1e999", "9" * 5000, "\r\n", "é", "\\", ",",
]

YAML_ALPHABET = st.sampled_from(list("ab01-:[]{},'\"#&*!|>?~. \n\t") + ["  ", "- ", ": ", "&x ", "*x"])


@st.composite
def mutated_record(draw: st.DrawFn) -> str:
    text = draw(st.sampled_from(TEXTS))
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["insert", "delete", "swap", "duplicate", "drop", "splice"]))
        lines = text.split("\n")
        if kind == "insert":
            at = draw(st.integers(0, len(text)))
            text = text[:at] + draw(st.text(min_size=1, max_size=3)) + text[at:]
        elif kind == "delete" and text:
            at = draw(st.integers(0, len(text) - 1))
            text = text[:at] + text[at + draw(st.integers(1, 20)):]
        elif kind == "swap" and len(lines) > 1:
            i, j = draw(st.integers(0, len(lines) - 1)), draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
            text = "\n".join(lines)
        elif kind == "duplicate":
            i = draw(st.integers(0, len(lines) - 1))
            text = "\n".join(lines[: i + 1] + [lines[i]] + lines[i + 1 :])
        elif kind == "drop":
            i = draw(st.integers(0, len(lines) - 1))
            text = "\n".join(lines[:i] + lines[i + 1 :])
        else:
            at = draw(st.integers(0, len(text)))
            text = text[:at] + draw(st.sampled_from(SPLICES)) + text[at:]
    return text


scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=20), st.dates())
documents = st.recursive(
    scalars,
    lambda children: st.one_of(st.lists(children, max_size=5), st.dictionaries(st.text(max_size=8), children, max_size=5)),
    max_leaves=30,
)


def _parse(text: str) -> None:
    try:
        doc = yamlio.parse(text, Path("fuzz.yaml"))
    except yamlio.YamlError as exc:
        assert exc.code in ("KB001", "KB012") and exc.line >= 1 and exc.message
        return
    assert all(line >= 1 for line in doc.lines.values())


@FUZZ
@given(st.text(max_size=300))
def test_loader_on_random_text(text: str) -> None:
    _parse(text)


@FUZZ
@given(st.lists(YAML_ALPHABET, max_size=80).map("".join))
def test_loader_on_yaml_shaped_noise(text: str) -> None:
    _parse(text)


@FUZZ
@given(documents)
def test_loader_reads_back_what_yaml_writes(data: object) -> None:
    text = yaml.safe_dump(data, sort_keys=False)
    try:
        doc = yamlio.parse(text, Path("fuzz.yaml"))
    except yamlio.YamlError as exc:
        # the one difference from PyYAML: equal keys such as 1 and True are refused, not merged
        assert "duplicate key" in exc.message
        return
    assert doc.data == yaml.safe_load(text)


@FUZZ
@given(mutated_record())
def test_loader_on_mutated_records(text: str) -> None:
    _parse(text)


@FUZZ
@given(st.one_of(mutated_record(), st.lists(YAML_ALPHABET, max_size=80).map("".join)))
@example("a: b\t# note\nc: [1,\t2]\t# x\n")
@example('"|:&": #-,\t\'\'\'%||!\'\n#')  # libyaml's block end and stream end sit a line past the last line
@example("'?'#[ #b\"?\n#|")
def test_comment_lines_match_the_python_scanner(text: str) -> None:
    """KB010 finds comments with libyaml's tokens (fast); it must agree with PyYAML's scanner."""
    if not hasattr(yaml, "CSafeLoader"):
        pytest.skip("PyYAML without libyaml: only the Python scanner is used")
    try:
        yamlio.parse(text, Path("fuzz.yaml"))
    except yamlio.YamlError:
        return  # KB010 only runs on files that loaded
    try:
        list(yaml.load_all(text, Loader=yaml.SafeLoader))
    except yaml.YAMLError:
        return  # only libyaml reads it: PyYAML's scanner stops at its error and has no answer to compare
    assert yamlio._comment_lines_c(text) == yamlio._comment_lines_py(text)


def test_a_tab_before_a_comment_is_skipped_as_libyaml_skips_it() -> None:
    """'a\t#': libyaml reads a comment after the tab (a plain scalar ended), PyYAML's scanner raised there;
    the comment scanner follows libyaml, which loads the records (found by the fuzz test in CI)."""
    assert yamlio._comment_lines_py("a\t#") == [1]
    if hasattr(yaml, "CSafeLoader"):
        assert yamlio._comment_lines_c("a\t#") == [1]


@pytest.fixture(scope="module")
def project() -> Path:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "project"
        shutil.copytree(MINI, root)
        yield root


@LINT_FUZZ
@given(text=mutated_record())
def test_lint_on_mutated_records(project: Path, text: str) -> None:
    target = project / "data" / "sources" / "tensorflow" / "tf.fuzz.yaml"
    target.write_bytes(text.encode("utf-8", "surrogatepass"))
    _, findings = run(project)
    for finding in findings:
        assert finding.code in CODES and finding.line >= 1 and finding.message
    # the mini project's own record is never affected by another file's problems
    assert not [f for f in findings if f.path.endswith("tf.sample.yaml") and f.code in ("KB001", "KB002", "KB012")]


@FUZZ
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=10),
                    lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=5), c, max_size=4)),
       st.data())
def test_json_on_mutated_documents(data: object, draw: st.DataObject) -> None:
    import json

    text = json.dumps(data)
    assert jsonio.loads(text, where="fuzz") == data
    at = draw.draw(st.integers(0, len(text)))
    mutated = text[:at] + draw.draw(st.sampled_from(["[", "]", "{", "}", '"', ",", ":", "", "\\", "1e999999", "x"])) + text[at + draw.draw(st.integers(0, 2)):]
    try:
        jsonio.loads(mutated, where="fuzz")
    except jsonio.JsonError as exc:
        assert exc.line >= 1 and exc.message and str(exc).startswith("fuzz:")
