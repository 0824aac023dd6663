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

from kb.scan.nodes import iwalk

Function = ast.FunctionDef | ast.AsyncFunctionDef


def _stored(stmt: ast.stmt) -> set[str]:
    """The names a statement binds anywhere in it (assignments, loop and `with` targets, walrus, imports,
    nested definitions, `del`), and the names it declares `global` or `nonlocal` ('*' marks those)."""
    out: set[str] = set()
    for sub in iwalk(stmt):
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


class Body:
    """One function's statements, each with the names it binds (_stored); and, made on the first question, the
    statement each node of the body lies under and the names each assigned value binds. reaching_value is asked
    about many uses of one function: each used to walk its statement again to find it, and each binding's value
    again to read its names."""

    __slots__ = ("table", "_under", "_binds")

    def __init__(self, fn: Function) -> None:
        self.table = [(stmt, _stored(stmt)) for stmt in fn.body]
        self._under: dict[int, int] | None = None
        self._binds: dict[int, set[str]] = {}

    def under(self, node: ast.AST) -> int | None:
        """The index of the statement of the body that holds `node` (None: none does)."""
        if self._under is None:
            self._under = {id(n): k for k, (stmt, _) in enumerate(self.table) for n in iwalk(stmt)}
        return self._under.get(id(node))

    def binds(self, value: ast.expr) -> set[str]:
        """The names an assigned value binds itself (a walrus, a lambda's or comprehension's names as _stored reads them)."""
        found = self._binds.get(id(value))
        if found is None:
            found = self._binds[id(value)] = _stored(ast.Expr(value))
        return found


def _body(memo: dict[int, Body], fn: Function) -> Body:
    found = memo.get(id(fn))
    if found is None:
        found = memo[id(fn)] = Body(fn)
    return found


def reaching_value(memo: dict[int, Body], fn: ast.AST, use: ast.Name) -> ast.expr | None:
    """The value of the one plain `name = value` of `fn`'s body that reaches `use` (module docstring), or None."""
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or not isinstance(use.ctx, ast.Load):
        return None
    body = _body(memo, fn)
    table = body.table
    line, name = use.lineno, use.id
    at = body.under(use)  # the one statement whose tree holds the use (a tree: no other does), if its lines hold it
    if at is None or not table[at][0].lineno <= line <= (table[at][0].end_lineno or table[at][0].lineno):
        return None
    stmt, stored = table[at]
    if name in stored:
        # only `name = f(name)` itself: its value is read before the name is bound again
        if not (isinstance(stmt, ast.Assign) and any(n is use for n in iwalk(stmt.value))
                and body.binds(stmt.value).isdisjoint({name})):
            return None
    for before, names in reversed(table[:at]):
        if name not in names:
            continue
        if isinstance(before, ast.Assign) and len(before.targets) == 1 and isinstance(before.targets[0], ast.Name) \
                and before.targets[0].id == name and name not in body.binds(before.value):
            return before.value
        if isinstance(before, ast.AnnAssign) and before.value is not None and isinstance(before.target, ast.Name) \
                and before.target.id == name and name not in body.binds(before.value):
            return before.value
        return None
    return None


def dominating_value(scope: ast.AST, use: ast.Name) -> ast.expr | None:
    """The value of the plain `name = value` that every path to `use` passes last, found in the blocks that hold
    the use, innermost first: the statements before it in its own block, then those before the statement that
    holds that block, and so on up to `scope`'s body (a function or a module). `if ddp: n = torch.tensor(n,
    dtype=torch.long); dist.all_reduce(n)` inside a loop sees the integer tensor, whatever `n` held before.
    None where a statement that holds the use binds the name too (a loop may bring that binding back round), or
    the last binding before it is no plain assignment."""
    if not isinstance(scope, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef)) or not isinstance(use.ctx, ast.Load):
        return None
    path: list[tuple[list[ast.stmt], int]] = []  # (block, index of the statement holding the use), outermost first
    block: list[ast.stmt] | None = scope.body
    line, name = use.lineno, use.id
    while block is not None:
        at = next((k for k, stmt in enumerate(block)
                   if stmt.lineno <= line <= (stmt.end_lineno or stmt.lineno) and any(n is use for n in iwalk(stmt))), None)
        if at is None:
            return None
        path.append((block, at))
        holder, block = block[at], None
        if isinstance(holder, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            return None  # the use is another scope's
        for field in ("body", "orelse", "finalbody"):
            inner = getattr(holder, field, None)
            if isinstance(inner, list) and any(any(n is use for n in iwalk(s)) for s in inner):
                block = inner
                break
    innermost = True
    for block, at in reversed(path):
        holder = block[at]
        stored = _stored(holder)
        if name in stored and not (innermost and isinstance(holder, ast.Assign) and name not in _stored(ast.Expr(holder.value))
                                   and any(n is use for n in iwalk(holder.value))):
            return None
        innermost = False
        for before in reversed(block[:at]):
            if name not in _stored(before):
                continue
            if isinstance(before, ast.Assign) and len(before.targets) == 1 and isinstance(before.targets[0], ast.Name) \
                    and before.targets[0].id == name and name not in _stored(ast.Expr(before.value)):
                return before.value
            return None
    return None


def _root(node: ast.AST) -> str | None:
    """The name a write lands in: `x` of `x[i]`, `x.data`, `x[i].y`."""
    while isinstance(node, (ast.Subscript, ast.Attribute, ast.Starred)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


# methods and functions whose result may share the memory of their receiver or argument (a view, or the
# tensor itself when nothing needs converting)
_SHARING = frozenset({"view", "view_as", "reshape", "reshape_as", "transpose", "permute", "expand", "expand_as",
                      "squeeze", "unsqueeze", "flatten", "unflatten", "narrow", "split", "chunk", "unbind", "t",
                      "movedim", "swapaxes", "diagonal", "select", "as_strided", "detach", "to", "cuda", "cpu",
                      "contiguous", "float", "double", "half", "long", "int", "type", "type_as", "data", "real", "imag",
                      "tensor_split", "view_as_real", "view_as_complex", "get", "values", "items", "copy"})


def _shared(value: ast.AST) -> set[str]:
    """The names whose memory `value` may share: a name, its items or attributes, what a view method or
    function (`x.view(...)`, `torch.reshape(x, ...)`) makes of them, either branch of `a if c else b`, the
    items of a tuple or list. A call of anything else makes new memory (as far as this reading goes)."""
    if isinstance(value, ast.Name):
        return {value.id}
    if isinstance(value, (ast.Subscript, ast.Attribute, ast.Starred)):
        return _shared(value.value)
    if isinstance(value, (ast.Tuple, ast.List, ast.Set)):
        return set().union(*(_shared(e) for e in value.elts)) if value.elts else set()
    if isinstance(value, ast.IfExp):
        return _shared(value.body) | _shared(value.orelse)
    if isinstance(value, ast.NamedExpr):
        return _shared(value.value)
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in _SHARING:
        return _shared(value.func.value).union(*(_shared(a) for a in value.args))
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in ("list", "tuple", "iter", "reversed", "enumerate", "zip", "sorted"):
        return set().union(*(_shared(a) for a in value.args)) if value.args else set()
    return set()


def _writes_and_links(fn: Function) -> tuple[set[str | None], list[tuple[set[str], set[str]]]]:
    """The names `fn` writes into in place (subscript or attribute assignments, augmented assignments, the
    receivers of `x.op_(...)`, `out=` arguments; None where the target is no name) and, for each assignment,
    (names bound, names read): what may alias what."""
    written: set[str | None] = set()
    links: list[tuple[set[str], set[str]]] = []
    for sub in iwalk(fn):
        if isinstance(sub, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = sub.targets if isinstance(sub, ast.Assign) else [sub.target]
            bound: set[str] = set()
            for target in targets:
                for part in iwalk(target):
                    if isinstance(part, ast.Name) and isinstance(part.ctx, ast.Store):
                        bound.add(part.id)
                if isinstance(sub, ast.AugAssign) or not isinstance(target, (ast.Name, ast.Tuple, ast.List)):
                    written.add(_root(target))
            if sub.value is not None:
                links.append((bound, _shared(sub.value)))
        elif isinstance(sub, ast.NamedExpr):
            links.append(({sub.target.id}, _shared(sub.value)))
        elif isinstance(sub, (ast.For, ast.AsyncFor, ast.comprehension)):
            links.append(({n.id for n in iwalk(sub.target) if isinstance(n, ast.Name)},
                          _shared(sub.iter)))
        elif isinstance(sub, ast.Call):
            written.update(_root(k.value) for k in sub.keywords if k.arg == "out")
            if isinstance(sub.func, ast.Attribute) and sub.func.attr.endswith("_") and not sub.func.attr.startswith("_"):
                written.add(_root(sub.func.value))
    return written, links


def untouched(memo: dict[int, tuple[set[str | None], list[tuple[set[str], set[str]]]]], fn: ast.AST, name: str) -> bool:
    """No in-place write of `fn` lands in `name` or in anything bound from it (a view `row = name[0]`, and so
    on): the value the use sees is the one its binding made. False where a write's target is no name."""
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    found = memo.get(id(fn))
    if found is None:
        found = memo[id(fn)] = _writes_and_links(fn)
    written, links = found
    if None in written:
        return False
    aliases, grown = {name}, True
    while grown:
        grown = False
        for bound, read in links:
            if not read.isdisjoint(aliases) and not bound <= aliases:
                aliases |= bound
                grown = True
    return written.isdisjoint(aliases)
