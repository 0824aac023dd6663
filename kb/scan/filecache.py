"""Each file's reading (kb/scan/run.py's _one: its calls, settings, layout and classes) kept between scans of the
same code base, so that a scan after a small edit reads only what changed.

Reading the files is most of a scan's time (a 1M-line code base: two thirds of it), and a file's reading is a
function of its path, its text, the names other files' classes give it (`imported`, `starred`), the scanner's
code and the knowledge base's index, and the answers of the look-ups it made into other files of the code base
(kb/scan/filedeps.py). The key covers the first five (the code and index as a digest of every module of the
package, with Python's version); the look-ups are stored with the reading and asked again before it is used
(prepare.still_holds). Nothing is looked up by size or modification time.

One store per set of scanned paths, under the user's cache folder (`$KB_SCAN_CACHE`, else
`$XDG_CACHE_HOME/kb/scan`, else `~/.cache/kb/scan`), never inside the scanned code base. It holds the readings the last scan used or made and
nothing else, so it stays the size of one scan's results (a 1M-line code base: about 7 MB), and it is written
atomically when a scan ends; the folder keeps the 32 most recently written stores. A store that is missing, damaged, written by other code, or that cannot be written
only costs time: every reading is then made afresh. The unpickler builds the scanner's own record types and
nothing else, so a planted store can cost time but never run code; each entry carries its own digest, so a
damaged entry is read afresh (a store is trusted as far as its folder: whoever writes it can change answers).
"""

from __future__ import annotations

import hashlib
import io
import os
import pickle
import re
import sys
from pathlib import Path
from typing import Any

from kb.memo import read_store, write_store

FORMAT = b"kb-scan-cache 2\n"
ENV = "KB_SCAN_CACHE"
MAX_STORE_BYTES = 1 << 30  # a store larger than this is not read (a scan's own results are far smaller)
MAX_STORES = 32  # stores of other path sets beyond this many (the least recently written) are removed
_CLASSES = {("kb.scan.run", "FileError"), ("kb.scan.syntax", "Call"), ("kb.scan.syntax", "Graph"),
            ("kb.scan.syntax", "Layout"), ("kb.scan.syntax", "Module"), ("kb.scan.syntax", "Setting"),
            ("kb.scan.syntax", "Unknown")}
_CODE: list[str] = []  # the code digest, computed once per process


_CHECK = 16  # bytes of each entry's own digest, before its pickle


def _reading(value: object) -> bool:
    """The shape of run._one's answer: (path, cells, Module or None, [FileError], suppressions)."""
    return (isinstance(value, tuple) and len(value) == 5 and isinstance(value[0], str)
            and isinstance(value[1], tuple) and isinstance(value[3], list) and isinstance(value[4], dict)
            and (value[2] is None or type(value[2]).__name__ == "Module"))


class _Records(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in _CLASSES:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"{module}.{name} is not a scan record")


def default_folder() -> Path:
    """Where `kb scan` keeps its stores unless told otherwise: $KB_SCAN_CACHE, else the XDG cache folder's
    kb/scan (a CI job that keeps one folder between runs names it in the variable)."""
    if os.environ.get(ENV):
        return Path(os.environ[ENV])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "kb" / "scan"


def code_digest() -> str:
    """A digest of every module of the kb package (the scanner and the index it answers from), of the signature
    files kb.parameters reads (data/api/<framework>.signatures.txt) and of Python's version: a reading made by other code, or by another Python whose syntax trees differ, is never used."""
    if not _CODE:
        h = hashlib.sha256(sys.version.encode())
        package = Path(__file__).resolve().parents[1]
        for path in sorted(package.rglob("*.py")):
            h.update(str(path.relative_to(package)).encode() + b"\0")
            h.update(path.read_bytes())
        from kb import signatures
        from kb.query import frameworks

        for framework in frameworks():  # kb.parameters reads the ops without records from these (kb/scan/gradient.py)
            found = signatures.source_file(framework)
            if found is not None:
                h.update(framework.encode() + b"\0")
                h.update(Path(found).read_bytes())
        _CODE.append(h.hexdigest())
    return _CODE[0]


class FileCache:
    """The readings of the last scan of `paths`, and the ones this scan used or made."""

    def __init__(self, folder: Path, paths: list[str]) -> None:
        scanned = "\0".join(sorted(os.path.abspath(p) for p in paths))
        self.path = folder / (hashlib.sha256(scanned.encode("utf-8", "surrogatepass")).hexdigest()[:24] + ".cache")
        self.code = code_digest().encode()
        self.before: dict[bytes, bytes] = {}
        self.now: dict[bytes, bytes] = {}
        self.before = read_store(self.path, FORMAT, self.code, MAX_STORE_BYTES)

    def key(self, path: str, text: str, imported: dict | None, starred: dict | None, cells: tuple = ()) -> bytes:
        """`cells`: a notebook's (first line, cell number) of each code cell: a markdown cell added or removed
        leaves the Python text as it was but numbers the code cells otherwise (and the reading holds them)."""
        h = hashlib.sha256(self.code)
        for part in (path, text, repr(sorted((imported or {}).items())), repr(sorted((starred or {}).items())),
                     repr(tuple(cells))):
            data = part.encode("utf-8", "surrogatepass")
            h.update(len(data).to_bytes(8, "little") + data)
        return h.digest()

    def get(self, key: bytes) -> tuple[tuple, tuple] | None:
        """(the reading, the look-ups it made) stored under `key`, or None."""
        stored = self.now.get(key) or self.before.get(key)
        if stored is None:
            return None
        check, blob = stored[:_CHECK], stored[_CHECK:]
        try:
            if hashlib.blake2b(blob, digest_size=_CHECK).digest() != check:
                raise ValueError("damaged")  # a changed byte anywhere (a string of the reading): read afresh
            value = _Records(io.BytesIO(blob)).load()
        except Exception:  # a damaged entry: read afresh
            self.before.pop(key, None)
            return None
        if not (isinstance(value, tuple) and len(value) == 2 and _reading(value[0]) and isinstance(value[1], tuple)):
            self.before.pop(key, None)
            return None
        return value

    def used(self, key: bytes) -> None:
        """Keep the stored entry `key` for the next scan."""
        blob = self.before.get(key)
        if blob is not None:
            self.now[key] = blob

    def put(self, key: bytes, reading: tuple, seen: tuple) -> None:
        try:
            blob = pickle.dumps((reading, seen), protocol=pickle.HIGHEST_PROTOCOL)
            self.now[key] = hashlib.blake2b(blob, digest_size=_CHECK).digest() + blob
        except (pickle.PicklingError, TypeError, AttributeError, RecursionError):
            pass

    def take(self) -> dict[bytes, bytes]:
        """The entries used or made since the last take (a worker process hands them to the scan's process)."""
        taken, self.now = self.now, {}
        return taken

    def save(self) -> None:
        """Write this scan's entries atomically; a folder that cannot be written goes without."""
        if self.now == self.before:
            return
        if write_store(self.path, FORMAT, self.code, self.now):
            _trim(self.path.parent)


_STORE_NAME = re.compile(r"[0-9a-f]{24}\.cache")  # FileCache's names: the folder may hold other programs' files


def _trim(folder: Path) -> None:
    """Remove the least recently written stores beyond MAX_STORES: each set of paths scanned (a pre-commit hook
    passes the changed files) has its own, and the folder must not grow without end. Only the stores: a folder
    named for them (`KB_SCAN_CACHE=~/.cache`) may hold another program's `*.cache` files."""
    try:
        stores = sorted((p for p in folder.glob("*.cache") if _STORE_NAME.fullmatch(p.name)),
                        key=lambda p: p.stat().st_mtime, reverse=True)
        for old in stores[MAX_STORES:]:
            old.unlink()
    except OSError:
        pass
