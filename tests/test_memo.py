"""What `kb validate`/`kb build` remember between runs (kb/memo.py): time saved, never an answer changed.

Every remembered value is keyed by the text it was computed from and the code that computed
it, so an edited file is always read again, and a damaged or planted store costs time only.
"""

from __future__ import annotations

import marshal
import os
import pickle
import shutil
from pathlib import Path

import pytest

from kb import yamlio
from kb.known import CACHE_DIR
from kb.lint import run
from kb.memo import FORMAT, MISS, Memo

MINI = Path(__file__).parent / "fixtures" / "mini"
RECORD = "data/sources/tensorflow/tf.sample.yaml"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    shutil.copytree(MINI, tmp_path / "project")
    return tmp_path / "project"


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """One entry per text the YAML reader really parsed (the work the memo saves)."""
    seen: list[int] = []
    real = yamlio._compose

    def counting(loader, text):
        seen.append(len(text))
        return real(loader, text)

    monkeypatch.setattr(yamlio, "_compose", counting)
    return seen


def findings(root: Path) -> list[tuple[str, int, str, str]]:
    return [(f.path, f.line, f.code, f.message) for f in run(root)[1]]


def fresh(root: Path) -> list[tuple[str, int, str, str]]:
    """The findings with nothing remembered."""
    shutil.rmtree(root / CACHE_DIR, ignore_errors=True)
    return findings(root)


def test_a_second_run_parses_nothing_and_finds_the_same(root: Path, parses: list[int]) -> None:
    assert findings(root) == []
    assert parses and (root / CACHE_DIR / "yaml.memo").is_file()
    parses.clear()
    assert findings(root) == []
    assert parses == []


def test_an_edited_file_is_parsed_again_and_its_findings_follow(root: Path, parses: list[int]) -> None:
    assert findings(root) == []
    path = root / RECORD
    path.write_text(path.read_text().replace("solutions: [TDO]", "solutions: [TDX]"))
    parses.clear()
    broken = findings(root)
    assert len(parses) == 1  # only the edited file
    assert any(code == "KB005" or "TDX" in message for _, _, code, message in broken), broken
    assert findings(root) == broken  # remembered now, same answer
    assert fresh(root) == broken
    path.write_text(path.read_text().replace("solutions: [TDX]", "solutions: [TDO]"))
    assert findings(root) == []


def test_same_size_and_time_still_reads_the_new_text(root: Path) -> None:
    """Keys are the text itself, never (path, size, mtime): an edit that keeps both is seen."""
    path = root / RECORD
    assert findings(root) == []
    before = path.stat()
    text = path.read_text()
    path.write_text(text.replace("solutions: [TDO]", "solutions: [TDX]", 1))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert path.stat().st_size == before.st_size
    assert findings(root) == fresh(root) != []


def test_a_file_that_fails_to_parse_is_never_remembered(root: Path, parses: list[int]) -> None:
    path = root / RECORD
    path.write_text(path.read_text().replace("device: gpu", "device: [gpu"))
    first = findings(root)
    assert [code for _, _, code, _ in first] == ["KB001"]
    parses.clear()
    assert findings(root) == first
    assert parses  # parsed (and refused) again


def test_values_are_fresh_objects(root: Path) -> None:
    path = root / RECORD
    with yamlio.remembering(root):
        first = yamlio.read(path)
    with yamlio.remembering(root):
        second = yamlio.read(path)
        second.data["id"] = "changed"
        second.lines.clear()
        third = yamlio.read(path)
    assert third.data == first.data and third.lines == first.lines and third.data["id"] != "changed"
    assert third.path == path and third.text == path.read_text()


def test_a_document_read_under_another_path_keeps_its_own_path(root: Path) -> None:
    path = root / RECORD
    copy = path.with_name("copy.yaml")
    shutil.copy(path, copy)
    with yamlio.remembering(root):
        a, b = yamlio.read(path), yamlio.read(copy)
    assert (a.path, b.path) == (path, copy) and a.data == b.data


@pytest.mark.parametrize("content", [b"", b"garbage", FORMAT, FORMAT + b"x\n" + b"\xff" * 40])
def test_a_damaged_store_costs_time_not_answers(root: Path, content: bytes) -> None:
    (root / CACHE_DIR).mkdir(parents=True)
    (root / CACHE_DIR / "yaml.memo").write_bytes(content)
    assert findings(root) == []


def test_a_store_from_other_code_is_ignored(root: Path, parses: list[int]) -> None:
    assert findings(root) == []
    store = root / CACHE_DIR / "yaml.memo"
    data = store.read_bytes()
    first, rest = data.split(b"\n", 1)
    _, body = rest.split(b"\n", 1)
    store.write_bytes(first + b"\n" + b"0" * 64 + b"\n" + body)
    parses.clear()
    assert findings(root) == []
    assert parses


def test_a_planted_entry_runs_no_code(root: Path, tmp_path: Path) -> None:
    """The store is pickles, but only plain data is rebuilt: a planted object is a miss."""
    marker = tmp_path / "ran"

    class Planted:
        def __reduce__(self):
            return (os.system, (f"touch {marker}",))

    path = root / RECORD
    memo = yamlio.Memo(root, "yaml", Path(yamlio.__file__), yamlio.yaml.__version__, yamlio._Parser.__name__,
                       f"{yamlio.MAX_BYTES} {yamlio.MAX_DEPTH} {yamlio.MAX_NODES} {yamlio.MAX_SCALAR} {yamlio._MAX_DIGITS}")
    key = memo.key(path.read_text())
    (root / CACHE_DIR).mkdir(parents=True, exist_ok=True)
    with open(root / CACHE_DIR / "yaml.memo", "wb") as handle:
        handle.write(FORMAT + memo.code + b"\n")
        marshal.dump({key: pickle.dumps(Planted())}, handle)
    with yamlio.remembering(root):
        doc = yamlio.read(path)
    assert not marker.exists()
    assert doc.data["id"] == "tf.sample"


def test_a_read_only_checkout_still_validates(root: Path) -> None:
    (root / ".cache").write_text("not a folder")
    assert findings(root) == []
    assert findings(root) == []


def test_memo_keeps_other_commands_entries_but_drops_stale_ones(tmp_path: Path) -> None:
    memo = Memo(tmp_path, "t", "code")
    for i in range(4):
        memo.put(memo.key(str(i)), i)
    memo.save()
    memo = Memo(tmp_path, "t", "code")
    assert memo.get(memo.key("0")) == 0
    memo.put(memo.key("new"), "new")
    memo.save()  # 3 unused older entries > 2 used: the older ones drop out
    memo = Memo(tmp_path, "t", "code")
    assert memo.get(memo.key("1")) is MISS and memo.get(memo.key("new")) == "new"
    assert Memo(tmp_path, "t", "other code").get(memo.key("new")) is MISS


def test_an_edited_verifier_is_read_again(root: Path) -> None:
    from kb.lint.verifiers import registered

    shutil.copytree(Path(__file__).resolve().parents[1] / "verifiers", root / "verifiers",
                    ignore=shutil.ignore_patterns("__pycache__"))
    before = registered(root)
    assert registered(root).keys() == before.keys()
    module = root / "verifiers" / "synthetic.py"
    text = module.read_text()
    name = next(n for n in before if before[n].path == module)
    module.write_text(text.replace(f'"{name}"', f'"{name}_renamed"', 1))
    after = registered(root)
    assert f"{name}_renamed" in after and name not in after
    assert after[f"{name}_renamed"].path == module
    assert {n: f.to_dict() for n, f in registered(root).items()} == {n: f.to_dict() for n, f in after.items()}


def test_a_comment_added_later_is_reported(root: Path) -> None:
    assert findings(root) == []
    path = root / RECORD
    path.write_text(path.read_text() + "# a late comment\n")
    assert "KB010" in [code for _, _, code, _ in findings(root)]
    assert findings(root) == fresh(root)


def test_index_texts_are_remembered_by_the_index_itself(root: Path) -> None:
    from kb.catalog import load
    from kb.compile import build_index
    from kb.generated import index_texts

    index = build_index(load(root))
    plain = index_texts(index)
    assert index_texts(index, root) == plain == index_texts(index, root)
    changed = {**index, "order": index["order"][::-1]}
    assert index_texts(changed, root) == index_texts(changed) != plain
