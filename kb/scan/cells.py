"""A notebook cell as the Python that IPython runs, one output line per input line.

IPython rewrites a cell before Python parses it: magics (`%time x`, `%%timeit` cells), shell
escapes (`!pip install x`, with `\\` continuation lines), assignments from them (`x = !ls`,
`y = %env`), help (`obj?`) and an indented first line (the whole cell is dedented). When IPython
is importable, its own transformer (`IPython.core.inputtransformer2.TransformerManager`) does
it, so the scan sees what the kernel runs; otherwise `fallback` does the same rewrites. Either
way the result keeps the cell's line count, so a finding's line is the line in the cell: a
construct IPython joins into one line (a continued shell line, a cell magic, whose body is a
string IPython hands to the magic, never code) is followed by blank lines. The magics that run
Python (`%%time`, `%%capture`, `%time stmt`, ... : PYTHON_CELL_MAGICS, PYTHON_LINE_MAGICS) are
the exception, on both paths: IPython's transformer makes their body a string for the magic,
but the kernel runs it, so their body is read as a cell and their statement in its column.
"""

from __future__ import annotations

import re

# `x = !cmd`, `a, b = %magic`: an assignment whose value IPython takes from the shell or a magic
_ASSIGN = re.compile(r"^(\s*)([A-Za-z_][\w.]*(?:\s*,\s*[A-Za-z_][\w.]*)*)\s*=\s*[!%]")
# `torch.index_add?`, `obj.attr??`: IPython's help_end (a name, then ? or ?? ending the line)
_HELP_END = re.compile(r"^%{0,2}(?!\d)[\w*]+(?:\.(?!\d)[\w*]+|\[-?[0-9]+\])*\?\??$")
# Cell magics whose body IPython runs as Python in the notebook's namespace (`%%time` around a
# training cell is common): the body is scanned, the magic line is not code. Other cell magics
# (%%bash, %%writefile, %%javascript, ...) hand their body to something else.
PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun", "profile", "debug"})
# Line magics whose argument is a Python statement, with the options of each that take a value
# (`%timeit -n 10 -r 3 f(x)`): the statement is scanned in place.
PYTHON_LINE_MAGICS = {"time": (), "timeit": ("-n", "-r", "-p"), "prun": ("-D", "-l", "-s", "-T"),
                      "debug": ("-b", "--breakpoint")}
_LINE_MAGIC = re.compile(r"^(\s*)%(" + "|".join(PYTHON_LINE_MAGICS) + r")(?=\s|$)(.*)$")
_COMPOUND = re.compile(r"(?:for|while|if|with|try|def|class|async)\b")


def _dedent(lines: list[str]) -> list[str]:
    """IPython's leading_indent: when the first line is indented, that indentation is removed
    from every line that starts with it."""
    first = next((ln for ln in lines if ln.strip()), "")
    prefix = first[: len(first) - len(first.lstrip())]
    if not prefix:
        return lines
    return [ln[len(prefix):] if ln.startswith(prefix) else ln.lstrip() for ln in lines]


def fallback(source: str) -> str:
    """The rewrites IPython makes, without IPython: a magic or shell line (and its `\\`
    continuation lines) is `pass` at its indentation, an assignment from one assigns None, a
    cell magic's whole cell is one `pass` (its body is the magic's input, not code)."""
    lines = _dedent(source.split("\n"))
    magic = _cell_magic(lines)
    if magic is not None:
        return _with_body(lines, magic, fallback("\n".join(lines[magic + 1:])))
    if lines and lines[0].lstrip().startswith("%%"):
        return "\n".join(["pass"] + [""] * (len(lines) - 1))
    lines = [_line_magic(line) for line in lines]
    out: list[str] = []
    continued = False
    for line in lines:
        if continued:  # a continuation of a shell or magic line: part of that one command
            out.append("")
            continued = line.rstrip().endswith("\\")
            continue
        stripped = line.lstrip()
        indent = line[: len(line) - len(stripped)]
        assign = _ASSIGN.match(line)
        if assign:
            out.append(f"{assign.group(1)}{assign.group(2)} = None")
        elif stripped.startswith(("%", "!", "?")) or _HELP_END.match(stripped):
            out.append(indent + "pass")
        else:
            out.append(line)
            continue
        continued = line.rstrip().endswith("\\")
    return "\n".join(out)


def _ipython():
    try:
        from IPython.core.inputtransformer2 import TransformerManager
    except Exception:  # noqa: BLE001 - any failure to import IPython means: not available
        return None
    return TransformerManager()


_MANAGER: list = []


def manager():
    """IPython's transformer, or None when IPython is not importable (memoized)."""
    if not _MANAGER:
        _MANAGER.append(_ipython())
    return _MANAGER[0]


def ipython(source: str, transformer) -> str | None:
    """The cell through IPython's transformer, padded back to the cell's line count; None when
    IPython fails on it or the lines cannot be matched up (the caller then uses `fallback`)."""
    lines = source.split("\n")
    magic = _cell_magic(lines)
    if magic is not None:  # IPython makes the body a string for the magic; it runs as Python
        body = ipython("\n".join(lines[magic + 1:]), transformer)
        return None if body is None else _with_body(lines, magic, body)
    if "%" in source:
        source = "\n".join(_line_magic(line) for line in lines)
    try:
        text = transformer.transform_cell(source)
    except Exception:  # noqa: BLE001 - IPython raising on a cell is the caller's cue to fall back
        return None
    lines = source.split("\n")
    got = text.rstrip("\n").split("\n") if text.strip() else []
    if lines and lines[0].lstrip().startswith("%%"):  # one run_cell_magic call for the whole cell
        return "\n".join(got[:1] + [""] * (len(lines) - 1)) if len(got) == 1 else None
    out: list[str] = []
    position = 0
    index = 0
    while index < len(lines):
        if position >= len(got):
            out.extend([""] * (len(lines) - index))  # trailing blank lines IPython dropped
            break
        out.append(got[position])
        position += 1
        joined = 0
        stripped = lines[index].lstrip()
        if stripped.startswith(("%", "!")) or _ASSIGN.match(lines[index]):
            while index + joined < len(lines) - 1 and lines[index + joined].rstrip().endswith("\\"):
                joined += 1
        out.extend([""] * joined)
        index += 1 + joined
    if position != len(got):
        return None
    return "\n".join(out)


def _cell_magic(lines: list[str]) -> int | None:
    """The index of the first line when it opens a cell magic that runs its body as Python."""
    first = next((k for k, line in enumerate(lines) if line.strip()), None)
    if first is None or not lines[first].lstrip().startswith("%%"):
        return None
    name = lines[first].lstrip()[2:].split(None, 1)[0] if lines[first].strip() != "%%" else ""
    return first if name in PYTHON_CELL_MAGICS else None


def _with_body(lines: list[str], magic: int, body: str) -> str:
    """A Python-running cell magic's cell: blank lines before it, `pass` for its line, its body."""
    return "\n".join([""] * magic + ["pass", body])


def _line_magic(line: str) -> str:
    """`%time stmt` / `%timeit -n 10 stmt` as the statement, in its column where it can be:
    `pass;` and spaces fill the magic's place (the shortest, `%time `, is as long as `pass; `);
    a compound statement (`%time for ...: ...`) cannot follow `;` and moves to the indent."""
    match = _LINE_MAGIC.match(line)
    if match is None:
        return line
    indent, name, rest = match.groups()
    takes_value = PYTHON_LINE_MAGICS[name]
    words = rest.split(" ")
    position, skip = len(indent) + 1 + len(name), False
    for word in words:
        if skip or word == "" or word.startswith("-"):
            skip = not skip and word in takes_value
            position += len(word) + 1
            continue
        break
    statement = line[position:] if position < len(line) else ""
    if not statement.strip():
        return indent + "pass"
    if _COMPOUND.match(statement):
        return indent + statement
    return indent + "pass;" + " " * (position - len(indent) - 5) + statement


def python_of(source: str) -> str:
    """The Python text of one code cell, line for line."""
    transformer = manager()
    if transformer is not None:
        done = ipython(source, transformer)
        if done is not None:
            return done
    return fallback(source)
