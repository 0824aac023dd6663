"""Whether `kb validate` or `kb build` already passed on exactly these inputs.

Both are a pure function of the repository's files (the data, the code that reads and renders it,
the hand-written parts of the generated pages) and of the Python and library versions. After a
clean run, the digest of all of those (the files it writes are among them) is kept under
.cache/kb/ (gitignored); the next run with the same digest says the same thing without reading
and compiling the data again (issue 44: 1 s when nothing changed). Nothing is looked up by time or
size: one changed byte, a file added or removed, or another Python misses, and the full run is made.

Where a digest cannot be trusted to cover everything the run reads, there is none: a symlink, a
FIFO or a device anywhere in the inputs (the run may read through it), or inputs past the bounds
below. A store that cannot be read or written only costs time.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import sys
from pathlib import Path

from kb.known import CACHE_DIR

ROOTS = ("data", "kb", "docs", "examples", "schema", "site", "verifiers", "README.md", "pyproject.toml")
"""What validate and build read: the data, the code and templates, the pages they generate into."""
SKIPPED = {"__pycache__", ".cache"}
SKIPPED_PATHS = {"site/build"}  # `kb site` writes it; neither command reads it
LIBRARIES = ("pydantic", "pydantic_core", "jinja2", "pyyaml", "packaging", "rich", "markupsafe")
MAX_FILES = 20_000
MAX_DEPTH = 64
MAX_BYTES = 512 * 1024 * 1024


def inputs_digest(root: Path, command: str) -> str | None:
    """The digest of every input of `command` (its name and options included), or None where one
    cannot be made safely."""
    h = hashlib.sha256(f"{command}\0{sys.version}\0".encode())
    for found in _installed():
        h.update(f"{found}\0".encode())
    files = total = 0
    code = Path(__file__).resolve().parent  # the kb that runs, which --root may not hold
    tops = [(top, root / top) for top in ROOTS]
    if (root / "kb").resolve() != code:
        tops.append(("<kb>", code))
    beside = code.parent / "verifiers"  # the lint reads the installed verifiers where root has none
    if not (root / "verifiers").is_dir() and beside.is_dir():
        tops.append(("<verifiers>", beside))
    for top, start in tops:
        try:
            st = os.lstat(start)
        except FileNotFoundError:
            h.update(f"-{top}\0".encode())
            continue
        if stat.S_ISREG(st.st_mode):
            entries = [(top, start)]
        elif stat.S_ISDIR(st.st_mode):
            listed = _files_under(start, top)
            if listed is None:
                return None
            entries = listed
        else:
            return None
        for rel, path in entries:
            st = os.lstat(path)
            if not stat.S_ISREG(st.st_mode):
                return None
            files += 1
            total += st.st_size
            if files > MAX_FILES or total > MAX_BYTES:
                return None
            with open(path, "rb") as handle:
                h.update(rel.encode("utf-8", "surrogateescape") + b"\0" + hashlib.sha256(handle.read()).digest())
    return h.hexdigest()


def _files_under(start: Path, top: str) -> list[tuple[str, Path]] | None:
    """(name, path) of every entry below `start` that is not a folder, in a fixed order; None where a
    link to a folder or a chain deeper than MAX_DEPTH is met (a walk without recursion: a folder
    chain thousands deep is data a user may hand us)."""
    out: list[tuple[str, Path]] = []
    todo: list[tuple[str, Path, int]] = [(top, start, 0)]
    while todo:
        rel_dir, folder, depth = todo.pop()
        if depth > MAX_DEPTH or len(out) > MAX_FILES:
            return None
        try:
            names = sorted(os.listdir(folder))
        except OSError:
            return None
        for name in names:
            path = folder / name
            rel = f"{rel_dir}/{name}"
            st = os.lstat(path)
            if stat.S_ISDIR(st.st_mode):
                if name not in SKIPPED and rel not in SKIPPED_PATHS:
                    todo.append((rel, path, depth + 1))
            else:
                out.append((rel, path))  # links and devices are refused by the caller
    return sorted(out)


def _installed() -> list[str]:
    """The installed releases of the libraries the runs use, as their dist-info folder names
    (importlib.metadata would cost a tenth of a second to import)."""
    prefixes = tuple(f"{name}-" for name in LIBRARIES)
    found: list[str] = []
    for entry in sys.path:
        if not entry.endswith("site-packages"):
            continue
        try:
            names = os.listdir(entry)
        except OSError:
            continue
        found.extend(f"{entry}/{n}" for n in names if n.lower().startswith(prefixes) and n.endswith(".dist-info"))
    return sorted(found)


def _store(root: Path, command: str) -> Path:
    return root / CACHE_DIR / f"unchanged-{command.split()[0]}.json"


def passed(root: Path, command: str, digest: str | None) -> dict | None:
    """What the clean run on these inputs said (`said`: its lines), if there was one. The files a
    run writes (the generated pages, schemas and index) are among its inputs, so a hand-edited one
    changes the digest too."""
    if digest is None:
        return None
    try:
        kept = json.loads(_store(root, command).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(kept, dict) or kept.get("command") != command or kept.get("digest") != digest:
        return None
    return kept if isinstance(kept.get("said"), list) else None


def record(root: Path, command: str, digest: str | None, said: list[str]) -> None:
    """Keep a clean run's result; a store that cannot be written is left as it was."""
    if digest is None:
        return
    from kb.atomic import write_atomic

    try:
        (root / CACHE_DIR).mkdir(parents=True, exist_ok=True)
        write_atomic(_store(root, command), json.dumps({"command": command, "digest": digest, "said": said}, indent=1))
    except OSError:
        pass
