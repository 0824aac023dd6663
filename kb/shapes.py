"""One validator for machine-written files read back from untrusted places (run files from
other machines under data/runs/, the link state that GitHub's answers fill).

Why not Pydantic: these files are read by `kb build` and `kb validate` next to records, and
every problem must come out as a coded finding with the field's location (a wrong-typed
field anywhere must never be a traceback in the merge that reads it later). A shape is a
small declarative value; `problems()` walks the data against it and returns every mismatch
as (location, message). Standard library only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

Loc = tuple  # tuple[str | int, ...]


@dataclass(frozen=True)
class Text:
    pattern: str | None = None
    choices: tuple[str, ...] = ()
    optional: bool = False
    what: str = "text"


@dataclass(frozen=True)
class Number:
    integer: bool = False
    optional: bool = False
    minimum: float | None = None


@dataclass(frozen=True)
class Flag:
    optional: bool = False


@dataclass(frozen=True)
class Seq:
    item: Any
    optional: bool = False


@dataclass(frozen=True)
class Map:
    fields: dict[str, Any] = field(default_factory=dict)
    required: tuple[str, ...] = ()
    values: Any = None          # the shape of every other value (None: anything)
    optional: bool = False


ANY = None


def _name(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _where(loc: Loc) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "the file"


def problems(data: Any, shape: Any, loc: Loc = ()) -> list[tuple[Loc, str]]:
    """Every place where `data` does not have `shape`, as (location, message); [] when it does."""
    out: list[tuple[Loc, str]] = []
    stack = [(data, shape, loc)]
    while stack:  # explicit stack: a deep document costs no recursion
        value, spec, at = stack.pop()
        if spec is ANY:
            continue
        if value is None and getattr(spec, "optional", False):
            continue
        if isinstance(spec, Text):
            if not isinstance(value, str):
                out.append((at, f"{_where(at)}: expected {spec.what}, got {_name(value)}"))
            elif spec.choices and value not in spec.choices:
                out.append((at, f"{_where(at)}: expected one of {', '.join(spec.choices)}, got {value[:40]!r}"))
            elif spec.pattern and not re.fullmatch(spec.pattern, value):
                out.append((at, f"{_where(at)}: expected {spec.what}, got {value[:40]!r}"))
        elif isinstance(spec, Number):
            kinds = (int,) if spec.integer else (int, float)
            if isinstance(value, bool) or not isinstance(value, kinds):
                out.append((at, f"{_where(at)}: expected {'an integer' if spec.integer else 'a number'}, got {_name(value)}"))
            elif spec.minimum is not None and not value >= spec.minimum:
                out.append((at, f"{_where(at)}: expected at least {spec.minimum:g}, got {value!r}"))
        elif isinstance(spec, Flag):
            if not isinstance(value, bool):
                out.append((at, f"{_where(at)}: expected true or false, got {_name(value)}"))
        elif isinstance(spec, Seq):
            if not isinstance(value, list):
                out.append((at, f"{_where(at)}: expected a list, got {_name(value)}"))
                continue
            stack.extend((item, spec.item, at + (i,)) for i, item in reversed(list(enumerate(value))))
        elif isinstance(spec, Map):
            if not isinstance(value, dict):
                out.append((at, f"{_where(at)}: expected a mapping, got {_name(value)}"))
                continue
            missing = [k for k in spec.required if k not in value]
            if missing:
                out.append((at, f"{_where(at)}: missing {', '.join(missing)}"))
            for key, item in reversed(list(value.items())):
                sub = spec.fields.get(key, spec.values) if isinstance(key, str) else spec.values
                stack.append((item, sub, at + (key,)))
    return out
