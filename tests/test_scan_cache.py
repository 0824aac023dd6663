"""The readings `kb scan` keeps between scans (kb/scan/filecache.py): a scan that uses them answers exactly as
a scan that reads every file afresh, after any edit of the file itself or of a module it looked into."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from kb.scan import filecache, pins
from kb.scan.cli import _cache_folder
from kb.scan.report_json import document, dumps
from kb.scan.run import scan

FACTORY = Path(__file__).parent / "fixtures" / "scanloaders" / "factory"
VERSIONS = pins.parse_versions("torch=2.11")


def _json(root: Path, cache: Path | None) -> str:
    return dumps(document(scan([str(root)], given=VERSIONS, cache=cache)))


def _loader_lines(text: str) -> list[int]:
    return sorted(f["line"] for f in json.loads(text)["findings"]
                  if f["record"] == "torch.data-loader-workers" and f["path"].endswith("train.py") and not f.get("note"))


def test_a_warm_scan_answers_as_a_fresh_one(tmp_path):
    root = tmp_path / "code"
    shutil.copytree(FACTORY, root)
    fresh = _json(root, None)
    cold = _json(root, tmp_path / "cache")
    stores = list((tmp_path / "cache").iterdir())
    assert len(stores) == 1 and stores[0].stat().st_size > 0
    warm = _json(root, tmp_path / "cache")
    assert fresh == cold == warm
    assert _loader_lines(warm) == [11, 13]


def test_an_edit_of_an_imported_module_reads_its_importer_again(tmp_path):
    """train.py's text is unchanged, but the transform factory it reads in pkg/utils.py now draws noise: its
    kept reading looked into utils.py, so it is read again, and the loader at line 9 becomes a finding."""
    root = tmp_path / "code"
    shutil.copytree(FACTORY, root)
    cache = tmp_path / "cache"
    assert _loader_lines(_json(root, cache)) == [11, 13]
    utils = root / "pkg" / "utils.py"
    utils.write_text(utils.read_text().replace("return 2 * sample - 1", "return 2 * sample - torch.rand(1)"))
    warm = _json(root, cache)
    assert warm == _json(root, None)
    assert _loader_lines(warm) == [9, 11, 13]


def test_a_removed_module_reads_its_importer_again(tmp_path):
    """The module a kept reading found for an import is gone: the look-up answers otherwise, so the file is
    read afresh (the transform is then unknown, and the loader at line 9 is reported as a fresh scan does)."""
    root = tmp_path / "code"
    shutil.copytree(FACTORY, root)
    cache = tmp_path / "cache"
    _json(root, cache)
    (root / "pkg" / "utils.py").unlink()
    assert _json(root, cache) == _json(root, None)


def test_a_damaged_or_foreign_store_costs_only_time(tmp_path):
    root = tmp_path / "code"
    shutil.copytree(FACTORY, root)
    cache = tmp_path / "cache"
    fresh = _json(root, None)
    _json(root, cache)
    (store,) = cache.iterdir()
    data = store.read_bytes()
    store.write_bytes(data[: len(data) // 2])  # cut short
    assert _json(root, cache) == fresh
    store.write_bytes(b"not a store at all")
    assert _json(root, cache) == fresh


def test_a_planted_entry_builds_nothing_but_scan_records(tmp_path):
    """An entry whose pickle names any other class (here os.system) is refused and the file read afresh."""
    root = tmp_path / "code"
    shutil.copytree(FACTORY, root)
    cache = tmp_path / "cache"
    fresh = _json(root, cache)
    store = filecache.FileCache(cache, [str(root)])
    assert store.before
    evil = b"cos\nsystem\n(S'echo planted > " + str(tmp_path / "planted").encode() + b"'\ntR."
    store.now = {key: _sealed(evil) for key in store.before}  # its own digest right: the unpickler refuses it
    store.before = {}
    store.save()
    assert _json(root, cache) == fresh
    assert not (tmp_path / "planted").exists()


def _sealed(blob: bytes) -> bytes:
    import hashlib

    return hashlib.blake2b(blob, digest_size=16).digest() + blob


def test_a_changed_byte_or_a_reading_of_another_shape_is_read_afresh(tmp_path):
    """A byte changed inside an entry (a string of the reading) fails the entry's digest; an entry of scan
    records in another shape, or the reading of another file, is not used: each file is read afresh."""
    import pickle

    from kb.scan.syntax import Layout

    root = tmp_path / "code"
    shutil.copytree(FACTORY, root)
    cache = tmp_path / "cache"
    fresh = _json(root, cache)
    store = filecache.FileCache(cache, [str(root)])
    entries = dict(store.before)
    store.now = {key: value[:-9] + bytes([value[-9] ^ 1]) + value[-8:] for key, value in entries.items()}
    store.before = {}
    store.save()
    assert _json(root, cache) == fresh
    layout = Layout(*([()] * len(Layout._fields)))
    for planted in ((("x",), ()), ((layout,), ()), (("other.py", (), None, [], {}), ())):
        store = filecache.FileCache(cache, [str(root)])
        store.now = {key: _sealed(pickle.dumps(planted)) for key in entries}
        store.before = {}
        store.save()
        assert _json(root, cache) == fresh


def test_a_folder_that_cannot_be_written_is_no_error(tmp_path):
    root = tmp_path / "code"
    shutil.copytree(FACTORY, root)
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert _json(root, blocker / "cache") == _json(root, None)


def test_other_code_never_uses_a_reading(tmp_path, monkeypatch):
    root = tmp_path / "code"
    shutil.copytree(FACTORY, root)
    cache = tmp_path / "cache"
    _json(root, cache)
    assert filecache.FileCache(cache, [str(root)]).before
    monkeypatch.setattr(filecache, "_CODE", ["another version of the scanner"])
    assert not filecache.FileCache(cache, [str(root)]).before


def test_the_variable_names_the_folder(monkeypatch):
    monkeypatch.setenv("KB_SCAN_CACHE", "kept")
    assert filecache.default_folder() == Path("kept")


@pytest.mark.parametrize(("argv", "expected"), [
    (["--no-cache"], None),
    (["--cache-dir", "somewhere"], "somewhere"),
    ([], "XDG/kb/scan"),
])
def test_where_the_command_keeps_its_store(argv, expected, monkeypatch):
    import argparse

    from kb.scan.cli import add_parser

    monkeypatch.delenv("KB_SCAN_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", "XDG")
    parser = argparse.ArgumentParser()
    add_parser(parser.add_subparsers())
    args = parser.parse_args(["scan", ".", *argv])
    assert _cache_folder(args) == (str(Path(expected)) if expected else None)


def test_the_folder_keeps_only_the_newest_stores(tmp_path, monkeypatch):
    """A hook that scans the changed files makes a store per set of paths: the oldest beyond MAX_STORES go."""
    monkeypatch.setattr(filecache, "MAX_STORES", 2)
    cache = tmp_path / "cache"
    for k in range(4):
        one = tmp_path / f"t{k}.py"
        one.write_text("import torch\nx = torch.zeros(3).index_add_(0, i, v)\n")
        scan([str(one)], given=VERSIONS, cache=cache)
    assert len(list(cache.iterdir())) == 2


def _notebook(path: Path, title: bool) -> None:
    cells = [{"cell_type": "markdown", "source": ["# title"]}] if title else []
    cells += [{"cell_type": "code", "source": "import torch\ntorch.index_add(x, 0, i, s)\n"},
              {"cell_type": "code", "source": "x = = 1\n"}]
    path.write_text(json.dumps({"cells": cells, "nbformat": 4, "nbformat_minor": 5}))


def test_a_markdown_cell_added_renumbers_a_kept_notebook_reading(tmp_path):
    """A markdown cell added above the code cells leaves the notebook's Python text as it was, but every code
    cell's number moves by one: a kept reading must not answer with the old numbers (cells and errors)."""
    root = tmp_path / "code"
    root.mkdir()
    cache = tmp_path / "cache"
    _notebook(root / "nb.ipynb", title=False)
    _json(root, cache)
    _notebook(root / "nb.ipynb", title=True)
    warm = _json(root, cache)
    assert warm == _json(root, None)
    doc = json.loads(warm)
    assert [(f["cell"], f["line"]) for f in doc["notes"]] == [(2, 2)]
    assert [e["message"][:20] for e in doc["errors"]] == ["cell 3: cannot parse"]


_TRAIN = """\
import torch
import torch.nn as nn
from models import Net

def main(x, y):
    model = Net()
    loss = nn.CrossEntropyLoss()(model(x), y)
    loss.backward()

if __name__ == "__main__":
    main(torch.zeros(2, 3), torch.zeros(2))
"""
_MODELS = """\
import torch.nn as {alias}

class Net({alias}.Module):
    def __init__(self):
        super().__init__()
        self.linear = {alias}.Linear(3, 4)
    def forward(self, x):
        return self.linear(x)
"""


def _nll_lines(text: str) -> list[int]:
    doc = json.loads(text)
    return [f["line"] for f in doc["findings"] + doc["notes"] if f["record"] == "torch.nll-loss"]


def test_a_module_read_for_a_model_class_is_read_as_it_is_now(tmp_path):
    """train.py's model is models.py's Net, whose forward returns a Linear's 2-D output: no NLL finding. After
    models.py spells torch.nn otherwise (`tnn`), train.py is read again (it looked into models.py), and the
    Context models.py is read in must be of its text now, not the one an earlier scan in this process made
    (its aliases then name no `tnn`, the Linear is unknown and the loss's input rank with it)."""
    root = tmp_path / "code"
    root.mkdir()
    (root / "train.py").write_text(_TRAIN)
    (root / "models.py").write_text(_MODELS.format(alias="nn"))
    cache = tmp_path / "cache"
    assert _nll_lines(_json(root, cache)) == []
    (root / "models.py").write_text(_MODELS.format(alias="tnn"))
    warm = _json(root, cache)
    assert _nll_lines(warm) == []  # as a scan in a process of its own answers
    assert warm == _json(root, None)


def test_the_trimming_removes_only_its_own_stores(tmp_path, monkeypatch):
    """A folder named for the stores may hold other programs' files (`KB_SCAN_CACHE=~/.cache`): the trimming
    removes only the stores a scan writes (a 24-digit hex name), never another `*.cache` file there."""
    monkeypatch.setattr(filecache, "MAX_STORES", 1)
    cache = tmp_path / "cache"
    cache.mkdir()
    other = cache / "pip-http.cache"
    other.write_text("someone else's")
    for k in range(2):
        one = tmp_path / f"t{k}.py"
        one.write_text("import torch\nx = torch.zeros(3).index_add_(0, i, v)\n")
        scan([str(one)], given=VERSIONS, cache=cache)
    assert other.exists()
    assert len([p for p in cache.iterdir() if p != other]) == 1


def test_the_signature_files_a_reading_asks_are_part_of_the_code(tmp_path, monkeypatch):
    """A reading asks kb.parameters for the parameters of ops without records (kb/scan/gradient.py), which reads
    them from data/api/<framework>.signatures.txt, not from a module of the package: a regenerated file must
    make every kept reading the work of other code, as an edited module does."""
    from kb import signatures

    table = tmp_path / "pytorch.signatures.txt"
    table.write_text("torch.example\tinput\n")
    real = signatures.source_file
    monkeypatch.setattr(signatures, "source_file", lambda framework: str(table) if framework == "pytorch" else real(framework))
    monkeypatch.setattr(filecache, "_CODE", [])
    before = filecache.code_digest()
    table.write_text("torch.example\tinput\tdim=0\n")
    monkeypatch.setattr(filecache, "_CODE", [])
    assert filecache.code_digest() != before
