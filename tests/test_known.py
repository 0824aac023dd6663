"""KB009's cache of files known to be canonical (kb/known.py): it saves time, never changes an answer."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from kb import canonical
from kb.known import CACHE_DIR
from kb.lint import run

MINI = Path(__file__).parent / "fixtures" / "mini"
RECORD = "data/sources/tensorflow/tf.sample.yaml"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    shutil.copytree(MINI, tmp_path / "project")
    return tmp_path / "project"


@pytest.fixture
def dumps(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The records KB009 dumps to YAML (the work the cache saves)."""
    seen: list[str] = []
    real = canonical.source_text

    def counting(record, path, root):
        seen.append(path.name)
        return real(record, path, root)

    monkeypatch.setattr(canonical, "source_text", counting)
    return seen


def codes(root: Path) -> list[tuple[str, str, int]]:
    return [(f.path, f.code, f.line) for f in run(root)[1]]


def test_an_unchanged_file_is_not_dumped_again(root: Path, dumps: list[str]) -> None:
    assert codes(root) == []
    first = len(dumps)
    assert first > 0 and (root / CACHE_DIR / "canonical.txt").is_file()
    assert codes(root) == []
    assert len(dumps) == first  # second run: every file was known canonical


def test_an_edited_file_is_checked_again_and_reported(root: Path, dumps: list[str]) -> None:
    assert codes(root) == []
    path = root / RECORD
    path.write_text(path.read_text().replace("title: ", "title:   ", 1))  # not canonical any more
    assert [c for c in codes(root) if c[1] == "KB009"] == [(RECORD, "KB009", 4)]
    assert [c for c in codes(root) if c[1] == "KB009"] == [(RECORD, "KB009", 4)]  # a failure is never cached


def test_a_cache_from_other_code_is_ignored(root: Path, dumps: list[str]) -> None:
    assert codes(root) == []
    cache = root / CACHE_DIR / "canonical.txt"
    lines = cache.read_text().splitlines()
    cache.write_text("\n".join([lines[0], "0" * 64, *lines[2:]]) + "\n")  # same keys, other code
    dumps.clear()
    assert codes(root) == []
    assert RECORD.rsplit("/", 1)[1] in dumps


@pytest.mark.parametrize("content", [b"\xff\xfe\x00garbage", b"", b"kb-known 1\n"])
def test_a_damaged_cache_costs_time_not_answers(root: Path, dumps: list[str], content: bytes) -> None:
    (root / CACHE_DIR).mkdir(parents=True)
    (root / CACHE_DIR / "canonical.txt").write_bytes(content)
    assert codes(root) == []
    assert dumps


def test_a_read_only_checkout_still_validates(root: Path, dumps: list[str]) -> None:
    (root / ".cache").write_text("not a folder")  # the cache cannot be written
    assert codes(root) == []
    path = root / RECORD
    path.write_text(path.read_text().replace("title: ", "title:   ", 1))
    assert [c for c in codes(root) if c[1] == "KB009"] == [(RECORD, "KB009", 4)]
