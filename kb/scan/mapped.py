"""Which definitions a function expression handed to a `tf.data` map runs, read where it is handed over
(for the rule mapped-function-draws-no-random, kb/scan/resolvers.py).

A pipeline often defines its map function inside the function that builds it, once per branch
(`if name == 'imagenet': def decode(x): <random crop> ... elif name == 'celeba': def decode(x): <cast>`),
or takes it from a function of the file that returns one it defines (`parse = make_parser(size)`). By name
alone the first definition in the file would stand for every one; Python runs the one bound last on the
way to the call. So the definitions read are those that may be bound at the call: in the innermost
enclosing function that binds the name, the last definition in a block that holds the call, and any made
after it in blocks that may or may not have run (an `if` beside the call). A parameter, a loop variable or a
name bound only after the call is unknown (the caller keeps the finding); an assignment of another value
(a `functools.partial`, a class instance) is left to the caller's reading of the whole file.
"""

from __future__ import annotations

import ast

from kb.scan.context import Context

Definition = ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda
# None in a list: a binding that cannot be read (the function it holds may draw).
Found = list[Definition | None]
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def definitions(ctx: Context, func: ast.AST, depth: int = 3) -> Found | None:
    """The definitions `func` (the map's function argument) may run, or None when the enclosing functions
    do not bind it (a module-level function, a method, an import: left to the caller's own reading)."""
    if isinstance(func, ast.Lambda):
        return [func]
    if isinstance(func, ast.Call):
        return _made_by(ctx, func, depth) if _factory(ctx, func) is not None else None
    if not isinstance(func, ast.Name):
        return None
    for fn in reversed(ctx.fn_nodes):
        if _bindings(fn, func.id):  # the innermost function that binds the name holds what it is
            return _bound_at(ctx, fn, func.id, func.lineno, depth)
    return None


def _bound_at(ctx: Context, fn: ast.AST, name: str, line: int, depth: int) -> Found | None:
    """What `name` may hold at `line` in `fn`, if `fn` binds it (None: it does not)."""
    bindings = _bindings(fn, name)
    if not bindings:
        return None
    if any(b is None for b in bindings) or isinstance(fn, ast.Lambda):
        return [None]
    before = sorted((b for b in bindings if b is not None and b[0].lineno < line), key=lambda b: b[0].lineno)
    if not before:
        return [None]  # bound only after the call (a loop): cannot tell
    both = _bound_in_both_branches(fn, {id(stmt) for stmt, _ in before}, line)
    reaching: list[tuple[ast.stmt, bool]] = []
    for stmt, _ in before:
        if _holds_call(fn, stmt, line):
            reaching = [(stmt, True)]  # bound on every way to the call: earlier bindings are replaced
        elif id(stmt) in both and not any(id(s) in both for s, _ in reaching):
            reaching = [(stmt, True)]  # the first of an if/else's two bindings: every way binds it
        else:
            reaching.append((stmt, False))
    if not reaching[0][1]:
        return [None]  # no binding certainly runs before the call: the name may come from elsewhere
    out: Found = []
    for stmt, _ in reaching:
        if isinstance(stmt, _DEFS):
            out.append(stmt)
        elif isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Lambda):
            out.append(stmt.value)
        elif isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Call) and _factory(ctx, stmt.value) is not None:
            out.extend(_made_by(ctx, stmt.value, depth - 1))
        else:
            return None  # another value (a partial, a class instance): read as before, by the whole file
    return out


def _bound_in_both_branches(fn: ast.AST, bound: set[int], line: int) -> set[int]:
    """The ids of bindings (of `bound`) at the top level of both branches of an `if`/`else` that lies on every way
    to the call at `line` (init2winit's `if shift: map_fn = lambda x: ... else: map_fn = lambda x: ...`)."""
    for sub in _own(fn):
        if isinstance(sub, ast.If) and sub.orelse and (sub.end_lineno or sub.lineno) < line and _holds_call(fn, sub, line):
            body = [s for s in sub.body if id(s) in bound]
            orelse = [s for s in sub.orelse if id(s) in bound]
            if body and orelse:
                return {id(s) for s in (*body, *orelse)}
    return set()


def _factory(ctx: Context, call: ast.Call) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The module-level function of the file a call calls by its name (None: a class, an import, anything else)."""
    name = call.func.id if isinstance(call.func, ast.Name) else None
    return next((s for s in (ctx.tree.body if isinstance(ctx.tree, ast.Module) else [])
                 if isinstance(s, _DEFS) and s.name == name), None)


def _made_by(ctx: Context, call: ast.Call, depth: int) -> Found:
    """`make_parser(size)`: a module-level function of the file every `return` of which hands back a function
    it defines (or a lambda): those definitions."""
    made = _factory(ctx, call)
    if made is None or depth <= 0:
        return [None]
    returns = [r for r in _own(made) if isinstance(r, ast.Return)]
    if not returns:
        return [None]
    out: Found = []
    for r in returns:
        if isinstance(r.value, ast.Lambda):
            out.append(r.value)
        elif isinstance(r.value, ast.Name):
            out.extend(_bound_at(ctx, made, r.value.id, r.lineno, depth - 1) or [None])
        else:
            out.append(None)
    return out


def _bindings(fn: ast.AST, name: str) -> list[tuple[ast.stmt, None] | None]:
    """Every binding of `name` in `fn`'s own body: (the def or the plain `name = ...`, None), or None for
    any other binding (a parameter, a loop or `with` target, an unpacking, an import, a global)."""
    found: list[tuple[ast.stmt, None] | None] = []
    if isinstance(fn, (*_DEFS, ast.Lambda)):
        args = fn.args
        if any(a.arg == name for a in (*args.posonlyargs, *args.args, *args.kwonlyargs,
                                         *(x for x in (args.vararg, args.kwarg) if x))):
            found.append(None)
    for sub in _own(fn):
        if isinstance(sub, _DEFS) and sub.name == name:
            found.append((sub, None))
        elif isinstance(sub, ast.ClassDef) and sub.name == name:
            found.append(None)
        elif isinstance(sub, ast.Assign) and len(sub.targets) == 1 and isinstance(sub.targets[0], ast.Name) \
                and sub.targets[0].id == name:
            found.append((sub, None))
        elif isinstance(sub, ast.Name) and sub.id == name and isinstance(sub.ctx, (ast.Store, ast.Del)) \
                and not _plain_target(fn, sub):
            found.append(None)
        elif isinstance(sub, (ast.Import, ast.ImportFrom, ast.Global, ast.Nonlocal)) and name in (
                [(a.asname or a.name).split(".")[0] for a in sub.names] if isinstance(sub, (ast.Import, ast.ImportFrom))
                else sub.names):
            found.append(None)
    return found


def _plain_target(fn: ast.AST, target: ast.Name) -> bool:
    """`target` is the whole left side of a plain one-target assignment (counted by `_bindings` itself)."""
    return any(isinstance(s, ast.Assign) and len(s.targets) == 1 and s.targets[0] is target for s in _own(fn))


def _own(fn: ast.AST) -> list[ast.AST]:
    """The nodes of `fn`'s body, not those inside the functions, lambdas and classes it defines (their
    definitions themselves are kept: a `def` binds its name here)."""
    out: list[ast.AST] = []
    body = getattr(fn, "body", [])
    stack = list(body) if isinstance(body, list) else [body]
    while stack:
        sub = stack.pop()
        out.append(sub)
        if isinstance(sub, _SCOPES):
            stack.extend(sub.decorator_list if not isinstance(sub, ast.Lambda) else [])
            continue
        stack.extend(ast.iter_child_nodes(sub))
    return out


def _holds_call(fn: ast.AST, stmt: ast.stmt, line: int) -> bool:
    """`stmt` sits in a block of `fn` that also holds, after it, the statement around `line`: whenever the call
    runs, `stmt` ran before it (a `def` in the same `elif` branch as the call, or at the function's top)."""
    for block in _blocks(fn):
        if any(s is stmt for s in block):
            at = next(k for k, s in enumerate(block) if s is stmt)
            return any(s.lineno <= line <= (s.end_lineno or s.lineno) for s in block[at + 1:])
    return False


def _blocks(fn: ast.AST) -> list[list[ast.stmt]]:
    """The statement lists of `fn`'s own body (bodies of its `if`s, loops, `with`s, `try`s), not of the
    functions it defines."""
    out: list[list[ast.stmt]] = []
    for sub in [fn, *_own(fn)]:
        if sub is not fn and isinstance(sub, _SCOPES):
            continue
        for field in ("body", "orelse", "finalbody"):
            block = getattr(sub, field, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                out.append(block)
        for handler in getattr(sub, "handlers", None) or []:
            out.append(handler.body)
    return out
