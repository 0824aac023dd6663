"""Which files a scan reads, and their Python text (notebooks: the code cells).

A notebook's code cells are joined into one module so that an import in cell 1 resolves a
call in cell 7, as it does when the notebook runs; `Unit.place` maps a joined line back to
its cell. Each cell is read as IPython runs it (`kb.scan.cells`: IPython's own transformer when it
is importable, the same rewrites otherwise), keeping the cell's line numbers.
"""

from __future__ import annotations

import codecs
import errno
import fnmatch
import io
import itertools
import os
import stat
import tokenize
from pathlib import Path
from collections.abc import Iterable
from typing import NamedTuple

from kb import jsonio, untrusted
from kb.scan import cells as cell_text

SKIP_DIRS = frozenset({".git", ".hg", ".svn", ".venv", "venv", "env", "node_modules", "__pycache__",
                       "site-packages", ".tox", ".nox", ".mypy_cache", ".pytest_cache", ".ipynb_checkpoints"})
SUFFIXES = (".py", ".ipynb")
MAX_BYTES = 5_000_000  # a generated 5 MB module is not a training script; reported, not parsed
# Python's syntax tree takes ~3.6 KB a line of plain code (a 480,000-line file of assignments,
# 4.8 MB, took 1.75 GB): the largest hand-written modules have a few thousand lines, so a file
# over MAX_LINES is generated code, reported and not parsed (~180 MB at the bound).
MAX_LINES = 50_000
# A notebook is JSON from the repository being scanned (untrusted): at most MAX_BYTES, nbformat
# nests ~6 levels, an embedded image is one long string.
NOTEBOOK_LIMITS = jsonio.Limits(max_bytes=MAX_BYTES, max_depth=32, max_nodes=2_000_000, max_string=MAX_BYTES)
# Codecs that a PEP 263 line may name but that Python refuses as a source encoding ("encoding
# problem: punycode"); idna is one it accepts, so it is read as Python reads it.
_NOT_SOURCE = frozenset({"punycode"})


class SourceError(Exception):
    """A file that cannot be read as Python or as a notebook (reported; the scan goes on)."""


class Unit:
    """One file's Python text; for a notebook, the (first joined line, cell number) of each code cell."""

    __slots__ = ("path", "text", "cells")

    def __init__(self, path: str, text: str, cells: tuple[tuple[int, int], ...] = ()) -> None:
        self.path, self.text, self.cells = path, text, cells

    def place(self, line: int) -> tuple[int | None, int]:
        """(cell number or None, line within the cell) of a line of the joined text."""
        cell, start = None, 1
        for first, number in self.cells:
            if first > line:
                break
            cell, start = number, first
        return cell, line - start + 1


class NotAFile(Exception):
    """A path given on the command line that exists but is neither a regular file nor a folder."""


class SymlinkLoop(Exception):
    """A path given on the command line that is a symlink leading back to itself."""


class Found(NamedTuple):
    """A file to scan and the root it was found under (its symlinks must resolve inside it)."""

    path: str
    root: str


def discover(paths: list[str], exclude: tuple[str, ...] = ()) -> list[Found]:
    """Python files and notebooks under `paths`, sorted by path; a missing path raises
    FileNotFoundError, a device or FIFO given by name NotAFile.

    Folder symlinks are not descended (os.walk's default); a file symlink under a folder is
    listed with that folder as its root, and `read` refuses it if it resolves out of it. A
    file named on the command line is its own root: the person running the scan chose it.
    """
    found: dict[str, str] = {}
    for given in paths:
        if os.path.isdir(given):
            root = os.path.realpath(given)
            for path in walk(given, exclude):
                found.setdefault(path, root)
            continue
        if not os.path.lexists(given):
            raise FileNotFoundError(given)
        try:
            mode = os.stat(given).st_mode
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise SymlinkLoop(given) from None
            raise FileNotFoundError(given) from None  # a dangling symlink
        if not stat.S_ISREG(mode):
            raise NotAFile(given)
        found[os.path.normpath(given)] = os.sep
    return [Found(path, found[path]) for path in sorted(found)]


def config_files(roots: list[str], suffixes: tuple[str, ...], limit: int) -> list[tuple[str, str]]:
    """(path, root) of the configuration files (`suffixes`) under the scanned folders, folders in sorted order, at
    most `limit`: the YAML targets of kb/scan/configtargets.py and the gin files of kb/scan/ginconfigs.py."""
    out: list[tuple[str, str]] = []
    for root in roots:
        if os.path.isdir(root):
            out += [(path, root) for path in itertools.islice(walk(root, suffixes=suffixes), limit - len(out))]
    return out


def walk(top: str, exclude: tuple[str, ...] = (), suffixes: tuple[str, ...] = SUFFIXES):
    """The files under `top` whose names end with `suffixes` (the *.py and *.ipynb files; configuration files
    for kb/scan/configtargets.py), folders in sorted order, with an explicit stack:
    os.walk recurses once per level in Python 3.11, so a tree 1,000 folders deep (one committed
    path) was a RecursionError. Folder symlinks are not descended; unreadable folders skipped."""
    stack = [top]
    while stack:
        folder = stack.pop()
        try:
            with os.scandir(folder) as entries:
                items = sorted(entries, key=lambda e: e.name)
        except OSError:
            continue
        subfolders = []
        for entry in items:
            name = entry.name
            try:
                is_dir = entry.is_dir()
                is_link = entry.is_symlink()
            except OSError:  # a symlink loop: listed, so that reading it is one error line naming it
                is_dir, is_link = False, True
            path = os.path.normpath(os.path.join(folder, name))
            if is_dir:
                if not is_link and name not in SKIP_DIRS and not name.startswith(".") and not _excluded(path, exclude):
                    subfolders.append(os.path.join(folder, name))
            elif name.endswith(suffixes) and not _excluded(path, exclude):
                yield path
        stack.extend(reversed(subfolders))


def _excluded(path: str, patterns: tuple[str, ...]) -> bool:
    posix = Path(path).as_posix()
    return any(fnmatch.fnmatch(posix, p) or fnmatch.fnmatch(os.path.basename(path), p) for p in patterns)


def read(path: str, root: str = os.sep, folders: dict[str, str] | None = None) -> Unit:
    """The file as a Unit; raises SourceError saying what is wrong with it.

    Through kb.untrusted: a regular file only (a FIFO, a device or a folder named *.py is
    refused, never opened blocking), at most MAX_BYTES, and a symlink must resolve inside
    `root`. A notebook's JSON goes through kb.jsonio (bounded depth, size and numbers).
    `folders`: one scan's table of resolved folders (untrusted.check_inside).
    """
    try:
        raw = untrusted.read_bytes(Path(path), MAX_BYTES, Path(root), folders)
    except untrusted.Refused as exc:
        raise SourceError(exc.message) from None
    except OSError as exc:
        raise SourceError(f"cannot read: {exc.strerror or exc}") from None
    unit = _notebook(path, raw) if path.endswith(".ipynb") else Unit(path, lines_as_python_reads_them(_python_text(raw)))
    lines = unit.text.count("\n")
    if lines > MAX_LINES:
        raise SourceError(f"the file has {lines:,} lines of Python; at most {MAX_LINES:,} are parsed "
                          "(a longer module is generated code, and its syntax tree would take gigabytes)")
    return unit


class Texts:
    """Each scanned file's text, read once for all the passes that read files again after the workers parsed
    them (code no entry point runs, modules never called, defaults never taken), through read(), bounded as
    the first reading was; None for a file that is not scanned or cannot be read again."""

    def __init__(self, files: list[Found], folders: dict[str, str] | None = None,
                 known: dict[str, str] | None = None) -> None:
        self._roots = {f.path: f.root for f in files}
        self._folders = folders
        self._texts: dict[str, str | None] = dict(known or {})  # texts this process read already

    def get(self, path: str) -> str | None:
        if path not in self._texts:
            root = self._roots.get(path)
            try:
                self._texts[path] = None if root is None else read(path, root, self._folders).text
            except (SourceError, ValueError):
                self._texts[path] = None
        return self._texts[path]

    def every(self, paths: Iterable[str]) -> dict[str, str] | None:
        """Each path's text, or None if any cannot be read: a pass that must see every file claims nothing then."""
        out: dict[str, str] = {}
        for path in paths:
            text = self.get(path)
            if text is None:
                return None
            out[path] = text
        return out


def lines_as_python_reads_them(text: str) -> str:
    """CR LF and a lone CR end a line, as Python's reader translates them before it tokenizes:
    a file saved with CR-only endings runs, and every line-based pass must see its lines."""
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


def _python_text(raw: bytes) -> str:
    """Decode a .py file as Python does: UTF-8, or the encoding its PEP 263 line names."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
    except SyntaxError as exc:  # an unknown codec, a BOM with another encoding, or no coding line and not UTF-8
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError as bad:
            if "missing" in str(exc):
                raise SourceError(f"not UTF-8 (byte {bad.start}) and no PEP 263 coding line") from None
        raise SourceError(f"bad encoding declaration: {exc.msg if hasattr(exc, 'msg') else exc}") from None
    try:
        info = codecs.lookup(encoding)
        if info.name in _NOT_SOURCE or not getattr(info, "_is_text_encoding", True):
            raise LookupError(encoding)
        return raw.decode(info.name if encoding != "utf-8-sig" else encoding)
    except LookupError:
        raise SourceError(f"bad encoding declaration: {encoding!r} is not a text encoding Python source can use") from None
    except UnicodeDecodeError as exc:
        what = "UTF-8" if info.name == "utf-8" else f"{encoding} (its coding line)"
        raise SourceError(f"not {what} (byte {exc.start})") from None
    except (UnicodeError, ValueError) as exc:  # `# coding: undefined` raises a plain UnicodeError
        raise SourceError(f"bad encoding declaration: decoding with {encoding!r} failed ({exc})") from None


def _notebook(path: str, raw: bytes) -> Unit:
    try:
        doc = jsonio.loads(raw, path, limits=NOTEBOOK_LIMITS)
    except jsonio.JsonError as exc:
        message = exc.message.removeprefix("invalid JSON: ")
        what = "refused" if exc.code else "invalid JSON"
        raise SourceError(f"not a notebook: {what} at line {exc.line}: {message}") from None
    cells = doc.get("cells") if isinstance(doc, dict) else None
    if not isinstance(cells, list):
        raise SourceError("not a notebook: expected a JSON object with a 'cells' list (nbformat 4)")
    lines: list[str] = []
    starts: list[tuple[int, int]] = []
    for number, cell in enumerate(cells, start=1):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        if isinstance(source, list):
            source = "".join(s for s in source if isinstance(s, str))
        if not isinstance(source, str):
            raise SourceError(f"cell {number}: 'source' should be a string or a list of strings")
        starts.append((len(lines) + 1, number))
        lines.extend(cell_text.python_of(lines_as_python_reads_them(source)).split("\n"))
    return Unit(path, "\n".join(lines) + "\n", tuple(starts))
