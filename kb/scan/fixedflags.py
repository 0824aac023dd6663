"""Blocks that a module-level flag set once never lets run: `use_compile = False` at the top of a training
script, then `if use_compile: model = torch.compile(model)` (karpathy/build-nanogpt); `max_pooling = True` in a
notebook cell, then the `else:` of `if max_pooling:`.

A name counts as such a flag when the module binds it exactly once, at its top level, to a scalar literal, and
nothing else in the module can change it: no other binding (assignment, loop or `with` target, parameter,
import, `global`, `del`) of that name anywhere in the file, no star import, and none of the ways a module's
globals are rewritten at run time (`exec(...)`, as nanoGPT's configurator does, `globals()`, `vars()`,
`locals()`, `sys.modules`). A test of the flag at the module's top level runs at import, when it
still holds the literal; a test inside a function counts only in a script (a file with a `__main__` block) or
a notebook, which nothing imports to set the flag from outside.

The tests read: the flag itself, `not` of it, a comparison of it with a literal (`==`, `!=`, `is`, `is not`),
and `and` / `or` of those where an operand decides alone or every operand is known. The blocks found are
kb/scan/syntax.py's `never_taken` triples, so their calls are notes that say why, and a name used only there
is no use of it (kb/scan/unreached.py).
"""

from __future__ import annotations

import ast
import re

from kb.scan.nodes import BLOCK_FIELDS, iwalk, statements
from kb.scan.syntax import NOT_LITERAL, plain_literal

# ways a module's globals are rewritten at run time: no flag of such a module is fixed
_REWRITES = ("exec(", "globals()", "vars()", "locals()", "sys.modules", "import *")
# the rest of each line after `if ` or `while ` (a superset of the tests' lines: a literal prefix re finds fast)
_TEST_LINES = (re.compile(r"if[ (]([^\n]*)"), re.compile(r"while[ (]([^\n]*)"))
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_MAIN = re.compile(r"""^if\s+__name__\s*==\s*['"]__main__['"]\s*:""", re.M)


def never_taken(tree: ast.Module, text: str, notebook: bool = False) -> tuple[tuple[int, int, str], ...]:
    """(first line, last line, why) of each block that a fixed flag's test never takes (module docstring)."""
    candidates = {stmt.targets[0].id for stmt in tree.body if type(stmt) is ast.Assign and len(stmt.targets) == 1
                  and type(stmt.targets[0]) is ast.Name and type(stmt.value) is ast.Constant}
    if candidates:  # only names an `if` or `while` line reads: most module-level constants are read elsewhere
        candidates &= {w for pattern in _TEST_LINES for line in pattern.findall(text) for w in _WORD.findall(line)}
    if not candidates or any(word in text for word in _REWRITES):
        return ()
    inside_functions = notebook or bool(_MAIN.search(text))
    if not inside_functions:  # a library module: only its top-level tests count, read before any walk of the tree
        candidates &= {n.id for s in _top_level(tree.body) if isinstance(s, (ast.If, ast.While))
                       for n in iwalk(s.test) if isinstance(n, ast.Name)}
    flags = _flags(tree, candidates, text.split("\n")) if candidates else {}
    if not flags:
        return ()
    every = statements(tree)
    inside = {id(s) for fn in every if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))
              for s in statements(fn)[1:]}
    out: list[tuple[int, int, str]] = []
    for owner in every:
        for field in BLOCK_FIELDS:
            block = getattr(owner, field, None)
            if not isinstance(block, list):
                continue
            for k, stmt in enumerate(block):
                if isinstance(stmt, (ast.If, ast.While)) and (inside_functions or id(stmt) not in inside):
                    out.extend(_dead(stmt, flags, block[k + 1:]))
    return tuple(out)


def _dead(stmt: ast.If | ast.While, flags: dict[str, tuple[object, int]],
          after: list[ast.stmt]) -> list[tuple[int, int, str]]:
    """The blocks of one test that the flags rule out: the branch not taken, and, where the branch taken ends in
    `return` or `raise` (`if not use_compile: return m`), the statements after the `if` in its block."""
    found = _truth(stmt.test, flags)
    if found is None:
        return []
    truth, why = found
    head = f"{'if' if isinstance(stmt, ast.If) else 'while'} {ast.unparse(stmt.test)}"
    out = []
    if not truth and stmt.body:
        out.append((stmt.body[0].lineno, stmt.body[-1].end_lineno or stmt.body[-1].lineno,
                    f"it is inside `{head}:` (line {stmt.lineno}), whose body never runs: {why}"))
    elif truth and stmt.orelse and isinstance(stmt, ast.If):
        out.append((stmt.orelse[0].lineno, stmt.orelse[-1].end_lineno or stmt.orelse[-1].lineno,
                    f"it is inside the `else:` of `{head}:` (line {stmt.lineno}), which never runs: {why}"))
    taken = stmt.body if truth else stmt.orelse
    if isinstance(stmt, ast.If) and after and taken and isinstance(taken[-1], (ast.Return, ast.Raise)):
        first = min([after[0].lineno, *(d.lineno for d in getattr(after[0], "decorator_list", ()))])
        exit_ = "returns" if isinstance(taken[-1], ast.Return) else "raises"
        out.append((first, after[-1].end_lineno or after[-1].lineno,
                    f"the code after `{head}:` (line {stmt.lineno}) never runs: that branch always {exit_}: {why}"))
    return out


def _top_level(body: list[ast.stmt]) -> list[ast.stmt]:
    """The statements that run at import: the body and its blocks, not those of the functions and classes in it."""
    out: list[ast.stmt] = []
    pending: list[ast.AST] = list(body)
    while pending:
        stmt = pending.pop()
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if isinstance(stmt, ast.stmt):
            out.append(stmt)
        for field in BLOCK_FIELDS:
            inner = getattr(stmt, field, None)
            if isinstance(inner, list):
                pending.extend(inner)
    return out


def _flags(tree: ast.Module, candidates: set[str], lines: list[str]) -> dict[str, tuple[object, int]]:
    """Flag name -> (its literal value, the line that sets it), for the candidates bound only once, at the top level,
    whose comments invite no change (_invited)."""
    top: dict[str, tuple[object, int]] = {}
    for stmt in tree.body:
        if not isinstance(stmt, (ast.Assign, ast.AnnAssign)) or stmt.value is None:
            continue
        target = stmt.targets[0] if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 else \
            stmt.target if isinstance(stmt, ast.AnnAssign) else None
        if isinstance(target, ast.Name) and target.id in candidates:
            value = plain_literal(stmt.value)
            if value is not NOT_LITERAL and target.id not in top and not _invited(lines, stmt):
                top[target.id] = (value, stmt.lineno)
            else:
                candidates.discard(target.id)  # bound twice at the top, or to something else
    bindings: dict[str, int] = {}
    for node in iwalk(tree):
        names: tuple[str, ...] = ()
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names = (node.id,)
        elif isinstance(node, ast.arg):
            names = (node.arg,)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            names = tuple(node.names) * 2  # a declaration: counts as a second binding
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names = tuple((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names = (node.name,)
        for name in names:
            if name in top:
                bindings[name] = bindings.get(name, 0) + 1
    return {name: held for name, held in top.items() if name in candidates and bindings.get(name) == 1}


def _invited(lines: list[str], stmt: ast.stmt) -> bool:
    """The flag's comments invite its reader to change it: the comment on its line or the comment lines just above
    it name the other value or an act of changing (`# Switch it to False to see the non-DP-SGD results`, jax_privacy's
    notebook). A reader is then meant to run the other branch too, and its findings stay."""
    first, last = stmt.lineno - 1, (stmt.end_lineno or stmt.lineno) - 1
    said = [lines[last][stmt.end_col_offset or 0:]] if last < len(lines) else []
    k = first - 1
    while 0 <= k < len(lines) and lines[k].lstrip().startswith("#"):
        said.append(lines[k])
        k -= 1
    return any("#" in part and _INVITATION.search(part.split("#", 1)[1]) for part in said)


_INVITATION = re.compile(r"\b(?:[Ss]witch|[Tt]oggle|[Cc]hange|[Ee]nable|[Dd]isable|[Tt]urn (?:it )?(?:on|off)|[Ff]lip|"
                         r"[Uu]ncomment|[Cc]omment out|[Ss]et (?:it |this )?to|[Tt]ry|True|False|[Oo]ption)\b")


def _truth(test: ast.expr, flags: dict[str, tuple[object, int]]) -> tuple[bool, str] | None:
    """(the test's truth, why) where the flags decide it; None where they do not."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _truth(test.operand, flags)
        return (not inner[0], inner[1]) if inner is not None else None
    if isinstance(test, ast.BoolOp):
        decides = isinstance(test.op, ast.Or)
        parts = [_truth(v, flags) for v in test.values]
        alone = next((p for p in parts if p is not None and p[0] == decides), None)
        if alone is not None:
            return alone
        if any(p is None for p in parts):
            return None
        return not decides, "; ".join(dict.fromkeys(p[1] for p in parts if p is not None))
    subject, op, other = test, None, None
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        subject, op, other = test.left, test.ops[0], plain_literal(test.comparators[0])
        if other is NOT_LITERAL or not isinstance(op, (ast.Eq, ast.NotEq, ast.Is, ast.IsNot)):
            return None
    if not isinstance(subject, ast.Name) or subject.id not in flags:
        return None
    value, line = flags[subject.id]
    why = f"`{subject.id}` is set to {value!r} at line {line} and nothing in the file changes it"
    if op is None:
        return bool(value), why
    if isinstance(op, (ast.Is, ast.IsNot)):
        if other is not None and not isinstance(other, bool):
            return None
        same = value is other
    elif value is None or other is None or type(value) is type(other):
        same = value == other
    else:
        return None  # `1 == 1.0`, `True == 1`: not read
    return (same if isinstance(op, (ast.Eq, ast.Is)) else not same), why
