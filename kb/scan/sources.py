"""Which files a scan reads, and their Python text (notebooks: the code cells).

A notebook's code cells are joined into one module so that an import in cell 1 resolves a
call in cell 7, as it does when the notebook runs; `Unit.place` maps a joined line back to
its cell. IPython magics and shell lines (`%time`, `!pip`) become `pass`, keeping line numbers and indentation.
"""

from __future__ import annotations

import fnmatch
import json
import os
from pathlib import Path

SKIP_DIRS = frozenset({".git", ".hg", ".svn", ".venv", "venv", "env", "node_modules", "__pycache__",
                       "site-packages", ".tox", ".nox", ".mypy_cache", ".pytest_cache", ".ipynb_checkpoints"})
SUFFIXES = (".py", ".ipynb")
MAX_BYTES = 5_000_000  # a generated 5 MB module is not a training script; reported, not parsed


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


def discover(paths: list[str], exclude: tuple[str, ...] = ()) -> list[str]:
    """Python files and notebooks under `paths`, sorted; a missing path raises FileNotFoundError."""
    found: set[str] = set()
    for given in paths:
        if os.path.isfile(given):
            found.add(os.path.normpath(given))
            continue
        if not os.path.isdir(given):
            raise FileNotFoundError(given)
        for folder, dirs, files in os.walk(given):
            dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith(".")
                             and not _excluded(os.path.join(folder, d), exclude))
            for name in files:
                path = os.path.normpath(os.path.join(folder, name))
                if name.endswith(SUFFIXES) and not _excluded(path, exclude):
                    found.add(path)
    return sorted(found)


def _excluded(path: str, patterns: tuple[str, ...]) -> bool:
    posix = Path(path).as_posix()
    return any(fnmatch.fnmatch(posix, p) or fnmatch.fnmatch(os.path.basename(path), p) for p in patterns)


def read(path: str) -> Unit:
    """The file as a Unit; raises SourceError saying what is wrong with it."""
    try:
        size = os.path.getsize(path)
        if size > MAX_BYTES:
            raise SourceError(f"{size} bytes, over the {MAX_BYTES}-byte limit for one file")
        with open(path, "rb") as handle:
            raw = handle.read()
    except OSError as exc:
        raise SourceError(f"cannot read: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SourceError(f"not UTF-8 (byte {exc.start})") from None
    if path.endswith(".ipynb"):
        return _notebook(path, text)
    return Unit(path, text)


def _notebook(path: str, text: str) -> Unit:
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SourceError(f"not a notebook: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from None
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
        cell_lines = source.split("\n")
        magic_cell = cell_lines[0].lstrip().startswith("%%")
        for line in cell_lines:
            stripped = line.lstrip()
            magic = magic_cell or stripped.startswith(("%", "!", "?"))
            lines.append(line[: len(line) - len(stripped)] + "pass" if magic and stripped else line)
    return Unit(path, "\n".join(lines) + "\n", tuple(starts))
