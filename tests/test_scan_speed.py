"""The scan's machinery that saves work (skipped scopes, kept texts, lazy reads) finds exactly what the
full work finds: each case is a place where a shortcut could lose a call."""

from __future__ import annotations

from pathlib import Path

from kb.query import scan_index
from kb.scan import resolve, switches
from kb.scan.run import targets

FIX = Path(__file__).resolve().parent / "fixtures/scanspeed"
WANTED, METHODS, _ = targets(scan_index())


def _calls(name: str) -> list[tuple[int, str]]:
    path = FIX / name
    module = resolve.analyse(path.read_text(encoding="utf-8"), str(path), WANTED, METHODS, switches.WATCHED)
    return [(c.line, c.op) for c in module.calls]


def test_a_scope_is_walked_when_any_of_its_lines_holds_a_hit():
    """A decorator above the `def` line, a parameter's default, a nested function: each is found although
    the rest of its scope mentions no framework (and `nothing`, which mentions none, is not walked)."""
    found = _calls("scopes.py")
    assert (9, "jax.jit") in found
    assert (14, "torch.index_add") in found
    assert any(line == 24 and op.endswith("index_add_") for line, op in found)
    assert all(line < 33 for line, _ in found)


def test_the_collector_is_paused_for_the_whole_scan_and_restored(monkeypatch):
    """The later passes (here the switch scope) run with the cyclic collector paused, as the parsing does;
    it runs again after the scan, and stays off after it if it was off before."""
    import gc

    from kb.scan import run, scope

    seen = []
    real = scope.runs

    def runs(*args, **kwargs):
        seen.append(gc.isenabled())
        return real(*args, **kwargs)

    monkeypatch.setattr(scope, "runs", runs)
    assert gc.isenabled()
    run.scan([str(FIX / "scopes.py")])
    assert seen == [False] and gc.isenabled()
    gc.disable()
    try:
        run.scan([str(FIX / "scopes.py")])
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_serial_scan_reads_each_file_once_and_keeps_no_text_after(tmp_path, monkeypatch):
    """The passes after the per-file analysis (code no entry point runs, modules never called, defaults never
    taken) take the texts the analysis read in this process instead of reading every file again (NeMo: 1.3 s
    of CPU), and the scan keeps none of them once it returns."""
    import collections
    import shutil

    from kb.scan import pins, run, sources

    where = tmp_path / "holder"
    shutil.copytree(Path(__file__).parent / "fixtures" / "reach" / "holder", where)
    reads: collections.Counter[str] = collections.Counter()
    real = sources.read

    def counting(path: str, *args: object, **kwargs: object) -> sources.Unit:
        reads[path] += 1
        return real(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(sources, "read", counting)
    report = run.scan([str(where)], given=pins.parse_versions("torch=2.11"), jobs=1)
    assert report.notes, "the unreached and never-called passes ran (they give this fixture its notes)"
    assert reads and set(reads.values()) == {1}, reads
    assert not run._READ


HOST_CODE = '''import functools
import torch
from torch.utils.data import DataLoader, Dataset


def scale(x, size):
    return torch.nn.functional.interpolate(x.cuda(), size=size, mode="bilinear").sum().backward()


class Items(Dataset):
    def __getitem__(self, k):
        return scale(torch.zeros(1, 1, 4), 8)


def pipeline(ds):
    return ds.map(functools.partial(scale, size=8))


loader = DataLoader(Items(), collate_fn=functools.partial(scale, size=4))
'''


def test_a_scan_leaves_no_syntax_tree_in_reference_cycles(tmp_path):
    """The scan pauses the cyclic collector (run.scan): whatever a file's analysis leaves in a reference cycle
    waits for the collector after the scan, and a cycle that reaches the visitor keeps the file's whole tree
    alive until then (NeMo: two million nodes, 1.4 s of one collection). kb/scan/hostcode.py's build made
    one: a closure that called itself, holding the visitor's `dotted`."""
    import ast
    import gc

    from kb.scan import pins, run

    path = tmp_path / "host.py"
    path.write_text(HOST_CODE, encoding="utf-8")
    gc.collect()
    gc.disable()
    try:
        report = run.scan([str(path)], given=pins.parse_versions("torch=2.11"), jobs=1)
        assert report.findings or report.notes, "the fixture no longer reaches the host-code pass"
        gc.set_debug(gc.DEBUG_SAVEALL)
        gc.collect()
        trees = [o for o in gc.garbage if isinstance(o, ast.Module)]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
    assert not trees, f"{len(trees)} syntax trees were left in reference cycles"


def test_a_scan_keeps_no_tree_of_the_files_it_read_as_imports(tmp_path):
    """The trees of the code base's files read as imported modules (kb/scan/prepare.py's local_module) are the
    scan's: kept after it, a large code base's hundreds of trees were walked by every later collection of the
    cyclic collector, and a later scan in the same process would read a file as it was before."""
    from kb.scan import pins, prepare, run

    (tmp_path / "helpers.py").write_text("import torch\n\n\ndef make():\n    return torch.zeros(3)\n", encoding="utf-8")
    (tmp_path / "main.py").write_text("import helpers\nimport torch\n\nx = torch.index_add(helpers.make(), 0, "
                                      "torch.tensor([0]), torch.ones(1))\n", encoding="utf-8")
    run.scan([str(tmp_path)], given=pins.parse_versions("torch=2.11"), jobs=1)
    assert not prepare._LOCAL_TREES and not prepare._LOCAL_MODULES and not prepare._LOCAL_TEXTS


def test_an_imported_module_s_file_is_looked_for_once_per_folder(tmp_path, monkeypatch):
    """Each file of a folder that uses `helpers.f` asks where helpers.py is (kb/scan/prepare.py's local_module):
    the answer is the folder's, found once per scan with its `lstat`s, not again for every file and use
    (NeMo: 10,900 look-ups, 49,000 `lstat`s)."""
    import os

    from kb.scan import prepare

    (tmp_path / "pkg").mkdir()
    (tmp_path / "helpers.py").write_text("def f():\n    return 1\n", encoding="utf-8")
    stats: list[str] = []
    real = os.lstat

    def counting(path, *args, **kwargs):
        stats.append(str(path))
        return real(path, *args, **kwargs)

    prepare.forget_local_files()
    monkeypatch.setattr(os, "lstat", counting)
    try:
        for name in ("a.py", "b.py", "c.py"):
            assert "f" in (prepare.local_module(str(tmp_path / "pkg" / name), "helpers") or {})
    finally:
        prepare.forget_local_files()
    assert len(stats) == 2, stats  # pkg/helpers.py, then helpers.py: once for the folder
