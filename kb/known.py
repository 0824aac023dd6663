"""Content keys already checked and found good, kept between runs under .cache/kb/ (gitignored).

A check whose answer is a pure function of a file's text, its path and the code that judges
it (KB009: is the file in canonical form?) need not redo the work for a file that has not
changed since it last passed. The key covers all three, so an edited file, a moved file or
changed checking code is checked again; only passes are remembered, so a failure is always
recomputed and reported. Losing the cache (deleted, unreadable, written by another version)
only costs time, never an answer.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

from kb.atomic import write_atomic

CACHE_DIR = ".cache/kb"
FORMAT = "kb-known 1"


def fingerprint(*parts: str | Path) -> str:
    """A digest of the checking code (file contents) and any version strings it depends on."""
    h = hashlib.sha256(sys.version.encode())
    for part in parts:
        h.update(b"\0" + (part.read_bytes() if isinstance(part, Path) else part.encode()))
    return h.hexdigest()


class Known:
    """The keys that passed check `name` under `root` last time, and those that pass this time.

    `passed(key)` asks, `add(key)` records a pass; `save()` keeps only this run's passes, so
    keys of edited or deleted files drop out instead of piling up.
    """

    def __init__(self, root: Path, name: str, code: str) -> None:
        self.path = root / CACHE_DIR / f"{name}.txt"
        self.code = code
        self.before: frozenset[str] = frozenset()
        self.now: set[str] = set()
        try:
            lines = self.path.read_text(encoding="ascii").splitlines()
        except (OSError, UnicodeDecodeError):
            return
        if lines[:2] == [FORMAT, code]:
            self.before = frozenset(lines[2:])

    def key(self, rel: str, text: str) -> str:
        """The key of one file: its path, its text and the checking code's fingerprint."""
        return hashlib.sha256(f"{self.code}\0{rel}\0".encode() + text.encode("utf-8", "surrogatepass")).hexdigest()

    def passed(self, key: str) -> bool:
        if key in self.before:
            self.now.add(key)
            return True
        return False

    def add(self, key: str) -> None:
        self.now.add(key)

    def save(self) -> None:
        """Write this run's passes atomically when they changed; a read-only checkout goes without."""
        if self.now == self.before:
            return
        try:
            write_atomic(self.path, "\n".join([FORMAT, self.code, *sorted(self.now)]) + "\n")
        except OSError:
            pass
