"""A lint finding: what every check reports, and how it prints."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, order=True)
class Finding:
    path: str
    line: int
    code: str
    message: str
    hint: str = ""

    def render(self) -> str:
        text = f"{self.path}:{self.line}: {self.code} {self.message}"
        return f"{text}\n    hint: {self.hint}" if self.hint else text

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
            return p.relative_to(r).as_posix()
        except ValueError:
            continue
    return path.as_posix()
