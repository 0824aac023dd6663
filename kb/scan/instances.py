"""Where kb/scan/rank.py reads an expression (a `Place`: the function, the class, the line) and what a
name holds there: the last assignment above the line, the binding a closure's free name reads in the
function around it, and the module instance a called name holds (`model = Net().to(device)`, a parameter
every call of the function passes one, a model a function of the file hands back, `self.<attr>`'s call).

Kept apart from the rank itself: these questions are about names and modules, not dimensions, and
none of them follows a rank (kb/scan/lossrank.py reads its places, and a loss module's construction, too).
"""

from __future__ import annotations

import ast
from typing import NamedTuple

from kb.scan import follow
from kb.scan.context import Context
from kb.scan.syntax import Element, handed_back, unpacked


class Place(NamedTuple):
    """Where an expression is read: the function (for its names), the class (for `self`), and the line
    (a name is what its last assignment above that line made: `x = self.conv(x); x = torch.flatten(x, 1)`)."""

    fn: ast.AST | None
    cls: ast.ClassDef | None
    line: int = 1 << 30
    # the functions around `fn`, outermost first: a closure reads the names it does not bind from them
    outer: tuple[ast.AST, ...] = ()


def enclosing(ctx: Context, place: Place, name: str) -> Place | None:
    """The place in the function around a closure where `name`, which the closure neither takes nor binds, is
    read (`def closure(): output = model(x)` inside `train(model, ...)`); None: not a closure's free name."""
    if not place.outer or not isinstance(place.fn, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        return None
    if name in parameters(place.fn) or name in ctx.assigned_in(place.fn) or unpacked(place.fn, name):
        return None
    return place._replace(fn=place.outer[-1], outer=place.outer[:-1])


def last_value(ctx: Context, place: Place, name: str) -> ast.expr | None:
    """The value of the last `name = value` above the place's line in its function (None: none)."""
    values = [*ctx.assigned_in(place.fn).get(name, []), *unpacked(place.fn, name)] if place.fn is not None else []
    above = [v for v in values if v.lineno < place.line]
    return max(above, key=lambda v: (v.lineno, v.col_offset)) if above else None


def attribute_call(ctx: Context, cls: ast.ClassDef, attr: str) -> ast.Call | None:
    """The call of `self.<attr> = <call>` of the class, under `.to(device)` (None: none, not a call, or
    several that differ: a class of the code base made with other arguments in each branch is one class)."""
    made = [unwrap(value) if value is not None else None for value, _ in ctx.self_assignments(cls).get(attr, ())]
    kinds = {None if m is None else ast.dump(m) if (ctx.dotted(m.func) or "").startswith("torch.") else
             ctx.dotted(m.func) or ast.dump(m.func) for m in made}
    return made[0] if len(kinds) == 1 and made[0] is not None else None


def instance(ctx: Context, func: ast.Name, place: Place, depth: int = 3) -> ast.Call | None:
    """What a called name holds: `model = Net()` (or `Net().to(device)`) in the function, or a parameter
    that every call of the function in this file passes such an instance (the caller's own parameter
    followed to its callers in turn, `depth` deep: `train(model)` handing it to `train_epoch(model)`)."""
    value = last_value(ctx, place, func.id)
    values = [value] if value is not None else []
    outer = enclosing(ctx, place, func.id) if value is None else None
    if outer is not None:  # a closure's free name: what the function around it holds
        return instance(ctx, func, outer, depth)
    if not values and isinstance(place.fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
        values = ctx.passed(place.fn, func.id)
        if not values and func.id not in parameters(place.fn):  # the module's global (`net = Net()` above)
            value = last_value(ctx, Place(ctx.tree, None), func.id)
            values = [value] if value is not None else []
    instances = []
    for v in values:
        built = _built_in(ctx, v) if depth > 0 else None
        if built is not None:  # `model, criterion = set_model(opt)`: what set_model's own name holds
            instances.append(instance(ctx, built[0], built[1], depth - 1))
            continue
        base = _handed_through(ctx, v) or _moved(v)  # `net = net.to(device)`: what the name held before
        if isinstance(base, ast.Name) and depth > 0:
            instances.append(instance(ctx, base, around(ctx, place, v.lineno), depth - 1))
        else:
            instances.append(unwrap(v))
    made = {ctx.dotted(m.func) or ast.dump(m.func) for m in instances if m is not None} if None not in instances else set()
    if len(made) != 1 or not values:
        return None
    return instances[0]


def _returned(ctx: Context, node: ast.AST) -> tuple[ast.FunctionDef | ast.AsyncFunctionDef, str, list[ast.expr]] | None:
    """The file's function a call calls (`model = build(opt)`, or the call `a, b = set_model(opt)` unpacks), the one
    name every return of its own (not a closure's) gives, at the Element's place of its tuple, and the values those
    returns give; None otherwise."""
    call = node.value if isinstance(node, Element) else node
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)):
        return None
    fn = ctx.defs.get(call.func.id)
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    returns = follow.returns(fn)
    picked = set()
    for value in returns:
        given: ast.expr | None = value
        if isinstance(node, Element):
            given = value.elts[node.index] if isinstance(value, ast.Tuple) and node.index < len(value.elts) and \
                not any(isinstance(e, ast.Starred) for e in value.elts) else None
        if not isinstance(given, ast.Name):
            return None
        picked.add(given.id)
    return (fn, picked.pop(), returns) if len(picked) == 1 else None


def _built_in(ctx: Context, node: ast.AST) -> tuple[ast.Name, Place] | None:
    """`model, criterion = set_model(opt)`: set_model's own name (assigned in it, not its parameter) that its one
    return gives, read at that return."""
    found = _returned(ctx, node)
    if found is None or len(found[2]) != 1 or found[1] in parameters(found[0]) or found[1] not in ctx.assigned_in(found[0]):
        return None
    fn, name, (value,) = found
    return ast.Name(name, lineno=value.lineno, col_offset=0), Place(fn, None, value.lineno)


def _handed_through(ctx: Context, node: ast.AST) -> ast.expr | None:
    """`acc, best, t = train(model, ...)`, where every return of the file's function `train` gives, at that place of
    its tuple, its parameter `model` (never rebound): what the call passes for it (the model handed back)."""
    found = _returned(ctx, node) if isinstance(node, Element) else None
    if found is None:
        return None
    fn, param, _ = found
    if param in ctx.assigned_in(fn) or unpacked(fn, param):
        return None
    call = node.value  # type: ignore[attr-defined]
    if any(isinstance(a, ast.Starred) for a in call.args):
        return None
    given = dict(zip([a.arg for a in (*fn.args.posonlyargs, *fn.args.args)], call.args))
    given.update({k.arg: k.value for k in call.keywords if k.arg})
    return given.get(param)


def parameters(fn: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> set[str]:
    """Every name the function takes (positional, keyword-only, `*args`, `**kwargs`)."""
    args = fn.args
    return {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs, *(x for x in (args.vararg, args.kwarg) if x))}


_SETUPS = frozenset({"setup_module", "prepare"})  # Lightning Fabric's and Accelerate's wrappers of one model


def _moved(node: ast.AST) -> ast.AST:
    """`x.to(device)` / `.cuda()` / `.eval()`: x; `model, opt = amp.initialize(model, opt)`, `model =
    fabric.setup_module(model)`, `model = accelerator.prepare(model)`: the model handed in (wrapped, it runs as is)."""
    node = handed_back(node)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _SETUPS and \
            len(node.args) == 1 and not node.keywords and isinstance(node.args[0], ast.Name):
        return node.args[0]
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("to", "cuda", "eval", "train", "float"):
        node = node.func.value
    return node


def around(ctx: Context, place: Place, line: int) -> Place:
    """The place of a line: in the place's function where it holds the line, else in the module-level
    function of the file around it, else at the module level."""
    fn = place.fn
    if fn is None or not getattr(fn, "lineno", 0) <= line <= (getattr(fn, "end_lineno", None) or 1 << 30):
        fn = next((d for d in ctx.defs.values() if d.lineno <= line <= (d.end_lineno or d.lineno)), ctx.tree)
    return Place(fn, place.cls, line)


def constructed(node: ast.AST) -> ast.Call | None:
    """The call that made a module, under the moves and modes chained on it (`nn.CrossEntropyLoss().cuda(gpu)`)."""
    return unwrap(node)


def unwrap(node: ast.AST) -> ast.Call | None:
    """`Net(...).to(device)` / `.cuda()` / `.eval()`: the `Net(...)` call."""
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("to", "cuda", "eval", "train", "float"):
        node = node.func.value
    return node if isinstance(node, ast.Call) else None


def aliased(ctx: Context, made: ast.Call, place: Place) -> ast.Call:
    """`Net = GCNII; model = Net(...)`: the call as made by the class the name is bound to, where every
    assignment of the name in the function around the call (else at module level) binds the same class name."""
    if not isinstance(made.func, ast.Name) or made.func.id in ctx.class_defs() or ctx.dotted(made.func):
        return made
    fn = around(ctx, place, made.lineno).fn
    values = (ctx.assigned_in(fn).get(made.func.id) if fn is not None else None) or \
        (ctx.assigned_in(ctx.tree).get(made.func.id) if ctx.tree is not None else None) or []
    bound = {ast.dump(v) for v in values}
    if len(bound) != 1 or not isinstance(values[0], (ast.Name, ast.Attribute)):
        return made
    return ast.Call(values[0], made.args, made.keywords, lineno=made.lineno, col_offset=made.col_offset)
