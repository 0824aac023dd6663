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
