"""Reading JSON that came from outside (run files, GitHub API responses, probe logs) within bounds.

`json.loads` recurses once per nesting level in C and Python code (a file of 100,000 '['
raises RecursionError, or worse), and accepts any size, any string length and any number
of values. Here the text is first scanned once, without recursion, for its size, nesting
depth, number of values and longest string; only text within every bound is handed to
`json.loads`. Duplicate keys are refused (the json module keeps the last one silently: a
lost fact). Every problem is a JsonError with the line, never a traceback.

Tools import this module; `import kb` and the query path never do (they stay free of json).

    from kb import jsonio
    data = jsonio.load(path)                              # a file (size checked before reading)
    data = jsonio.loads(response.text, where="GitHub /repos/pytorch/pytorch/issues/1")
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kb import untrusted


@dataclass(frozen=True)
class Limits:
    """What one JSON text may cost. The defaults, and why, are in docs/records.md.

    GitHub caps an issue or comment body at 65,536 characters; written as JSON escapes
    (\\uXXXX pairs) that is under 1 MiB, hence `max_string`. A page of 100 issues is a few
    MB and ~20,000 values; run files and probe logs are far smaller.
    """

    max_bytes: int = 8 * 1024 * 1024  # 8 MiB
    max_depth: int = 64  # GitHub responses nest ~6 levels, run files 5
    max_nodes: int = 500_000  # values, keys, objects and arrays
    max_string: int = 1024 * 1024  # characters of one string as written, quotes and escapes included


LIMITS = Limits()


class JsonError(ValueError):
    """JSON that is invalid or over a bound: `message`, 1-based `line`, `hint`, `where`.

    `str(error)` reads "<where>:<line>: <message>". `code` is "KB012" when a bound was hit
    (the project's code for bounds on untrusted input), "" for invalid JSON.
    """

    def __init__(self, message: str, line: int, hint: str = "", where: str = "<json>", code: str = "") -> None:
        super().__init__(f"{where}:{line}: {message}")
        self.message = message
        self.line = line
        self.hint = hint
        self.where = where
        self.code = code


# One token per match: a string (unrolled loop: linear, no backtracking; an unterminated
# one runs to the end), an opening or closing bracket, or a bare literal (number, true,
# false, null). Separators and whitespace are skipped. Used for bounds only: json.loads
# still decides what is valid.
_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"?|[\[{]|[\]}]|[^\s\[\]{},:"]+', re.DOTALL)


def _line(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1


def _scan(text: str, where: str, limits: Limits) -> None:
    """Check depth, value count and string length in one pass with no recursion."""
    depth = 0
    nodes = 0
    for match in _TOKEN.finditer(text):
        first = text[match.start()]
        if first in "]}":
            depth -= 1
            continue
        nodes += 1
        if nodes > limits.max_nodes:
            raise JsonError(
                f"more than {limits.max_nodes:,} JSON values",
                _line(text, match.start()),
                "page the request or split the file",
                where,
                "KB012",
            )
        if first in "[{":
            depth += 1
            if depth > limits.max_depth:
                raise JsonError(
                    f"nested deeper than {limits.max_depth} levels",
                    _line(text, match.start()),
                    "nothing the project reads nests this deep: the input is not what it should be",
                    where,
                    "KB012",
                )
        elif first == '"' and match.end() - match.start() > limits.max_string:
            raise JsonError(
                f"a single string of {match.end() - match.start():,} characters (the bound is {limits.max_string:,})",
                _line(text, match.start()),
                "the input is not what it should be; shorten the value or raise the bound for this reader",
                where,
                "KB012",
            )


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _Duplicate(key)
        out[key] = value
    return out


class _Duplicate(Exception):
    def __init__(self, key: str) -> None:
        self.key = key


def _duplicate_line(text: str, key: str) -> int:
    """Line of the first key written twice in one object (a second pass, only on error)."""
    objects: list[set[str] | None] = []
    for match in _TOKEN.finditer(text):
        token = match.group()
        if token in ("{", "["):
            objects.append(set() if token == "{" else None)
        elif token in ("}", "]"):
            if objects:
                objects.pop()
        elif token[0] == '"' and objects and objects[-1] is not None:
            rest = text[match.end():match.end() + 64].lstrip()
            if rest.startswith(":"):
                try:
                    name = json.loads(token)
                except ValueError:
                    continue
                if name in objects[-1] and name == key:
                    return _line(text, match.start())
                objects[-1].add(name)
    return 1


def loads(text: str | bytes, where: str = "<json>", *, limits: Limits = LIMITS) -> Any:
    """Parse JSON text within `limits`; raise JsonError naming `where` and the line."""
    if isinstance(text, (bytes, bytearray)):
        if len(text) > limits.max_bytes:
            too_big = untrusted.too_big(len(text), limits.max_bytes)
            raise JsonError(too_big.message, 1, too_big.hint, where, "KB012")
        data = bytes(text)
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise JsonError(f"not UTF-8 text: {exc.reason}", data.count(b"\n", 0, exc.start) + 1, "JSON is UTF-8", where) from None
    if len(text) > limits.max_bytes:
        too_big = untrusted.too_big(len(text), limits.max_bytes, "characters")
        raise JsonError(too_big.message, 1, too_big.hint, where, "KB012")
    if text.startswith("\ufeff"):
        text = text[1:]
    _scan(text, where, limits)
    try:
        return json.loads(text, object_pairs_hook=_no_duplicates)
    except json.JSONDecodeError as exc:
        raise JsonError(f"invalid JSON: {exc.msg} (column {exc.colno})", exc.lineno, "check brackets, commas and quotes on this line", where) from None
    except _Duplicate as exc:
        line = _duplicate_line(text, exc.key)
        raise JsonError(f"duplicate key {exc.key!r}", line, "JSON readers keep only one of two equal keys: merge them", where) from None
    except (ValueError, RecursionError, MemoryError) as exc:  # e.g. an integer of more than 4,300 digits
        raise JsonError(f"invalid JSON: {exc}", 1, "the input is not what it should be", where) from None


# --- writing ------------------------------------------------------------------------------------

NON_FINITE = {"nan": "nan", "inf": "inf", "-inf": "-inf"}
"""How every JSON file and `--json` output of the project writes a float that is not finite:
the strings "nan", "inf" and "-inf" (Python's own spelling, which float() reads back, and what
the sweep files have always held). json.dumps would write the bare tokens NaN and Infinity,
which are not JSON: JavaScript, Go and Rust parsers refuse the whole document."""


def finite(obj: Any, depth: int = 0) -> Any:
    """`obj` with every non-finite float replaced by its NON_FINITE string (tuples become lists).
    For the project's own outputs, which nest a few levels; deeper than 200 is a ValueError."""
    if isinstance(obj, float):
        return obj if obj - obj == 0.0 else NON_FINITE[str(obj)]
    if depth > 200:
        raise ValueError("nested deeper than 200 levels: not an output of this project")
    if isinstance(obj, dict):
        return {key: finite(value, depth + 1) for key, value in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [finite(value, depth + 1) for value in obj]
    return obj


def dumps(obj: Any, **kwargs: Any) -> str:
    """json.dumps that always writes JSON: non-finite floats as strings (NON_FINITE), and a
    ValueError rather than a NaN token if one got past (allow_nan=False).

    The encoder refuses a non-finite float by itself (allow_nan=False), so most values are
    written in one pass of the C encoder; only a value that holds one is copied by `finite`
    first (the site's JSON API is ~60 MB: a Python walk of it cost seconds)."""
    try:
        return json.dumps(obj, allow_nan=False, **kwargs)
    except ValueError:
        return json.dumps(finite(obj), allow_nan=False, **kwargs)


def load(path: Path | str, *, limits: Limits = LIMITS, within: Path | None = None) -> Any:
    """Read and parse a JSON file: size checked before reading, symlinks out of data/ refused.

    `within` as in kb.untrusted.read_bytes (default: the nearest enclosing data/ folder).
    Errors name the file: JsonError.where is the path as given.
    """
    path = Path(path)
    where = str(path)
    try:
        raw = untrusted.read_bytes(path, limits.max_bytes, within)
    except untrusted.Refused as exc:
        raise JsonError(exc.message, 1, exc.hint, where, "KB012") from None
    except OSError as exc:
        raise JsonError(f"cannot read the file: {exc.strerror}", 1, "check the path", where) from None
    return loads(raw, where, limits=limits)
