"""Which binding of a name reaches a use of it, in a function's straight-line body.

The gradient flow (kb/scan/gradient.py) reads every binding of a name in a function, in any order: one
later binding that may carry a gradient (`positions = positions + lengths[:, None]`) spoils an earlier use
of the integer `positions = torch.arange(n)`. Where the use stands in a statement of the function's own
body (not inside a loop or branch that rebinds the name) and the last statement before it that binds the
name is a plain `name = value`, that value is the only one the use can see. Anything else (a binding in a
branch, loop, `with` or `try`, a tuple target, `global`/`nonlocal`): None, and every binding counts.
"""

from __future__ import annotations

import ast

Function = ast.FunctionDef | ast.AsyncFunctionDef


def _stored(stmt: ast.stmt) -> set[str]:
    """The names a statement binds anywhere in it (assignments, loop and `with` targets, walrus, imports,
    nested definitions, `del`), and the names it declares `global` or `nonlocal` ('*' marks those)."""
    out: set[str] = set()
    for sub in ast.walk(stmt):
        if isinstance(sub, ast.Name) and isinstance(sub.ctx, (ast.Store, ast.Del)):
            out.add(sub.id)
        elif isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(sub.name)
        elif isinstance(sub, (ast.Import, ast.ImportFrom)):
            out.update((a.asname or a.name).split(".")[0] for a in sub.names)
        elif isinstance(sub, (ast.Global, ast.Nonlocal)):
            out.update(sub.names)
            out.add("*" + ",".join(sub.names))
    return out


def _table(memo: dict[int, list[tuple[ast.stmt, set[str]]]], fn: Function) -> list[tuple[ast.stmt, set[str]]]:
    found = memo.get(id(fn))
    if found is None:
        found = memo[id(fn)] = [(stmt, _stored(stmt)) for stmt in fn.body]
    return found


def reaching_value(memo: dict[int, list[tuple[ast.stmt, set[str]]]], fn: ast.AST, use: ast.Name) -> ast.expr | None:
    """The value of the one plain `name = value` of `fn`'s body that reaches `use` (module docstring), or None."""
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or not isinstance(use.ctx, ast.Load):
        return None
    table = _table(memo, fn)
    line, name = use.lineno, use.id
    at = next((k for k, (stmt, _) in enumerate(table)
               if stmt.lineno <= line <= (stmt.end_lineno or stmt.lineno) and any(n is use for n in ast.walk(stmt))), None)
    if at is None:
        return None
    stmt, stored = table[at]
    if name in stored:
        # only `name = f(name)` itself: its value is read before the name is bound again
        if not (isinstance(stmt, ast.Assign) and any(n is use for n in ast.walk(stmt.value))
                and _stored(ast.Expr(stmt.value)).isdisjoint({name})):
            return None
    for before, names in reversed(table[:at]):
        if name not in names:
            continue
        if isinstance(before, ast.Assign) and len(before.targets) == 1 and isinstance(before.targets[0], ast.Name) \
                and before.targets[0].id == name and name not in _stored(ast.Expr(before.value)):
            return before.value
        if isinstance(before, ast.AnnAssign) and before.value is not None and isinstance(before.target, ast.Name) \
                and before.target.id == name and name not in _stored(ast.Expr(before.value)):
            return before.value
        return None
    return None
