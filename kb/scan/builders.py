"""Models made by a builder function of the code base, for the rank a model's `forward` returns
(kb/scan/rank.py): `net = get_network(args)` (a function of another file that imports one model module
per branch and returns its builder's result), `vgg16_bn()` (`return VGG(make_layers(...))`),
`models_vit.__dict__[args.model](...)` (a name looked up among a module's builders), or `MODELS[name]()` of a
registry `{name: builder}`.

A builder counts only where every return is visible: a class construction, a call of another builder
(followed a few calls deep), or a name every assignment of which in the function is one of those (its
moves, `net = net.cuda()`, aside). Anything else (a return of a parameter, of an unknown call, no return)
leaves the model unknown, so the loss on it keeps its `possible` finding.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import TypeVar

from kb.scan import follow, modelclass
from kb.scan.context import Context

_DEPTH = 4  # builders calling builders (`resnet50()` returning `ResNet(Bottleneck, ...)`)
_MOVES = frozenset({"to", "cuda", "cpu", "eval", "train", "float", "half", "double"})
_R = TypeVar("_R")


def agreed(ctx: Context, made: ast.Call, forward: Callable[[Context, ast.ClassDef, int, int | None], _R], depth: int,
           element: int | None) -> _R | None:
    """What `forward` gives (one call deeper) for every class the builder call `made` can return, where all agree
    (else None)."""
    classes = classes_made(ctx, made.func, None, _DEPTH, made)
    found = {forward(c, cls, depth - 1, element) for c, cls in classes} if classes else set()
    return found.pop() if len(found) == 1 else None


def classes_made(ctx: Context, func: ast.AST, within: ast.AST | None, depth: int,
                 call: ast.Call | None = None) -> list[tuple[Context, ast.ClassDef]] | None:
    """The classes a call of `func` makes: the class it names, or every class the builder function it names
    (or every builder its `module.__dict__[name]` can pick, among those that take the arguments of `call`)
    returns; None where one is not shown."""
    if depth <= 0:
        return None
    if isinstance(func, ast.Subscript):  # `module.__dict__[name]`, or a registry's entries (`{name: builder}`)
        picked = modelclass.module_definitions(ctx, func.value)
        if picked is not None and call is not None:
            picked = [(reading, node) for reading, node in picked if takes(node, call)]
        table = modelclass.registry(ctx, func.value) if picked is None else None
        if table is not None:
            made = [classes_made(table[0], entry, None, depth - 1) for entry in table[1]]
            return None if any(m is None for m in made) else [c for m in made if m is not None for c in m]
    else:
        found = modelclass.definition(ctx, func, within)
        picked = [found] if found is not None else None
    if not picked:
        return None
    out: list[tuple[Context, ast.ClassDef]] = []
    for reading, node in picked:
        if isinstance(node, ast.ClassDef):
            out.append((reading, node))
            continue
        returned = _returned(reading, node, depth) if isinstance(node, ast.FunctionDef) else None
        if returned is None:
            return None
        out += returned
    return out


def _returned(ctx: Context, fn: ast.FunctionDef, depth: int) -> list[tuple[Context, ast.ClassDef]] | None:
    """The classes every return of the builder `fn` makes (None: a return that is not shown to make one)."""
    returns = [n.value for n in follow.own_statements(fn) if isinstance(n, ast.Return)]
    if not returns or any(r is None for r in returns):
        return None  # (a bare `return`: no model)
    out: list[tuple[Context, ast.ClassDef]] = []
    for value in filter(None, returns):
        if isinstance(value, ast.Name):
            made = [v for v in ctx.assigned_in(fn).get(value.id, []) if not _moved(v, value.id)]
        else:
            made = [value]
        if not made:
            return None
        for v in made:
            call = _unmoved(v)
            classes = classes_made(ctx, call.func, fn, depth - 1) if call is not None else None
            if classes is None:
                return None
            out += classes
    return out


def _moved(value: ast.expr, name: str) -> bool:
    """`net = net.cuda()` / `net.to(device)`: the name's own model moved, no new one."""
    return isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in _MOVES and \
        isinstance(value.func.value, ast.Name) and value.func.value.id == name


def _unmoved(value: ast.expr) -> ast.Call | None:
    """`Net(...).cuda()`: the `Net(...)` call (None: not a call)."""
    while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in _MOVES:
        value = value.func.value
    return value if isinstance(value, ast.Call) else None


def takes(node: ast.AST, call: ast.Call) -> bool:
    """Whether `call`'s arguments bind to the signature of the function or class `node` (its `__init__`; a class
    without one of its own, or a call with `*args` / `**kwargs`, may take anything): a name picked from a
    module's `__dict__` that does not take them would raise on that call (`conv3x3(output_dim=1000)`), so it
    is not the one the call makes."""
    if isinstance(node, ast.ClassDef):
        init = next((n for n in node.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"), None)
        if init is None:
            return True
        args, skip = init.args, 1
    elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        args, skip = node.args, 0
    else:
        return True
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return True
    positional = [a.arg for a in (*args.posonlyargs, *args.args)][skip:]
    if len(call.args) > len(positional) and args.vararg is None:
        return False
    named = {a.arg for a in args.args[max(0, skip - len(args.posonlyargs)):]} | {a.arg for a in args.kwonlyargs}
    given = set(positional[:len(call.args)])
    for name in (k.arg for k in call.keywords if k.arg is not None):
        if name in given or (name not in named and args.kwarg is None):
            return False
        given.add(name)
    required = positional[:len(positional) - len(args.defaults)] + \
        [a.arg for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is None]
    return all(name in given for name in required)
