"""A lenient second parse for files in Python 2 (or pre-3.7) syntax: research code is often older than the
Python that scans it, and a file that `ast.parse` refuses has none of its sites read.

`parse` is `ast.parse` first; only when that raises a SyntaxError does it rewrite the old constructs, token by
token (the standard library's tokenize, so strings and comments are never touched), and parse the result:

- `print x, y` / `print >>f, x` / bare `print` statements become calls (`print(x, y)`, `print(  f, x)`);
- `exec code [in ns]` becomes `exec(code [,  ns])`;
- `except E, e:` becomes `except E as e:`; `raise E, msg` becomes `raise E( msg)`;
- backticks become parentheses, `<>` becomes `!=`;
- `async` / `await` used as names (`.cuda(async=True)`, a keyword since Python 3.7) become `async_` / `await_`;
- octal `0777` becomes `0o777`, the long suffix of `10L` is dropped, `ur'...'` becomes `r'...'`.

Every line keeps its number, and the tree's columns are mapped back to the original text (most rewrites keep
the length anyway), so a finding points where the file's reader looks and the passes that read `text` beside
the tree (source segments, regular expressions) see the same places. When the rewritten text still does not
parse, the original SyntaxError is raised: the scan reports the file as before.
"""

from __future__ import annotations

import ast
import io
import tokenize
from typing import NamedTuple

from kb.scan.nodes import iwalk

_STATEMENT_ENDS = frozenset({tokenize.NEWLINE, tokenize.ENDMARKER})
_SKIPPED = frozenset({tokenize.NL, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT})
_NOT_PRINTED = frozenset({"(", "=", ".", ")", ",", ":", "]", "}", "+=", "-=", "*=", "/=", "%=", "|=", "&=", "^=",
                          "<<=", ">>=", "**=", "//=", "@=", "==", "!="})
_LONG = frozenset({"l", "L"})
_RAW_UNICODE = frozenset({"ur", "uR", "Ur", "UR"})
_ASYNC_KEYWORD_NEXT = frozenset({"def", "for", "with"})


class _Edit(NamedTuple):
    row: int  # 1-based line
    start: int  # character columns in the original line
    end: int
    text: str


def parse(text: str, filename: str = "<unknown>") -> ast.Module:
    """`ast.parse(text)`, or, when that fails with a SyntaxError, the tree of the text with its Python 2
    constructs rewritten (positions those of `text`); raises the first SyntaxError when that fails too."""
    try:
        return ast.parse(text, filename=filename)
    except SyntaxError as first:
        tree = _lenient(text, filename)
        if tree is None:
            raise first
        return tree


def _lenient(text: str, filename: str) -> ast.Module | None:
    """The tree of the rewritten text with its columns mapped back, or None when it cannot be had."""
    try:
        edits = _edits(text)
    except (tokenize.TokenError, SyntaxError, ValueError):  # IndentationError is a SyntaxError
        return None
    if not edits:
        return None
    lines = io.StringIO(text).readlines()  # the lines tokenize read: split at "\n" only
    shifts: dict[int, list[tuple[int, int, int, int]]] = {}  # row -> (new start, new end, old start, old end), bytes
    by_row: dict[int, list[_Edit]] = {}
    for edit in edits:
        by_row.setdefault(edit.row, []).append(edit)
    for row, row_edits in by_row.items():
        if row > len(lines):
            return None
        line = lines[row - 1]
        out: list[str] = []
        spans: list[tuple[int, int, int, int]] = []
        at = 0
        new_bytes = 0
        for edit in sorted(row_edits, key=lambda e: (e.start, e.end)):
            if edit.start < at:
                return None  # overlapping rewrites: not a construct this module knows
            kept = line[at:edit.start]
            out.append(kept)
            new_bytes += len(kept.encode("utf-8"))
            old_start = len(line[:edit.start].encode("utf-8"))
            old_end = len(line[:edit.end].encode("utf-8"))
            spans.append((new_bytes, new_bytes + len(edit.text.encode("utf-8")), old_start, old_end))
            out.append(edit.text)
            new_bytes += len(edit.text.encode("utf-8"))
            at = edit.end
        out.append(line[at:])
        lines[row - 1] = "".join(out)
        shifts[row] = spans
    try:
        tree = ast.parse("".join(lines), filename=filename)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    _map_back(tree, shifts)
    return tree


def _old_column(spans: list[tuple[int, int, int, int]], column: int) -> int:
    """The byte column in the original line of `column` in the rewritten one."""
    for new_start, new_end, old_start, old_end in reversed(spans):
        if column >= new_end:
            return column - new_end + old_end
        if column >= new_start:
            return min(old_start + (column - new_start), old_end)
    return column


def _map_back(tree: ast.Module, shifts: dict[int, list[tuple[int, int, int, int]]]) -> None:
    """Move the columns of the nodes on rewritten lines to where they are in the original text."""
    for node in iwalk(tree):
        row = getattr(node, "lineno", None)
        column = getattr(node, "col_offset", None)
        if row in shifts and column is not None:
            node.col_offset = _old_column(shifts[row], column)  # type: ignore[attr-defined]
        end_row = getattr(node, "end_lineno", None)
        if end_row in shifts and getattr(node, "end_col_offset", None) is not None:
            node.end_col_offset = _old_column(shifts[end_row], node.end_col_offset)  # type: ignore[attr-defined]


def _edits(text: str) -> list[_Edit]:
    """The rewrites of the old constructs, found on the tokens of `text`."""
    tokens = [t for t in tokenize.generate_tokens(io.StringIO(text).readline)
              if t.type not in _SKIPPED and not (t.type == tokenize.ERRORTOKEN and t.string.isspace())]
    edits: list[_Edit] = []
    backtick_open = False
    depth = 0
    start = True  # the next token starts a statement
    for i, tok in enumerate(tokens):
        before = tokens[i - 1] if i else None
        after = tokens[i + 1] if i + 1 < len(tokens) else None
        if start and tok.type == tokenize.NAME and after is not None:
            _statement(tokens, i, edits)
        start = False
        if tok.type == tokenize.OP:
            if tok.string in "([{":
                depth += 1
            elif tok.string in ")]}":
                depth = max(depth - 1, 0)
            elif depth == 0 and tok.string in (";", ":") and not _lambda_colon(tokens, i):
                start = True
            if tok.string == "<" and _adjacent(tok, after) and after is not None and after.string == ">":
                edits.append(_Edit(tok.start[0], tok.start[1], after.end[1], "!="))
        elif tok.type in _STATEMENT_ENDS:
            start, depth = True, 0
        elif tok.type == tokenize.ERRORTOKEN and tok.string == "`":
            edits.append(_Edit(tok.start[0], tok.start[1], tok.end[1], ")" if backtick_open else "("))
            backtick_open = not backtick_open
        elif tok.type == tokenize.NUMBER and after is not None and _adjacent(tok, after):
            if tok.string == "0" and after.type == tokenize.NUMBER and after.string.isdigit():
                edits.append(_Edit(tok.start[0], tok.end[1], tok.end[1], "o"))
            elif after.type == tokenize.NAME and after.string in _LONG:
                edits.append(_Edit(after.start[0], after.start[1], after.end[1], ""))
        elif tok.type == tokenize.NAME:
            if tok.string in _RAW_UNICODE and after is not None and after.type == tokenize.STRING \
                    and _adjacent(tok, after):
                edits.append(_Edit(tok.start[0], tok.start[1], tok.end[1], "r"))
            elif tok.string == "async" and (after is None or after.string not in _ASYNC_KEYWORD_NEXT):
                edits.append(_Edit(tok.start[0], tok.end[1], tok.end[1], "_"))
            elif tok.string == "await" and _named_await(before, after):
                edits.append(_Edit(tok.start[0], tok.end[1], tok.end[1], "_"))
    return edits


def _adjacent(tok: tokenize.TokenInfo, after: tokenize.TokenInfo | None) -> bool:
    """Whether `after` starts where `tok` ends (one old token that tokenize split in two)."""
    return after is not None and after.start == tok.end


def _named_await(before: tokenize.TokenInfo | None, after: tokenize.TokenInfo | None) -> bool:
    """Whether `await` is a name (an attribute, keyword argument, parameter or assigned name), not the keyword."""
    if before is not None and before.string in (".", "def", "class", "import", "as"):
        return True
    return after is None or after.string in ("=", ",", ")", ".", ":", "]")


def _lambda_colon(tokens: list[tokenize.TokenInfo], i: int) -> bool:
    """Whether the `:` at `i` ends a lambda's parameters, a slice or an annotation rather than a clause header:
    it does unless the statement began with a compound keyword (then the rest of the line is a new statement)."""
    if tokens[i].string != ":":
        return False
    j = i
    while j > 0 and tokens[j - 1].type not in _STATEMENT_ENDS and tokens[j - 1].string != ";":
        j -= 1
    first = tokens[j].string
    if first not in ("if", "elif", "else", "while", "for", "try", "except", "finally", "with", "def", "class"):
        return True
    return any(t.string == "lambda" for t in tokens[j:i]) and first not in ("else", "try", "finally")


def _statement(tokens: list[tokenize.TokenInfo], i: int, edits: list[_Edit]) -> None:
    """The rewrites of a statement that starts at token `i` with a Python 2 keyword statement."""
    tok, after = tokens[i], tokens[i + 1]
    word = tok.string
    if word in ("print", "exec"):
        if after.string in _NOT_PRINTED or after.type == tokenize.OP and after.string.endswith("=") \
                and after.string not in ("<=", ">="):
            return
        end = _statement_end(tokens, i)
        if end == i:  # bare `print`
            edits.append(_Edit(tok.start[0], tok.end[1], tok.end[1], "()"))
            return
        if after.start[0] == tok.start[0] and after.start[1] > tok.end[1]:
            edits.append(_Edit(tok.start[0], tok.end[1], tok.end[1] + 1, "("))
        else:
            edits.append(_Edit(tok.start[0], tok.end[1], tok.end[1], "("))
        if word == "print" and after.string == ">>":
            edits.append(_Edit(after.start[0], after.start[1], after.end[1], "  "))
        if word == "exec":
            inside = _top_level(tokens, i + 1, end, "in")
            if inside is not None:
                edits.append(_Edit(inside.start[0], inside.start[1], inside.end[1], ", "))
        last = tokens[end]
        edits.append(_Edit(last.end[0], last.end[1], last.end[1], ")"))
    elif word == "except":
        end = _statement_end(tokens, i, colon=True)
        comma = _top_level(tokens, i + 1, end, ",")
        if comma is not None:
            edits.append(_Edit(comma.start[0], comma.start[1], comma.end[1], " as"))
    elif word == "raise":
        end = _statement_end(tokens, i)
        comma = _top_level(tokens, i + 1, end, ",")
        if comma is not None:
            edits.append(_Edit(comma.start[0], comma.start[1], comma.end[1], "("))
            last = tokens[end]
            edits.append(_Edit(last.end[0], last.end[1], last.end[1], ")"))


def _statement_end(tokens: list[tokenize.TokenInfo], i: int, colon: bool = False) -> int:
    """The index of the last token of the simple statement starting at `i` (before a NEWLINE or a top-level `;`,
    or, with `colon`, before the clause header's top-level `:`)."""
    depth = 0
    j = i
    while j + 1 < len(tokens):
        nxt = tokens[j + 1]
        if nxt.type in _STATEMENT_ENDS:
            break
        if nxt.type == tokenize.OP:
            if nxt.string in "([{":
                depth += 1
            elif nxt.string in ")]}":
                depth -= 1
            elif depth == 0 and (nxt.string == ";" or colon and nxt.string == ":"):
                break
        j += 1
    return j


def _top_level(tokens: list[tokenize.TokenInfo], first: int, last: int, word: str) -> tokenize.TokenInfo | None:
    """The first token `word` outside brackets among tokens[first..last]."""
    depth = 0
    for tok in tokens[first:last + 1]:
        if tok.type == tokenize.OP and tok.string in "([{":
            depth += 1
        elif tok.type == tokenize.OP and tok.string in ")]}":
            depth -= 1
        elif depth == 0 and tok.string == word:
            return tok
    return None
