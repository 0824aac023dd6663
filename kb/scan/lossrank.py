"""A loss module's input rank read where the module is called, not where it is made: `criterion =
nn.CrossEntropyLoss()` takes the rank of `criterion(out, y)`'s `out` in the function (and in the functions
of the file it is handed to), `self.criterion`'s in the class's methods, a module-level one's wherever the
global is called; `nn.NLLLoss()(out, y)` the rank of its one call. The walk (kb/scan/visitor.py) adds the
rank so read to the module's recorded construction (`used`, `held`, `made_and_called`).

Kept apart from kb/scan/rank.py, which reads the rank of one expression: this module finds the calls
whose first argument is read, and leaves out those with more arguments than the module takes.
"""

from __future__ import annotations

import ast

from kb.scan import follow, instances, rank
from kb.scan.context import Context
from kb.scan.instances import Place, constructed
from kb.scan.nodes import iwalk
from kb.scan.syntax import Call, self_attribute, statements_in

# How many arguments a loss module's forward takes (input, target): a call with more is another module's.
_ARITY = {"torch.nn.NLLLoss": 2, "torch.nn.CrossEntropyLoss": 2}


def at_uses(ctx: Context, target: ast.AST, op: str | None = None) -> rank.Rank:
    """The rank of the first argument wherever a module made here is called: `criterion(out, y)` in the
    same function (and in the functions of the file it is handed to, as their parameter),
    `self.criterion(out, y)` in the class's methods, or, for a module made at module level, in the module
    and every function of the file that does not bind the name itself; unknown unless every call agrees.
    A call with more arguments than the module `op` takes is left out: the name then holds another module
    (a CTC loss in the other branch), since this one would raise."""
    uses: list[tuple[ast.Call, Place]] = []
    cls = ctx.class_nodes[-1] if ctx.class_nodes else None
    if isinstance(target, ast.Name) and ctx.fn_nodes:
        uses = _function_uses(ctx, ctx.fn_nodes[-1], cls, target.id, 3, tuple(ctx.fn_nodes[:-1]))
        if cls is None and len(ctx.fn_nodes) == 1:
            uses += _returned_uses(ctx, ctx.fn_nodes[-1], target.id)
    elif isinstance(target, ast.Name) and cls is None:
        uses = _module_uses(ctx, target.id)
    elif self_attribute(target) and cls is not None:
        for fn in (n for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))):
            uses += [(c, Place(fn, cls, c.lineno)) for c in iwalk(fn)
                     if isinstance(c, ast.Call) and self_attribute(c.func, target.attr)]
    most = _ARITY.get(op or "")
    if most is not None:
        uses = [(c, place) for c, place in uses if len(c.args) + len(c.keywords) <= most]
    if not uses or any(not c.args for c, _ in uses):
        return rank.UNKNOWN
    found = {rank.at_place(ctx, c.args[0], place, op, c) for c, place in uses}
    return found.pop() if len(found) == 1 else rank.UNKNOWN


def called(ctx: Context, call: ast.Call, op: str) -> rank.Rank:
    """The rank of the input of one call of a module made where it is called (`nn.NLLLoss()(out, y)`); a call
    with more arguments than the module takes is another module's (unknown)."""
    most = _ARITY.get(op)
    if not call.args or (most is not None and len(call.args) + len(call.keywords) > most):
        return rank.UNKNOWN
    return rank.of(ctx, call.args[0], op, call)


def _calls_in(fn: ast.AST, outer: tuple[ast.AST, ...]) -> list[tuple[ast.Call, ast.AST, tuple[ast.AST, ...]]]:
    """The calls in `fn`, each with the innermost function it is in (`fn`, or a closure defined in it) and the
    functions around that one."""
    out: list[tuple[ast.Call, ast.AST, tuple[ast.AST, ...]]] = []
    stack: list[tuple[ast.AST, ast.AST, tuple[ast.AST, ...]]] = [(fn, fn, outer)]
    while stack:
        node, inner, around = stack.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                stack.append((child, child, (*around, inner)))
                continue
            if isinstance(child, ast.Call):
                out.append((child, inner, around))
            stack.append((child, inner, around))
    return out


def _function_uses(ctx: Context, fn: ast.AST, cls: ast.ClassDef | None, name: str,
                   depth: int, outer_of: tuple[ast.AST, ...] = ()) -> list[tuple[ast.Call, Place]]:
    """The calls of `name` in `fn`, and, where `fn` hands the name to a module-level function of the file
    (`validation(model, criterion, ...)`), the calls of that function's parameter, followed `depth` deep."""
    uses: list[tuple[ast.Call, Place]] = []
    for c, inner, outer in _calls_in(fn, outer_of):
        if not isinstance(c.func, ast.Name):
            continue
        if c.func.id == name:
            uses.append((c, Place(inner, cls, c.lineno, outer)))
            continue
        if depth > 0 and ctx.defs.get(c.func.id) is not fn:
            uses += _handed(ctx, c, name, depth)
    return uses


def _handed(ctx: Context, c: ast.Call, name: str, depth: int) -> list[tuple[ast.Call, Place]]:
    """Where the call `c` hands `name` to a module-level function of the file, the calls of that parameter."""
    callee = ctx.defs.get(c.func.id) if isinstance(c.func, ast.Name) else None
    if not isinstance(callee, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return []
    params = [a.arg for a in (*callee.args.posonlyargs, *callee.args.args)]
    handed = [params[k] for k, a in enumerate(c.args[:len(params)]) if isinstance(a, ast.Name) and a.id == name]
    handed += [k.arg for k in c.keywords if k.arg and isinstance(k.value, ast.Name) and k.value.id == name]
    return [use for param in handed for use in _function_uses(ctx, callee, None, param, depth - 1)]


def _returned_uses(ctx: Context, fn: ast.AST, name: str) -> list[tuple[ast.Call, Place]]:
    """Where the file's function `fn` hands the module back (`return model, criterion`, at one place of the tuple in
    every return), its calls wherever a caller in the file binds what it returns (`model, criterion =
    set_model(opt)`), followed as that caller's own name."""
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or ctx.tree is None or ctx.defs.get(fn.name) is not fn:
        return []
    places = {_returned_at(value, name) for value in follow.returns(fn)}  # (its own returns: not a closure's)
    if len(places) != 1 or -1 in places:
        return []
    index = places.pop()
    uses: list[tuple[ast.Call, Place]] = []
    for stmt in statements_in(ctx.tree):
        if not (type(stmt) is ast.Assign and len(stmt.targets) == 1 and isinstance(stmt.value, ast.Call)
                and isinstance(stmt.value.func, ast.Name) and stmt.value.func.id == fn.name):
            continue
        bound = _bound_at(stmt.targets[0], index)
        if bound is None:
            continue
        caller = instances.around(ctx, Place(None, None), stmt.lineno).fn
        if caller is ctx.tree:
            uses += _module_uses(ctx, bound)
        elif caller is not None and caller is not fn:
            uses += _function_uses(ctx, caller, None, bound, 2)
    return uses


def _returned_at(node: ast.AST | None, name: str) -> int | None:
    """Where a returned value holds `name`: None (the value is the name), k (the k-th of a tuple), -1 (elsewhere,
    or at several places)."""
    if isinstance(node, ast.Name) and node.id == name:
        return None
    if isinstance(node, ast.Tuple) and not any(isinstance(e, ast.Starred) for e in node.elts):
        found = [k for k, e in enumerate(node.elts) if isinstance(e, ast.Name) and e.id == name]
        return found[0] if len(found) == 1 else -1
    return -1


def _bound_at(target: ast.AST, index: int | None) -> str | None:
    """The name an assignment target binds to the returned value (`index` None) or to its `index`-th element."""
    if index is None:
        return target.id if isinstance(target, ast.Name) else None
    elts = target.elts if isinstance(target, ast.Tuple) and not any(isinstance(e, ast.Starred) for e in target.elts) else []
    found = elts[index] if index < len(elts) else None
    return found.id if isinstance(found, ast.Name) else None


def _module_uses(ctx: Context, name: str) -> list[tuple[ast.Call, Place]]:
    """The calls of a module-level name, each read where it is: at module level, and in each function of
    the file that neither takes nor assigns a name of its own so called (there the name is the global)."""
    uses: list[tuple[ast.Call, Place]] = []
    if ctx.tree is None:
        return uses
    stack: list[tuple[ast.AST, ast.AST]] = [(ctx.tree, ctx.tree)]  # (node, the function or module it is read in)
    while stack:
        node, fn = stack.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                params = {a.arg for a in (*child.args.posonlyargs, *child.args.args, *child.args.kwonlyargs,
                                          *(x for x in (child.args.vararg, child.args.kwarg) if x))}
                if name in params or (not isinstance(child, ast.Lambda) and name in ctx.assigned_in(child)):
                    continue  # its own binding of the name: not the module's object
                stack.append((child, child if not isinstance(child, ast.Lambda) else fn))
                continue
            if isinstance(child, ast.Call) and isinstance(child.func, ast.Name) and child.func.id == name:
                uses.append((child, Place(fn, None, child.lineno)))
            elif isinstance(child, ast.Call):  # `train(model, criterion)` in the main block or a function reading the global
                uses += _handed(ctx, child, name, 3)
            stack.append((child, fn))
    return uses


def used(ctx: Context, calls: list[Call], shape_ops: frozenset[str], target: ast.AST, value: ast.Call, first: int) -> None:
    """`criterion = nn.CrossEntropyLoss()` (or `self.criterion = ...`): the rank of the input it is called
    on, where every call of it in the function (or the class) shows the same one."""
    loss = _loss_made(ctx, value, shape_ops)  # `nn.CrossEntropyLoss().to(device)`: the module's own construction
    if loss is not None:
        made, name = loss
        _mark(calls, range(first, len(calls)), name, at_uses(ctx, target, name), made.lineno)


def held(ctx: Context, calls: list[Call], shape_ops: frozenset[str], target: ast.AST, value: ast.expr, first: int) -> None:
    """`criterion = F.nll_loss` (a loss function held in a name, here recorded as a reference): the rank of the
    input it is called on, where every call of the name shows the same one, as an assigned module takes."""
    if not (isinstance(target, ast.Name) and isinstance(value, (ast.Name, ast.Attribute))) or len(calls) == first:
        return
    name = ctx.dotted(value)
    if name not in shape_ops or name.rsplit(".", 1)[-1][:1].isupper():
        return
    _mark(calls, range(first, len(calls)), name, at_uses(ctx, target, name), value.lineno, value.col_offset + 1)


def made_and_called(ctx: Context, calls: list[Call], shape_ops: frozenset[str], node: ast.Call) -> None:
    """`nn.CrossEntropyLoss()(output, target)`: a module made and called at once takes the rank of the input
    of that call, as an assigned one takes its calls' (`used`)."""
    loss = _loss_made(ctx, node.func, shape_ops)
    if loss is not None:
        made, name = loss
        _mark(calls, range(len(calls) - 1, -1, -1), name, called(ctx, node, name), made.lineno, made.col_offset + 1,
              once=True)


def _loss_made(ctx: Context, value: ast.expr, shape_ops: frozenset[str]) -> tuple[ast.Call, str] | None:
    """The construction `value` makes of a loss whose records read its input's rank, and the loss's name."""
    made = constructed(value)
    name = ctx.dotted(made.func) if made is not None else None
    return (made, name) if made is not None and name in shape_ops else None


def _mark(calls: list[Call], order: range, name: str, shown: rank.Rank, line: int, col: int | None = None,
          once: bool = False) -> None:
    """Add the rank `shown` (nothing when unknown) to the recorded calls of `name` at `line` (and `col`), visited in `order`: the
    three ways a loss's module or function is met end alike once its input's rank is known."""
    if shown == rank.UNKNOWN:
        return
    for k in order:
        call = calls[k]
        if call.op == name and call.line == line and (col is None or call.col == col):
            calls[k] = call._replace(extra=call.extra + rank.facts(shown))
            if once:
                return
