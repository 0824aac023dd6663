"""Syntax trees the first pass parses that a later pass of the same scan would parse again: the script files'
(the files no installable package holds), whose functions kb/scan/callers.py reads for the values their callers
pass, once per file that holds a recorded call. Which files those are is known before the first pass
(kb/scan/packaging.py reads paths only), so their trees are kept as the first pass makes them, within a bound on
their text (a tree takes some thirty times its text's memory), and handed to the later passes when the text they
read is the one parsed; every other file they parse as before. Never the whole code base's trees."""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable

MAX_TEXT = 4_000_000  # characters of text whose trees are kept at most (NeMo's script files with calls: ~1.5 MB)

_EXPECTED: set[str] = set()
_KEPT: dict[str, tuple[str, ast.Module]] = {}
_LEFT = [0]


def expect(paths: Iterable[str]) -> None:
    """The files whose trees the first pass keeps (none until this is called again; forget drops them)."""
    _KEPT.clear()
    _EXPECTED.clear()
    _EXPECTED.update(paths)
    _LEFT[0] = MAX_TEXT


def keep(path: str, text: str, tree: ast.Module) -> None:
    """Keep the tree of an expected file, parsed from `text` (the analysis calls this for a file with calls)."""
    if path in _EXPECTED and len(text) <= _LEFT[0]:
        _KEPT[path] = (text, tree)
        _LEFT[0] -= len(text)


def take(text_of: Callable[[str], str | None]) -> dict[str, ast.Module | None]:
    """The kept trees whose file's text is still `text_of(path)` (the same text makes the same tree), by path;
    nothing is kept after this."""
    out: dict[str, ast.Module | None] = {path: tree for path, (text, tree) in _KEPT.items() if text_of(path) == text}
    forget()
    return out


def forget() -> None:
    """Keep nothing more: the trees are one scan's, and a worker process's are never taken."""
    _KEPT.clear()
    _EXPECTED.clear()
    _LEFT[0] = 0
