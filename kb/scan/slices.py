"""Whether a value may be a tf.IndexedSlices, for `tf.convert_to_tensor` (kb/scan/resolvers.py, dense-input).

A tf.IndexedSlices is what TensorFlow hands back as the gradient of a gather or an embedding lookup: it is
made by the gradient APIs (`tf.gradients`, `GradientTape.gradient`, an optimizer's `compute_gradients` /
`get_gradients`, the `grads_and_vars` they return) or explicitly (`tf.IndexedSlices(...)`). Every other
TensorFlow op returns a dense tensor, and Python and NumPy values are dense, so a value only becomes one by
being, or being passed through from, one of those. This module follows a value back through the function
(its assignments, `for g, v in grads_and_vars`, the returns of a function of the file, what the file's calls
pass for a parameter) and answers True where it may come from one, or where it is not visible and named after
gradients (`grad`, `grads`, `gradient`); False where every origin is visible and none is a gradient.
"""

from __future__ import annotations

import ast
import builtins

from kb.scan.context import Context
from kb.scan.nodes import iwalk
from kb.scan.syntax import statements_in

# Last names of the calls that return gradients (a tf.IndexedSlices for a gathered or embedded variable).
_GRADIENT_CALLS = frozenset({"gradients", "gradient", "compute_gradients", "get_gradients", "IndexedSlices",
                             "gradients_v2", "jacobian", "batch_jacobian"})
_DENSE_OWNERS = frozenset({"numpy", "math", "random", "len", "int", "float", "bool", "str", "range", "sum",
                           "max", "min", "abs", "round", "isinstance", "enumerate"})


def _gradient_named(name: str) -> bool:
    """A name that speaks of gradients (`grads`, `grad_and_var`, `gradients`, `g_and_v`)."""
    low = name.lower()
    return "grad" in low or "slices" in low or low in ("g", "gv", "gvs", "g_and_v")


def may_be_indexed_slices(ctx: Context, node: ast.AST | None, fn: ast.AST | None, depth: int = 16,
                          seen: frozenset[str] = frozenset()) -> bool:
    """The value may be a tf.IndexedSlices: it comes from a gradient call or from a value that does, or it is
    not visible and named after gradients. Arithmetic, comparisons and TensorFlow ops on values that carry no
    gradient give dense tensors; an op given a possible tf.IndexedSlices may hand it on (`tf.clip_by_norm`)."""
    if node is None:
        return False
    if depth <= 0:
        return True  # followed too far: not known
    again = depth - 1
    if isinstance(node, (ast.Constant, ast.JoinedStr, ast.Compare, ast.Lambda)):
        return False
    if isinstance(node, ast.BinOp):
        return any(may_be_indexed_slices(ctx, v, fn, again, seen) for v in (node.left, node.right))
    if isinstance(node, ast.UnaryOp):
        return may_be_indexed_slices(ctx, node.operand, fn, again, seen)
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return any(may_be_indexed_slices(ctx, e, fn, again, seen) for e in node.elts)
    if isinstance(node, ast.Dict):
        return any(may_be_indexed_slices(ctx, v, fn, again, seen) for v in node.values)
    if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp)):
        return may_be_indexed_slices(ctx, node.elt, fn, again, seen) \
            or any(may_be_indexed_slices(ctx, g.iter, fn, again, seen) for g in node.generators)
    if isinstance(node, ast.DictComp):
        return may_be_indexed_slices(ctx, node.value, fn, again, seen) \
            or any(may_be_indexed_slices(ctx, g.iter, fn, again, seen) for g in node.generators)
    if isinstance(node, ast.BoolOp):
        return any(may_be_indexed_slices(ctx, v, fn, again, seen) for v in node.values)
    if isinstance(node, ast.IfExp):
        return any(may_be_indexed_slices(ctx, v, fn, again, seen) for v in (node.body, node.orelse))
    if isinstance(node, (ast.Subscript, ast.Starred)):
        return may_be_indexed_slices(ctx, node.value, fn, again, seen)
    if isinstance(node, ast.Call):
        return _call(ctx, node, fn, again, seen)
    if isinstance(node, ast.Attribute):
        if _gradient_named(node.attr):
            return True
        if isinstance(node.value, ast.Name) and node.value.id == "self" and ctx.class_nodes:
            assigned = ctx.self_assignments(ctx.class_nodes[-1]).get(node.attr, [])
            return any(value is None or may_be_indexed_slices(ctx, value, None, again, seen) for value, _ in assigned)
        return False  # an attribute of a config, module or layer (`hp.learning_rate`): not a gradient
    if isinstance(node, ast.Name):
        return _name(ctx, node.id, fn, again, seen)
    return True  # not known


def _call(ctx: Context, node: ast.Call, fn: ast.AST | None, depth: int, seen: frozenset[str]) -> bool:
    """A call returns a gradient when it is a gradient API, a function of the file that returns one, or an op
    handed a possible tf.IndexedSlices (it may pass it through)."""
    func = node.func
    last = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
    if last is not None and (last in _GRADIENT_CALLS or _gradient_named(last)):
        return True
    name = ctx.written(func)
    if name is not None and name.split(".")[0] in _DENSE_OWNERS or isinstance(func, ast.Name) and func.id in _DENSE_OWNERS:
        return False
    if isinstance(func, ast.Name) and func.id in ctx.defs:
        callee = ctx.defs[func.id]
        returns = [r.value for r in iwalk(callee) if isinstance(r, ast.Return)]
        if func.id not in seen and any(may_be_indexed_slices(ctx, r, callee, depth, seen | {func.id}) for r in returns):
            return True
    elif isinstance(func, ast.Name) and name is None and not hasattr(builtins, func.id):
        return True  # a callable the code hands in (`pair()`): what it returns is not known
    given = [*node.args, *(k.value for k in node.keywords)]
    if isinstance(func, ast.Attribute) and name is None:
        given.append(func.value)  # `grads.copy()`, `strategy.reduce(...)`: the receiver may be handed on
    return any(may_be_indexed_slices(ctx, a, fn, depth, seen) for a in given)


def _name(ctx: Context, name: str, fn: ast.AST | None, depth: int, seen: frozenset[str]) -> bool:
    """A name holds a gradient when it is named after one and not visibly bound, or when one of its bindings in
    the function may hold one; a parameter, when a call of the file passes one or none is visible."""
    if name in seen:
        return False
    if fn is None:
        return _gradient_named(name)
    bound = _bindings(fn).get(name)
    if bound is None:
        return _gradient_named(name)  # a global or a closure's name: not followed
    seen = seen | {name}
    for value in bound:
        if value is _PARAMETER:
            passed = ctx.passed(fn, name) if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) \
                and ctx.defs.get(fn.name) is fn else []
            if not passed:
                if _gradient_named(name) or _gradient_named(getattr(fn, "name", "")):
                    return True
                continue
            for given in passed:
                caller = next((d for d in ctx.defs.values()
                               if d.lineno <= getattr(given, "lineno", 0) <= (d.end_lineno or d.lineno)), None)
                if may_be_indexed_slices(ctx, given, caller, depth, frozenset()):
                    return True
        elif value is None:
            if _gradient_named(name):
                return True
        elif may_be_indexed_slices(ctx, value, fn, depth, seen):
            return True
    return False


_PARAMETER = ast.Pass()  # the marker of a parameter's binding: what callers pass


def _bindings(fn: ast.AST) -> dict[str, list[ast.expr | ast.Pass | None]]:
    """Name -> what each of its bindings in `fn` holds (None: not known; `_PARAMETER`: what callers pass).
    `a, b = v` and `for a, b in v` give each name an item of v (`for g, v in grads_and_vars`: an item of it)."""
    found: dict[str, list[ast.expr | ast.Pass | None]] = {}
    if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        for arg in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs, *(a for a in (fn.args.vararg, fn.args.kwarg) if a)):
            found[arg.arg] = [_PARAMETER]

    def bind(target: ast.AST, value: ast.expr | None) -> None:
        if isinstance(target, ast.Name):
            found.setdefault(target.id, []).append(value)
        elif isinstance(target, (ast.Tuple, ast.List, ast.Starred)):
            for element in (target.elts if not isinstance(target, ast.Starred) else [target.value]):
                bind(element, ast.Subscript(value=value, slice=ast.Constant(0)) if value is not None else None)

    for stmt in statements_in(fn):
        if isinstance(stmt, ast.Assign):
            for target in stmt.targets:
                bind(target, stmt.value)
        elif isinstance(stmt, ast.AnnAssign):
            bind(stmt.target, stmt.value)
        elif isinstance(stmt, ast.AugAssign):
            bind(stmt.target, stmt.value)
        elif isinstance(stmt, (ast.For, ast.AsyncFor)):
            bind(stmt.target, ast.Subscript(value=stmt.iter, slice=ast.Constant(0)))
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            for item in stmt.items:
                if item.optional_vars is not None:
                    bind(item.optional_vars, item.context_expr)
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.setdefault(stmt.name, []).append(ast.Constant(None))
    for sub in iwalk(fn):
        if isinstance(sub, ast.NamedExpr):
            bind(sub.target, sub.value)
        elif isinstance(sub, (ast.Import, ast.ImportFrom)):
            for alias in sub.names:
                found.setdefault((alias.asname or alias.name).split(".")[0], []).append(ast.Constant(None))
        elif isinstance(sub, ast.comprehension):
            bind(sub.target, ast.Subscript(value=sub.iter, slice=ast.Constant(0)))
    return found
