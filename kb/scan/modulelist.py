"""The layer an element of a module's `nn.ModuleList` holds (`self.fcs[-1](x)`), for the rank a model's
`forward` returns (kb/scan/rank.py).

Graph and deep models keep their layers in a list built in `__init__`: `nn.ModuleList([nn.Linear(...), ...])`,
a comprehension of one layer, or an empty list with `.append(...)` calls, the input and output layers
appended outside the loop that appends the hidden ones. An index is read where the code fixes it: a
literal list's element; the first or last append when it is a plain statement of the method that makes the
list (not in a loop or a branch), with nothing before (or after) it; else any index where every element is
made by the same class (all `nn.Linear`). Otherwise the element is unknown.
"""

from __future__ import annotations

import ast

from kb.scan.context import Context
from kb.scan.nodes import iwalk
from kb.scan.syntax import self_attribute

_LISTS = frozenset({"torch.nn.ModuleList"})


def element(ctx: Context, cls: ast.ClassDef, attr: str, index: ast.AST) -> ast.Call | None:
    """The call that made `self.<attr>[index]` of the class, where the code shows it (None: not shown)."""
    made = [value for value, _ in ctx.self_assignments(cls).get(attr, ())]
    if len(made) != 1 or not isinstance(made[0], ast.Call) or ctx.dotted(made[0].func) not in _LISTS:
        return None
    listed, every = _listed(made[0])
    appends = _appends(cls, attr) if listed is not None else None
    if listed is None or appends is None:
        return None
    position = _position(index)
    if position is not None and not appends and every and -len(listed) <= position < len(listed):
        return listed[position]
    if position == 0 and every and listed:
        return listed[0]
    if appends and (position == -1 or (position == 0 and not listed)):
        call, plain = appends[-1] if position == -1 else appends[0]
        if plain:  # a statement of the method itself: it runs once, in that order
            return call
    calls = [*listed, *(call for call, _ in appends)]
    kinds = {ctx.dotted(c.func) or ast.dump(c.func) for c in calls}
    return calls[0] if len(kinds) == 1 else None


def _listed(made: ast.Call) -> tuple[list[ast.Call] | None, bool]:
    """The layers `nn.ModuleList(...)` is made with, and whether that is every element in order (a literal
    list, not a comprehension's repeated layer); None: elements the code does not show."""
    if made.keywords or len(made.args) > 1:
        return None, False
    if not made.args:
        return [], True
    value = made.args[0]
    if isinstance(value, (ast.List, ast.Tuple)) and all(isinstance(e, ast.Call) for e in value.elts):
        return [e for e in value.elts if isinstance(e, ast.Call)], True
    if isinstance(value, ast.ListComp) and isinstance(value.elt, ast.Call):
        return [value.elt], False
    return None, False


def _appends(cls: ast.ClassDef, attr: str) -> list[tuple[ast.Call, bool]] | None:
    """Every `self.<attr>.append(<call>)` of the class, in order, each with whether it is a plain statement of
    its method (not in a loop or a branch); None when the list is changed otherwise (`extend`, `insert`, an
    append of a name) or appended to in more than one method."""
    found: list[tuple[ast.Call, bool, int]] = []
    methods = set()
    for fn in (n for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))):
        for node in iwalk(fn):
            if isinstance(node, ast.Attribute) and self_attribute(node.value, attr) and \
                    node.attr in ("extend", "insert", "pop", "remove"):
                return None
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "append" \
                    and self_attribute(node.func.value, attr):
                if len(node.args) != 1 or not isinstance(node.args[0], ast.Call):
                    return None
                plain = any(isinstance(s, ast.Expr) and s.value is node for s in fn.body)
                found.append((node.args[0], plain, node.lineno))
                methods.add(fn.name)
    if len(methods) > 1:
        return None
    return [(call, plain) for call, plain, _ in sorted(found, key=lambda item: item[2])]


def _position(index: ast.AST) -> int | None:
    """A literal integer index (`0`, `-1`); None otherwise."""
    sign = 1
    if isinstance(index, ast.UnaryOp) and isinstance(index.op, ast.USub):
        index, sign = index.operand, -1
    return sign * index.value if isinstance(index, ast.Constant) and type(index.value) is int else None


def sequential(ctx: Context, args: list[ast.expr]) -> list[ast.expr]:
    """An nn.Sequential's layers in order: its arguments, or the values of `OrderedDict([(name, layer), ...])`."""
    only = args[0] if len(args) == 1 else None
    if not (isinstance(only, ast.Call) and ctx.dotted(only.func) == "collections.OrderedDict" and len(only.args) == 1
            and isinstance(only.args[0], (ast.List, ast.Tuple))):
        return args
    return [p.elts[1] if isinstance(p, ast.Tuple) and len(p.elts) == 2 else p for p in only.args[0].elts]
