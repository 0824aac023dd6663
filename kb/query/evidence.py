"""What was measured or read for the queried release: runs (`verified`) and static evidence
(`static`). kb/_index.py's `evidence` marks say whether any matches, so the details module
(kb/_details.py) loads only when one does."""

from kb.entries import STATIC_BYPASSED, STATIC_FILE, STATIC_FOUND, STATIC_KEY, STATIC_MISSING, STATIC_RELEASE
from kb.model import Evidence, ModeEvidence, StaticEvidence
from kb.query.state import LIMIT, Lazy, detail, memo

calls = Lazy("calls", globals())
signatures = Lazy("signatures", globals())

_evidence: dict[str, tuple] = memo()
_shown: dict[tuple, tuple] = memo()
_statics: dict[tuple, tuple] = memo()


def _evidence_of(source_id: str, idx: dict) -> tuple:
    """(release key, device, Evidence) per run of a source, built once from the index."""
    found = _evidence.get(source_id)
    if found is None:
        idx = {"runs": detail(idx, "runs", {})}
        found = _evidence[source_id] = tuple(
            (
                run["key"], run["device"],
                Evidence(**{
                    **{f: run.get(f) for f in Evidence._fields if f not in ("modes", "contradicts")},
                    "modes": tuple(ModeEvidence(**m) for m in run["modes"]),
                    "contradicts": tuple(run["contradicts"]),
                }),
            )
            for run in idx.get("runs", {}).get(source_id, ())
        )
    return found


def verified(prepared: tuple, key: tuple, device: str, idx: dict, *, call: dict | None = None,
             defaults: dict | None = None, ids: tuple | None = None) -> tuple:
    """Evidence measured on the queried release (same key, or a patch of the queried
    series: 2.11 shows runs of 2.11.0 and 2.11.1) and on the queried device, for the
    queried call: a case whose call disagrees with it is left out (docs/calls.md)."""
    marks = idx.get("evidence")
    if not (idx.get("runs") if marks is None else marks):
        return ()
    memo_key = (tuple(source["id"] for source, _ in prepared) if ids is None else ids, key, device)
    found = _shown.get(memo_key)
    if found is None:
        hits = []
        for source, _ in prepared:
            if marks is not None and not any(  # kb/_index.py's marks: no run here, no details to load
                    (device == "any" or run_device == device) and same_release(run_key, key)
                    for run_key, run_device in marks.get(source["id"], ((), ()))[0]):
                continue
            for run_key, run_device, evidence in _evidence_of(source["id"], idx):
                if (device == "any" or run_device == device) and same_release(run_key, key):
                    hits.append(evidence)
        found = tuple(hits)
        if len(_shown) < LIMIT:
            _shown[memo_key] = found
    if call is None:
        return found
    return tuple(e for e in found if _case_agrees(e, call, defaults))


def same_release(run_key: tuple, key: tuple) -> bool:
    """A series query (2.0, 2.11) matches its own patches (2.11.0, 2.11.1), not 2.0 -> 2.11:
    keys drop trailing zeros, so compare (epoch, major, minor) padded; a patch query matches
    that patch only."""
    if len(key) > 3:
        return run_key == key
    return (run_key + (0, 0, 0))[:3] == (key + (0, 0, 0))[:3]


def _case_agrees(evidence: Evidence, call: dict, defaults: dict | None) -> bool:
    """A case speaks for a call when no fact the call states (or defaults) differs from it."""
    case = evidence.call
    if case is None:
        return call.get("compiled") is None  # runs before cases: eager calls
    if case.get("compiled") != call.get("compiled"):  # absent = eager, on both sides
        return False
    for key, value in case.items():
        if key in call:
            # a case states the exact dtype it ran (float32); a call may state only the kind (float)
            if not calls.same(call[key], value) and not (isinstance(value, str) and calls.DTYPES.get(value) == call[key]):
                return False
        elif defaults is not None and key in defaults and not calls.same(defaults[key], value):
            default = defaults[key]
            if default is not signatures.NO_DEFAULT and default is not signatures.UNKNOWN_DEFAULT:
                return False
    return True


def static(prepared: tuple, key: tuple, version: str, idx: dict, ids: tuple | None = None) -> tuple:
    """Static evidence (`kb verify --static`) of the queried release: the same release, or every
    release read in the queried series (2.4 shows what the 2.4.0 and 2.4.1 wheels hold; 2.0 only
    2.0.x, although keys drop trailing zeros)."""
    marks = idx.get("evidence")
    if not (idx.get("static") if marks is None else marks):
        return ()
    width = 1 + max(len(key) - 1, version.strip().count(".") + 1)
    key = (key + (0,) * width)[:width]
    memo_key = (tuple(source["id"] for source, _ in prepared) if ids is None else ids, key)
    found = _statics.get(memo_key)
    if found is None:
        if marks is not None:  # kb/_index.py's marks: the details load only when a release matches
            prepared = tuple(p for p in prepared if any(
                (read + (0,) * width)[:width] == key for read in marks.get(p[0]["id"], ((), ()))[1]))
        found = _static_uncached(prepared, key, width, detail(idx, "static", {}), idx) if prepared else ()
        if len(_statics) < LIMIT:
            _statics[memo_key] = found
    return found


def _static_uncached(prepared: tuple, key: tuple, width: int, table: dict, idx: dict) -> tuple:
    wheels = detail(idx, "static_wheels", {})
    out = []
    for source, _ in prepared:
        for entry in table.get(source["id"], ()):
            if (entry[STATIC_KEY] + (0,) * width)[:width] == key:
                wheel, digest = (wheels.get(entry[STATIC_FILE]) or (("", ""),))[0]
                out.append(StaticEvidence(
                    source=source["id"], framework=source["framework"], release=entry[STATIC_RELEASE],
                    file=entry[STATIC_FILE],
                    found=tuple((name, wheel, digest, members) for name, members in entry[STATIC_FOUND]),
                    missing=entry[STATIC_MISSING], bypassed_by=entry[STATIC_BYPASSED],
                ))
    return tuple(out)
