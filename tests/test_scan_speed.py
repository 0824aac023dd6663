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
