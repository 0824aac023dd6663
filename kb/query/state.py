"""What the query package keeps between calls, in one place: the loaded index, every memo,
and the modules it loads on first use.

The index is kb/_index.py (what every query reads) alone, or joined with kb/_details.py (run
and static evidence, parameters, the records' prose) and kb/_seen.py (the sweep cases of ops
without a record) when a query needs it; `split_index` is how kb/generated.py writes the
modules, `join_index` undoes it. `kb scan` reads kb/_index.py and kb/_details.py only
(`scan_index`): kb/_seen.py, 40% of the details' source, loads when a lookup asks for `seen`.

Every memo is made by `memo()`, which registers it, so `clear()` (what `kb.query.reset()`
runs) forgets all of them; a dict made any other way at module level is a bug that
tests/test_query_caches.py finds. A memo is a plain module-level dict in the module that
uses it, so a lookup costs what a global dict costs.
"""

from kb.entries import STATIC_KEY, JsonPacked, Packed

LIMIT = 8192  # entries a memo keyed by caller input may hold (op names, versions, calls)
_MEMOS: list[dict] = []


def memo() -> dict:
    """A new memo, registered so that `clear()` forgets it."""
    new: dict = {}
    _MEMOS.append(new)
    return new


def memos() -> tuple[dict, ...]:
    """Every registered memo (for the test that no memo escapes `clear()`)."""
    return tuple(_MEMOS)


def clear() -> None:
    """Forget every memo, the loaded index included."""
    for found in _MEMOS:
        found.clear()


loaded = memo()  # "whole": kb/_index.py joined with kb/_details.py and kb/_seen.py (or reset()'s); "core": what
# status() reads; "scan": the whole less `seen` (scan_index)


class Lazy:
    """A kb module imported on first use: a query that never needs it (no call conditions, no
    `call=`) never pays its import (every module costs start-up time). The first attribute
    read replaces this stand-in in the user's globals by the module itself."""

    def __init__(self, name: str, where: dict) -> None:
        self._name, self._where = name, where

    def __getattr__(self, attr: str):
        module = __import__(f"kb.{self._name}", fromlist=["_"])
        self._where[self._name.rsplit(".", 1)[-1]] = module  # "query.tfkeras" is bound as tfkeras
        return getattr(module, attr)


# What kb/_index.py keeps of each record (what a Status shows); the rest is in kb/_details.py.
CORE_SOURCE_FIELDS = frozenset((
    "id", "framework", "title", "device", "pass", "mechanism", "summary", "calls", "status", "op_versions", "caused_by",
    "distributions", "disputes", "references",
))
SEEN_KEYS = ("seen",)  # the details' tables kb/_seen.py holds (no scan reads them unless a lookup needs one)
DETAIL_KEYS = frozenset(("params", "runs", "flagged", "reviewed", "static", "static_wheels", "static_disagreements",
                         "static_unclaimed", "seen", "seen_files", "seen_defaults"))


def index() -> dict:
    """The whole compiled index, as kb/compile.py built it (loads kb/_details.py on first use)."""
    whole = loaded.get("whole")
    if whole is None:
        with _no_gc():
            from kb._details import DETAILS
            from kb._seen import SEEN

        whole = loaded["whole"] = join_index(light(), {**DETAILS, **SEEN})
    return whole


def scan_index() -> dict:
    """The index as `kb scan` reads it: the whole index less the tables of kb/_seen.py (SEEN_KEYS),
    which `detail` loads if a lookup asks for one; the whole index itself once it is loaded. Without
    a bytecode cache, compiling kb/_seen.py's source alone took a second of every scan."""
    found = loaded.get("whole")
    if found is None:
        found = loaded.get("scan")
        if found is None:
            with _no_gc():
                from kb._details import DETAILS

            found = loaded["scan"] = join_index(light(), DETAILS, lazy=True)
    return found


class _no_gc:
    """The garbage collector paused while a generated module builds its literal: it would
    otherwise walk the growing index again and again (a third of kb/_index.py's load time)."""

    def __enter__(self) -> None:
        import gc

        self.was = gc.isenabled()
        gc.disable()

    def __exit__(self, *exc: object) -> None:
        if self.was:
            import gc

            gc.enable()


def light() -> dict:
    """The part of the index every query reads (kb/_index.py): the details module, with the
    run and static evidence, parameters and the records' prose, loads only when a query needs it."""
    core = loaded.get("core")
    if core is None:
        core = loaded.get("whole")
        if core is None:
            with _no_gc():
                from kb._index import INDEX

            core = INDEX
        loaded["core"] = core
    return core


def use(new_index: dict) -> None:
    """Answer from `new_index` (a whole index) instead of the generated modules."""
    loaded["whole"] = loaded["core"] = new_index
    loaded.pop("scan", None)


def detail(idx: dict, name: str, default=None):
    """A part of the index that kb/_index.py (which has `evidence` instead) leaves to kb/_details.py,
    or that scan_index() leaves to kb/_seen.py."""
    if name in idx:
        return idx[name]
    if "evidence" not in idx and idx is not loaded.get("scan"):
        return default
    if name not in SEEN_KEYS and "whole" not in loaded:
        return scan_index().get(name, default)  # kb/_details.py only
    return index().get(name, default)


def split_index(idx: dict) -> tuple[dict, dict]:
    """(core, details): the index as kb/_index.py and kb/_details.py with kb/_seen.py hold it (`split_seen`
    parts the details); `join_index` undoes it.

    The core adds `evidence`: per record with runs or static evidence, the (release key, device)
    of each run and the release key of each static evidence file, so that a query tells whether
    any evidence matches before loading the details (most queries need none).
    """
    runs, static = idx.get("runs", {}), idx.get("static", {})
    marks = {}
    for sid in idx["sources"]:
        measured = tuple(dict.fromkeys((run["key"], run["device"]) for run in runs.get(sid, ())))
        read = tuple(dict.fromkeys(entry[STATIC_KEY] for entry in static.get(sid, ())))
        if measured or read:
            marks[sid] = (measured, read)
    core: dict = {}
    for name, value in idx.items():
        if name == "sources":
            value = {sid: {f: v for f, v in source.items() if f in CORE_SOURCE_FIELDS} for sid, source in value.items()}
        if name not in DETAIL_KEYS:
            core[name] = value
    core["evidence"] = marks
    fields = tuple(dict.fromkeys(f for source in idx["sources"].values() for f in source))
    details = {
        "keys": tuple(idx),
        "source_fields": fields,
        "sources": {sid: {f: v for f, v in source.items() if f not in CORE_SOURCE_FIELDS}
                    for sid, source in idx["sources"].items()},
        **{name: value for name, value in idx.items() if name in DETAIL_KEYS},
    }
    return core, details


def split_seen(details: dict) -> tuple[dict, dict]:
    """(kb/_details.py's part, kb/_seen.py's part) of split_index's details: SEEN_KEYS in the second."""
    return ({name: value for name, value in details.items() if name not in SEEN_KEYS},
            {name: value for name, value in details.items() if name in SEEN_KEYS})


def join_index(core: dict, details: dict, lazy: bool = False) -> dict:
    """The whole index from its two parts, equal to what kb/compile.py built, key order included;
    without SEEN_KEYS in `details`, the index less those tables (scan_index). `lazy`: the tables of
    kb/_details.py that are JsonPacked stay so (a scan decodes the few records it reports on)."""
    more = details["sources"]
    fields = details["source_fields"]
    sources = {
        sid: {f: source[f] if f in source else more[sid][f] for f in fields if f in source or f in more.get(sid, ())}
        for sid, source in core["sources"].items()
    }
    return {name: sources if name == "sources" else _plain(core[name]) if name in core
            else details[name] if lazy else _plain(details[name])
            for name in details["keys"] if name in core or name in details}


def _plain(value: object) -> object:
    """A table of kb/_index.py as the plain dict kb/compile.py built (kb/entries.py Packed)."""
    return dict(value.items()) if isinstance(value, (Packed, JsonPacked)) else value
