"""Following a name to the values it may hold, for the rules that read what a call is given
(kb/scan/datasets.py: the dataset a DataLoader reads).

A name is read through every assignment of the function it is in (in every branch; `a, b = f()` gives
f()'s result at position 1 for b; `items.append(x)` adds x to a list), else the module's, else, for a
parameter of a module-level function, the argument every caller of the file gives it (its default where a
call leaves it out); a value it may take that the code does not show (a loop variable, `+=`, a callback's
parameter) makes the answer None. A `Where` says where an expression is read: its function or module, that
module's top-level definitions, and whether the module is another file than the scanned one (whose imports
are not read here).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from kb.scan.context import Context
from kb.scan.nodes import iwalk
from kb.scan.syntax import inner_statements


def latest(scope: ast.AST | None, node: ast.AST, name: str) -> tuple[ast.expr, int | None] | None:
    """The value a name holds at `node` when the statement just before it in the same block that binds the
    name is a plain assignment (`for d in names: d, log = make(d); DataLoader(d)`: the loop's value is
    replaced), with the position it takes in a tuple target. None: no such statement."""
    line = getattr(node, "lineno", None)
    if scope is None or line is None:
        return None
    best: tuple[int, list[ast.stmt], int] | None = None
    for sub in iwalk(scope):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(sub, field, None)
            if not (isinstance(block, list) and block and isinstance(block[0], ast.stmt)):
                continue
            for i, stmt in enumerate(block):
                end = getattr(stmt, "end_lineno", stmt.lineno)
                if stmt.lineno <= line <= end and (best is None or end - stmt.lineno < best[0]):
                    best = (end - stmt.lineno, block, i)
    if best is None:
        return None
    _, block, i = best
    for stmt in reversed(block[:i]):
        if not any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store) for n in iwalk(stmt)):
            continue
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and not any(
                isinstance(n, (ast.FunctionDef, ast.Lambda)) for n in iwalk(stmt.value)):
            target = stmt.targets[0]
            if isinstance(target, ast.Name) and target.id == name:
                return stmt.value, None
            if isinstance(target, ast.Tuple) and all(isinstance(e, ast.Name) for e in target.elts):
                names = [e.id for e in target.elts if isinstance(e, ast.Name)]
                if names.count(name) == 1:
                    return stmt.value, names.index(name)
        return None
    return None


def reaching(scope: ast.AST, node: ast.AST, name: str) -> ast.expr | None:
    """The value a name holds at `node`, read back from it through straight-line code: the last statement
    before it, in its block or in the blocks around it up to `scope`, that binds the name, when that is a
    plain `name = value`. Going out of an `if` branch or a `with` block is safe (the other branch did not
    run); out of a loop only if the loop binds the name nowhere (else a later binding may come round again);
    out of anything else (`try`, a nested function) it stops. None: not shown so."""
    line = getattr(node, "lineno", None)
    if line is None or not isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)) or any(
            isinstance(n, (ast.Global, ast.Nonlocal)) and name in n.names for n in iwalk(scope)):
        return None
    chain: list[tuple[ast.AST, list[ast.stmt], int]] = []  # (owner, block, index of the statement holding node)
    owner: ast.AST = scope
    block: list[ast.stmt] = scope.body
    while True:
        at = next((i for i, stmt in enumerate(block) if stmt.lineno <= line <= getattr(stmt, "end_lineno", stmt.lineno)), None)
        if at is None:
            return None
        chain.append((owner, block, at))
        stmt = block[at]
        inner = next((b for b in (getattr(stmt, f, None) for f in ("body", "orelse")) if isinstance(b, list) and b
                      and isinstance(b[0], ast.stmt) and b[0].lineno <= line <= getattr(b[-1], "end_lineno", b[-1].lineno)), None)
        if inner is None or not isinstance(stmt, (ast.If, ast.With, ast.AsyncWith, ast.For, ast.AsyncFor, ast.While)):
            break
        owner, block = stmt, inner
    for owner, block, at in reversed(chain):
        if owner is not scope and (_binds_in(owner, name) if isinstance(owner, (ast.For, ast.AsyncFor, ast.While))
                                   else any(_binds_in(part, name) for part in _header(owner))):
            return None  # a loop that binds the name, or `with ... as name` / a walrus in a test
        for stmt in reversed(block[:at]):
            if not _binds_in(stmt, name):
                continue
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) \
                    and stmt.targets[0].id == name:
                return stmt.value
            return None
    return None


def _header(stmt: ast.AST) -> list[ast.AST]:
    """What an `if` or `with` statement evaluates before its blocks: its test, or its items."""
    return [stmt.test] if isinstance(stmt, ast.If) else list(stmt.items) if isinstance(stmt, (ast.With, ast.AsyncWith)) else []


def _binds_in(node: ast.AST, name: str) -> bool:
    """Anything in `node` may bind `name`: a store, a def or class, an import, an `except ... as`."""
    for sub in iwalk(node):
        if isinstance(sub, ast.Name) and sub.id == name and not isinstance(sub.ctx, ast.Load):
            return True
        if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.ExceptHandler)) \
                and sub.name == name:
            return True
        if isinstance(sub, (ast.Import, ast.ImportFrom)) and any(
                (a.asname or a.name).split(".")[0] == name for a in sub.names):
            return True
    return False


@dataclass(frozen=True)
class Where:
    """Where an expression is read: the function (or module) it is in, its module's top-level definitions,
    and whether that module is another file than the scanned one (whose imports are not read here)."""
    scope: ast.AST | None
    defs: dict
    foreign: bool


def top_level(ctx: Context) -> dict:
    """The scanned module's top-level functions and classes by name."""
    return {n.name: n for n in (ctx.tree.body if ctx.tree is not None else ())
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}


def own_statements(scope: ast.AST) -> list[ast.stmt]:
    """The statements of a function or module, not those of the functions and classes it defines."""
    out: list[ast.stmt] = []
    stack = list(getattr(scope, "body", ()))
    while stack:
        item = stack.pop()
        out.append(item)
        if not isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            stack.extend(inner_statements(item))
    return out


def returns(fn: ast.AST) -> list[ast.expr]:
    """What a function returns (every `return` has a value, else nothing is known)."""
    found = [s for s in own_statements(fn) if isinstance(s, ast.Return)]
    return [s.value for s in found if s.value is not None] if all(s.value is not None for s in found) else []


def values_of(ctx: Context, where: Where, name: str) -> list[tuple[ast.AST, Where, int | None]] | None:
    """Every value a name may hold where it is read: its assignments in the function (`a, b = f()` gives
    f() at position 1 for b; `items.append(x)` adds x to a list), else the module's (in the scanned file),
    else, for a parameter of a function of the scanned file, the argument each caller gives. None: a value
    it may take is not shown (a loop variable, `+=`, a parameter without callers)."""
    scope = where.scope
    if scope is None:
        return None
    found: list[tuple[ast.AST, Where, int | None]] = []
    for stmt in own_statements(scope):
        if isinstance(stmt, ast.Assign):
            for target in stmt.targets:
                if isinstance(target, ast.Name) and target.id == name:
                    found.append((stmt.value, where, None))
                elif isinstance(target, (ast.Tuple, ast.List)):
                    for i, elt in enumerate(target.elts):
                        if isinstance(elt, ast.Starred) and binds(elt, name):
                            return None
                        if isinstance(elt, ast.Name) and elt.id == name:
                            found.append((stmt.value, where, i))
                        elif binds(elt, name):
                            return None
        elif isinstance(stmt, (ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor, ast.With, ast.AsyncWith)):
            targets = [stmt.target] if isinstance(stmt, (ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor)) \
                else [i.optional_vars for i in stmt.items if i.optional_vars is not None]
            if any(binds(t, name) for t in targets):
                if isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
                    found.append((stmt.value, where, None))
                else:
                    return None
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and isinstance(stmt.value.func, ast.Attribute) \
                and isinstance(stmt.value.func.value, ast.Name) and stmt.value.func.value.id == name:
            call = stmt.value
            method = stmt.value.func.attr
            if method in ("append", "extend") and len(call.args) == 1:
                found.append((call.args[0], where, None))
            else:
                return None  # changed by a method the scan does not read
    if found:
        return found
    if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
        params = [a.arg for a in (*scope.args.posonlyargs, *scope.args.args)]
        if name in params or name in [a.arg for a in scope.args.kwonlyargs]:
            return _arguments(ctx, where, scope, name)
        if not where.foreign and ctx.tree is not None:
            return values_of(ctx, Where(ctx.tree, where.defs, False), name)
    return None


def binds(target: ast.AST, name: str) -> bool:
    """The assignment target (a name, a tuple of them, ...) mentions the name."""
    return any(isinstance(n, ast.Name) and n.id == name for n in iwalk(target))


def _arguments(ctx: Context, where: Where, fn: ast.FunctionDef | ast.AsyncFunctionDef,
               name: str) -> list[tuple[ast.AST, Where, int | None]] | None:
    """The argument every call of a module-level function of the scanned file gives a parameter (its
    default where a call leaves it out). None: the function is another file's, a method, passed around
    rather than called, never called here, or called with `*args` / `**kwargs`."""
    if where.foreign or ctx.tree is None or where.defs.get(fn.name) is not fn:
        return None
    positional = [a.arg for a in (*fn.args.posonlyargs, *fn.args.args)]
    defaults = dict(zip(positional[len(positional) - len(fn.args.defaults):], fn.args.defaults))
    defaults.update({a.arg: d for a, d in zip(fn.args.kwonlyargs, fn.args.kw_defaults) if d is not None})
    found: list[tuple[ast.AST, Where, int | None]] = []
    scopes = [ctx.tree, *(n for n in iwalk(ctx.tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))]
    for scope in scopes:
        for stmt in own_statements(scope):
            for sub in _expressions(stmt):
                if isinstance(sub, ast.Name) and sub.id == fn.name and not _called(sub, stmt):
                    return None  # handed on (a callback): its callers are not read here
                if not (isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name) and sub.func.id == fn.name):
                    continue
                if any(isinstance(a, ast.Starred) for a in sub.args) or any(k.arg is None for k in sub.keywords):
                    return None
                given = next((k.value for k in sub.keywords if k.arg == name), None)
                if given is None and name in positional and positional.index(name) < len(sub.args):
                    given = sub.args[positional.index(name)]
                if given is None:
                    if name not in defaults:
                        return None
                    found.append((defaults[name], Where(ctx.tree, where.defs, False), None))
                else:
                    found.append((given, Where(scope, where.defs, False), None))
    return found or None


def _expressions(stmt: ast.stmt) -> list[ast.AST]:
    """The nodes of a statement's own expressions (not of the statements nested in it)."""
    out: list[ast.AST] = []
    for field, value in ast.iter_fields(stmt):
        if field in ("body", "orelse", "finalbody", "handlers"):
            continue
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, ast.AST):
                out.extend(iwalk(item))
    return out


def _called(name: ast.Name, stmt: ast.stmt) -> bool:
    """The name is the function of a call in the statement (not a value handed on)."""
    return any(isinstance(sub, ast.Call) and sub.func is name for sub in _expressions(stmt)) \
        or isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef))
