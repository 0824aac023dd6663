"""A lint finding: what every check reports, and how it prints."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from kb.untrusted import shown


def text_path(path: str) -> str:
    """A path as text that can be printed and written as JSON: the bytes of a name that is
    not UTF-8 (os.fsdecode's surrogates) become \\xNN."""
    try:
        path.encode("utf-8")
        return path
    except UnicodeEncodeError:
        return os.fsencode(path).decode("utf-8", "backslashreplace")


@dataclass(frozen=True, order=True)
class Finding:
    path: str
    line: int
    code: str
    message: str
    hint: str = ""

    def render(self) -> str:
        """One line (two with the hint): a file name or message with a newline or an escape
        sequence (a pull request chooses both) is escaped, never printed as itself."""
        text = f"{shown(self.path)}:{self.line}: {self.code} {shown(self.message)}"
        return f"{text}\n    hint: {shown(self.hint)}" if self.hint else text

    def to_dict(self) -> dict[str, object]:
        return {"path": self.path, "line": self.line, "code": self.code, "message": self.message, "hint": self.hint}


def rel(path: Path, root: Path) -> str:
    """Paths in messages are relative to the project root, so they read the same anywhere.

    The path as found comes first: a symlink is named where it lies, not where it points
    (KB012 refuses one that points out of data/, and must say which file that is).
    """
    for resolve in (False, True):  # resolving (a system call per folder) only where needed
        p, r = (path.resolve(), root.resolve()) if resolve else (Path(os.path.abspath(path)), Path(os.path.abspath(root)))
        try:
            return text_path(p.relative_to(r).as_posix())
        except ValueError:
            continue
    return text_path(path.as_posix())
