"""Values that are a pure function of some text, kept between runs under .cache/kb/ (gitignored).

Parsing ~270 YAML files is most of what `kb validate` and `kb build` do, and the parse of a
file is a pure function of its text and the reader's code. A `Memo` keeps such values under
a key that covers both (sha256 of the code's fingerprint and the text), so an edited file, or
changed reading code, misses and is computed again; nothing is ever looked up by path, size
or time. Losing the store (deleted, damaged, written by another Python) only costs time.

Values are plain data: dicts, lists, tuples, str, bytes, int, float, bool, None and dates.
Each is stored as its own pickle and read back with an unpickler that builds nothing else
(no class is looked up but datetime's), so every `get` returns fresh objects a caller may
change, and a planted store can cost time but never run code. The store itself is a marshal
of {key: pickle}, written atomically.
"""

from __future__ import annotations

import hashlib
import io
import marshal
import os
import pickle
from pathlib import Path
from typing import Any

from kb.known import CACHE_DIR, fingerprint

FORMAT = b"kb-memo 1\n"
MISS = object()
_ALLOWED = {("datetime", "date"), ("datetime", "datetime"), ("datetime", "timezone"), ("datetime", "timedelta")}


class _Plain(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in _ALLOWED:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"{module}.{name} is not plain data")


def loads(blob: bytes) -> Any:
    return _Plain(io.BytesIO(blob)).load()


def read_store(path: Path, form: bytes, code: bytes, limit: int | None = None) -> dict[bytes, bytes]:
    """The {key: blob} of a store write_store wrote with the same `form` line and `code` digest: {} when it is
    missing, damaged, larger than `limit` bytes, or written by another format or other code (kb/scan/filecache.py
    keeps its stores this way too)."""
    try:
        if limit is not None and os.path.getsize(path) > limit:
            return {}
        with open(path, "rb") as handle:
            if handle.readline() != form or handle.readline().rstrip(b"\n") != code:
                return {}
            store = marshal.load(handle)
    except (OSError, EOFError, ValueError, TypeError):
        return {}
    if not isinstance(store, dict):
        return {}
    return {k: v for k, v in store.items() if isinstance(k, bytes) and isinstance(v, bytes)}


def write_store(path: Path, form: bytes, code: bytes, store: dict[bytes, bytes]) -> bool:
    """Write the store atomically (a temporary file renamed over it); False, and nothing left behind, when the
    folder cannot be written."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(tmp, "wb") as handle:
            handle.write(form + code + b"\n")
            marshal.dump(store, handle)
        os.replace(tmp, path)
    except (OSError, ValueError):
        try:
            tmp.unlink()
        except OSError:
            pass
        return False
    return True


class Memo:
    """The values `name` computed under `root` before, and the ones this run used or added.

    `get(key)` returns a stored value or MISS; `put(key, value)` records one; `save()` writes
    the store when something was added: this run's entries, plus the older ones while they
    are no more than this run's (so two commands that read different files keep both, and
    the entries of edited files drop out instead of piling up).
    """

    def __init__(self, root: Path, name: str, *code: str | Path) -> None:
        self.path = root / CACHE_DIR / f"{name}.memo"
        self.code = fingerprint(name, *code).encode()
        self.before: dict[bytes, bytes] = {}
        self.now: dict[bytes, bytes] = {}
        self.added = False
        self.before = read_store(self.path, FORMAT, self.code)

    def key(self, *parts: str | bytes) -> bytes:
        h = hashlib.sha256(self.code)
        for part in parts:
            data = part.encode("utf-8", "surrogatepass") if isinstance(part, str) else part
            h.update(len(data).to_bytes(8, "little") + data)
        return h.digest()

    def get(self, key: bytes) -> Any:
        blob = self.now.get(key) or self.before.get(key)
        if blob is None:
            return MISS
        try:
            value = loads(blob)
        except Exception:  # a damaged entry: computed again
            self.before.pop(key, None)
            self.now.pop(key, None)
            return MISS
        self.now[key] = blob
        return value

    def put(self, key: bytes, value: Any) -> None:
        try:
            blob = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        except (pickle.PicklingError, TypeError, AttributeError, RecursionError):
            return
        self.now[key] = blob
        self.added = True

    def save(self) -> None:
        """Write the store atomically when this run added to it; a read-only checkout goes without."""
        if not self.added:
            return
        store = dict(self.now)
        older = {k: v for k, v in self.before.items() if k not in store}
        if len(older) <= len(store):
            store.update(older)
        write_store(self.path, FORMAT, self.code, store)
        self.before, self.added = store, False
