"""Lint on hostile bytes: a BOM, CR-only line endings and a 5,000-digit integer are coded
findings in plain words (never CPython's int-limit text)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from kb.cli import main
from kb.lint import run

MINI = Path(__file__).parent / "fixtures" / "mini"
RECORD = "data/sources/tensorflow/tf.sample.yaml"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    shutil.copytree(MINI, tmp_path / "p")
    return tmp_path / "p"


def test_bom_is_kb001(root: Path) -> None:
    path = root / RECORD
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    found = [f for f in run(root)[1] if f.path == RECORD]
    assert [(f.line, f.code) for f in found] == [(1, "KB001")] and "byte order mark" in found[0].message


def test_cr_only_line_endings_are_not_canonical_and_fix_repairs_them(root: Path) -> None:
    path = root / RECORD
    original = path.read_bytes()
    path.write_bytes(original.replace(b"\n", b"\r"))
    found = [f for f in run(root)[1] if f.path == RECORD]
    assert [(f.line, f.code) for f in found] == [(1, "KB009")] and "CR" in found[0].message
    assert main(["--root", str(root), "fix"]) == 0
    assert path.read_bytes() == original


def test_crlf_still_reads_as_lf(root: Path) -> None:
    path = root / RECORD
    path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    assert [f for f in run(root)[1] if f.path == RECORD] == []


def test_int_limit_text_never_reaches_a_message(root: Path) -> None:
    path = root / RECORD
    path.write_text(path.read_text(encoding="utf-8").replace("number: 31465", "number: " + "9" * 5000), encoding="utf-8")
    found = [f for f in run(root)[1] if f.path == RECORD]
    assert found and found[0].code == "KB001" and "4,300 digits" in found[0].message
    assert all("set_int_max_str_digits" not in f.message and "Exceeds the limit" not in f.message for f in found)
