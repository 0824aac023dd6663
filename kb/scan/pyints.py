"""Python values the code shows are ints, for `torch.tensor(values)` (kb/scan/values.py `integer`): a list
of Python ints makes an int64 tensor, whose running sum (offsets from lengths) is exact in any order.

Only what the code states: int literals, `len(...)`, `int(...)`, `+ - * // %` of ints, a name whose every
binding in the function is one, and a list comprehension of such values over `range(...)`, over a list of
int literals, or over a class attribute annotated `list[int]` (`self.sizes: list[int] = ...`, as
seed-argument-is-int reads an `int` annotation). Anything else (a parameter, a float, `/`, `**`) is unknown.

`never_none` is weaker, for an op's `seed=` (seed-argument-is-int): a value that cannot be None, whatever number
it is: a literal that is not None, arithmetic (None would raise), an int as above, a tuple, list or f-string
display, an entry of a module-level
tuple or list of such literals (`SEEDS = (42, 17)`, `seed=SEEDS[0]`), or a name whose every binding, in the
function or (when the function binds it nowhere) at the module's level, is one.
"""

from __future__ import annotations

import ast

from kb.scan import reaching
from kb.scan.context import Context
from kb.scan.nodes import iwalk
from kb.scan.syntax import self_attribute

_INT_OPS = (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Mod)  # `/` makes a float; `**` may (a negative power)


def int_list(ctx: Context, node: ast.AST | None, fn: ast.AST | None, depth: int = 8) -> bool:
    """`node` is visibly a list of Python ints: a display of int values, a comprehension of them, or a name
    whose every binding in `fn` is one."""
    if node is None or depth <= 0:
        return False
    if isinstance(node, (ast.List, ast.Tuple)):
        return bool(node.elts) and all(int_value(ctx, e, fn, {}, depth - 1) for e in node.elts)
    if isinstance(node, ast.ListComp):
        loops = _loop_ints(ctx, node, fn, depth - 1)
        return loops is not None and int_value(ctx, node.elt, fn, loops, depth - 1)
    if isinstance(node, ast.Name) and fn is not None:
        bound = only_bindings(ctx, fn, node.id)
        return bool(bound) and all(int_list(ctx, b, fn, depth - 1) for b in bound)
    return False


def int_value(ctx: Context, node: ast.AST, fn: ast.AST | None, loops: dict[str, bool], depth: int = 8) -> bool:
    """`node` is visibly a Python int (`loops`: the comprehension variables known to be ints)."""
    if depth <= 0:
        return False
    if isinstance(node, ast.Constant):
        return type(node.value) is int
    if isinstance(node, ast.BinOp):
        return isinstance(node.op, _INT_OPS) and int_value(ctx, node.left, fn, loops, depth - 1) \
            and int_value(ctx, node.right, fn, loops, depth - 1)
    if isinstance(node, ast.UnaryOp):
        return isinstance(node.op, (ast.USub, ast.UAdd)) and int_value(ctx, node.operand, fn, loops, depth - 1)
    if isinstance(node, ast.Call):
        if isinstance(node.func, ast.Name) and node.func.id == "sum" and len(node.args) == 1 and not node.keywords \
                and isinstance(node.args[0], (ast.GeneratorExp, ast.ListComp)):  # `sum(len(t) for t in targets)`
            return int_value(ctx, node.args[0].elt, fn, {**loops, **{n.id: False for g in node.args[0].generators
                                                                   for n in iwalk(g.target) if isinstance(n, ast.Name)}},
                             depth - 1)
        return isinstance(node.func, ast.Name) and node.func.id in ("len", "int") and len(node.args) == 1 \
            and not node.keywords
    if isinstance(node, ast.Name):
        if node.id in loops:
            return loops[node.id]
        last = reaching.dominating_value(fn, node) if fn is not None else None
        if last is not None:  # `n = sum(...)`, then `n = torch.as_tensor([n])`: the binding the use sees
            return int_value(ctx, last, fn, loops, depth - 1)
        bound = only_bindings(ctx, fn, node.id) if fn is not None else []
        return bool(bound) and all(int_value(ctx, b, fn, loops, depth - 1) for b in bound)
    return False


def _loop_ints(ctx: Context, comp: ast.ListComp, fn: ast.AST | None, depth: int) -> dict[str, bool] | None:
    """The comprehension's variables, each True where it visibly runs over ints; None if a loop unpacks."""
    loops: dict[str, bool] = {}
    for gen in comp.generators:
        if not isinstance(gen.target, ast.Name):
            return None
        loops[gen.target.id] = _ints_iterated(ctx, gen.iter, fn, depth)
    return loops


def _ints_iterated(ctx: Context, node: ast.AST, fn: ast.AST | None, depth: int) -> bool:
    """Iterating `node` gives ints: `range(...)`, a list of ints, or a `self.X` the class annotates `list[int]`."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "range":
        return True
    if self_attribute(node) and ctx.class_nodes:
        assert isinstance(node, ast.Attribute)
        return _annotated_int_list(ctx.class_nodes[-1], node.attr)
    return int_list(ctx, node, fn, depth)


def _annotated_int_list(cls: ast.ClassDef, attr: str) -> bool:
    """The class annotates `self.<attr>: list[int]` (or `List[int]`) and never assigns it unannotated."""
    annotated = False
    for sub in iwalk(cls):
        if isinstance(sub, ast.AnnAssign) and self_attribute(sub.target) and sub.target.attr == attr:
            ann = sub.annotation
            if not (isinstance(ann, ast.Subscript) and isinstance(ann.value, ast.Name)
                    and ann.value.id in ("list", "List") and isinstance(ann.slice, ast.Name) and ann.slice.id == "int"):
                return False
            annotated = True
        elif isinstance(sub, (ast.Assign, ast.AugAssign)):
            targets = sub.targets if isinstance(sub, ast.Assign) else [sub.target]
            if any(self_attribute(t) and t.attr == attr for t in targets):
                return False
    return annotated


def only_bindings(ctx: Context, fn: ast.AST | None, name: str) -> list[ast.expr]:
    """The values of `name = value` in `fn` when those are all its bindings (no parameter, loop, `+=`,
    unpacking or `with ... as` binds it); [] otherwise."""
    if fn is None:
        return []
    if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        args = fn.args
        if any(a.arg == name for a in (*args.posonlyargs, *args.args, *args.kwonlyargs,
                                         *(a for a in (args.vararg, args.kwarg) if a))):
            return []
    values = ctx.assigned_in(fn).get(name, [])
    stores = sum(1 for sub in iwalk(fn) if isinstance(sub, ast.Name) and sub.id == name
                 and isinstance(sub.ctx, ast.Store))
    return list(values) if values and stores == len(values) else []


_ARITHMETIC = (ast.Add, ast.Sub, ast.Mult, ast.Mod, ast.FloorDiv)


def never_none(ctx: Context, node: ast.AST | None, fn: ast.AST | None, depth: int = 4) -> bool:
    """`node` visibly never evaluates to None (module docstring): a fixed seed, not a missing one."""
    if node is None or depth <= 0:
        return False
    if isinstance(node, ast.Constant):
        return node.value is not None and node.value is not Ellipsis
    if isinstance(node, ast.BinOp):
        return isinstance(node.op, _ARITHMETIC)
    if isinstance(node, (ast.Tuple, ast.List, ast.Dict, ast.Set, ast.JoinedStr)):
        return True  # a display is an object, never None (`seed = (s1, s2)` of a nested stateless op)
    if isinstance(node, ast.Subscript):
        if not isinstance(node.value, ast.Name) or ctx.tree is None or _bound_in(fn, node.value.id):
            return False
        bound = only_bindings(ctx, ctx.tree, node.value.id)
        return bool(bound) and all(isinstance(b, (ast.Tuple, ast.List)) and b.elts
                                   and all(never_none(ctx, e, None, depth - 1) for e in b.elts) for b in bound)
    if isinstance(node, ast.Name):
        if fn is not None and _bound_in(fn, node.id):
            bound = only_bindings(ctx, fn, node.id)
            return bool(bound) and all(never_none(ctx, b, fn, depth - 1) for b in bound)
        if ctx.tree is None:
            return False
        bound = only_bindings(ctx, ctx.tree, node.id)
        return bool(bound) and all(never_none(ctx, b, None, depth - 1) for b in bound)
    return int_value(ctx, node, fn, {}, depth)


def _bound_in(fn: ast.AST | None, name: str) -> bool:
    """The function takes `name` as a parameter or stores it anywhere (a local, not the module's)."""
    if fn is None:
        return False
    if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        args = fn.args
        if any(a.arg == name for a in (*args.posonlyargs, *args.args, *args.kwonlyargs,
                                         *(a for a in (args.vararg, args.kwarg) if a))):
            return True
    return any(isinstance(sub, ast.Name) and sub.id == name and isinstance(sub.ctx, ast.Store) for sub in iwalk(fn))
