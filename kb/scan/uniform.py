"""Values whose every element is the same, for the code rules (kb/scan/resolvers.py): ones an accumulating op
adds (counts, exact in any order of addition), a constant an all-reduce sums, a fill a scatter writes from every
duplicate index alike.

Apart from kb/scan/values.py, which reads what other values a call shows (dtypes, whole writes).
"""

from __future__ import annotations

import ast

from kb.scan.context import Context
from kb.scan.nodes import call_argument
from kb.scan.syntax import parameter_defaults
from kb.scan.values import CONVERSIONS

# Where an accumulating op takes the values it adds, by the op's last name (aliases and TF 1 names alike):
# (keyword, position in a function call, position in a method call).
_ACCUMULATED = {
    "segment_sum": ("data", 0, 0), "segment_prod": ("data", 0, 0), "unsorted_segment_sum": ("data", 0, 0),
    "scatter_nd": ("updates", 1, 1), "index_add": ("source", 3, 2), "index_add_": ("source", 3, 2),
    "scatter_add": ("src", 3, 2), "scatter_add_": ("src", 3, 2),
}
_ONES = frozenset({"ones_like", "ones"})
_ONES_OWNERS = frozenset({"torch", "jax.numpy", "tf", "numpy"})


def adds_ones(ctx: Context, op: str, node: ast.Call) -> bool:
    """The values an accumulating op adds (`_ACCUMULATED`) are ones: `ones_like(x)`, `ones(...)`, a boolean
    mask cast to numbers, or a name only so assigned in the function."""
    where = _ACCUMULATED.get(op.rpartition(".")[2])
    if where is None:
        return False
    keyword, function_at, method_at = where
    at = method_at if isinstance(node.func, ast.Attribute) and ctx.dotted(node.func) is None else function_at
    added = call_argument(node, (keyword,), at)
    return added is not None and _ones(ctx, added, ctx.fn_nodes[-1] if ctx.fn_nodes else ctx.tree, 3)


def sums_constant(ctx: Context, node: ast.Call) -> bool:
    """A collective sum's operand (`psum(x, axis)`, `pmean(x, axis)`: the first argument or `x=`) is an int
    literal (`psum(1, axis)`, the shard count) or ones (`jnp.ones(n)`, a name only so assigned): every rank
    adds the same small integers, exact in any order and on any path the reduction takes."""
    added = call_argument(node, ("x",), 0)
    if isinstance(added, ast.Constant) and type(added.value) is int:
        return True
    return added is not None and _ones(ctx, added, ctx.fn_nodes[-1] if ctx.fn_nodes else ctx.tree, 3, node)


_CAST_INTS = frozenset({"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"})


def _dtype_name(node: ast.AST) -> str:
    """`jnp.int32`, `np.int32`, `"int32"`: the dtype's last name."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return ast.unparse(node).rpartition(".")[2] if isinstance(node, (ast.Name, ast.Attribute)) else ""


def _ones(ctx: Context, node: ast.AST, fn: ast.AST | None, depth: int, skip: ast.AST | None = None) -> bool:
    """Ones, a boolean mask, or integers cast so (`.astype(jnp.int32)`: brax's step counts): values whose sum is
    exact in any order. `skip`: the collective itself, when it rebinds the name it sums (`n = psum(n, axis)`)."""
    if depth <= 0:
        return False
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "astype" and node.args \
            and _dtype_name(node.args[0]) in _CAST_INTS:
        return True
    if isinstance(node, ast.Call):
        name = ctx.dotted(node.func) or ""
        owner, _, last = name.rpartition(".")
        if last in _ONES and owner in _ONES_OWNERS:
            return True
        if not name and isinstance(node.func, ast.Attribute) and node.func.attr in CONVERSIONS:
            return _ones(ctx, node.func.value, fn, depth - 1, skip)  # `ones_like(i).to(dtype=x.dtype)`: ones still
    if fn is not None and ctx.is_mask(node, fn):
        return True
    if isinstance(node, ast.Name) and fn is not None:
        values = [v for v in ctx.assigned_in(fn).get(node.id, []) if v is not skip]
        return bool(values) and all(_ones(ctx, v, fn, depth - 1) for v in values)
    return False


_FILLS = frozenset({"zeros", "ones", "zeros_like", "ones_like", "full", "full_like"})


def one_value(ctx: Context, node: ast.AST | None, fn: ast.AST | None, depth: int = 3) -> bool:
    """Every element holds the same value: a torch factory that fills (`zeros_like(i)`, `ones(n)`, `full(s, c)` with a
    literal `c`), also through conversions (`.to(dtype=x.dtype)`, `.float()`), or a name only so assigned in `fn`."""
    if node is None or depth <= 0:
        return False
    if isinstance(node, ast.Name) and fn is not None:
        assigned = ctx.assigned_in(fn).get(node.id, [])
        return bool(assigned) and all(one_value(ctx, v, fn, depth - 1) for v in assigned)
    if not isinstance(node, ast.Call):
        return False
    name = ctx.dotted(node.func) or ""
    owner, _, last = name.rpartition(".")
    if owner == "torch" and last in _FILLS:
        if last.startswith("full"):
            fill = next((k.value for k in node.keywords if k.arg == "fill_value"), node.args[1] if len(node.args) > 1 else None)
            return isinstance(fill, ast.Constant) and isinstance(fill.value, (int, float, bool))
        return True
    if not name and isinstance(node.func, ast.Attribute) and node.func.attr in CONVERSIONS:
        return one_value(ctx, node.func.value, fn, depth)
    return False


_NUMBER_TYPES = frozenset({"int", "float", "bool"})


def python_number(ctx: Context, node: ast.AST | None, fn: ast.AST | None, depth: int = 4) -> bool:
    """A Python number, not a tensor: a numeric literal, arithmetic of numbers, a parameter annotated `int`,
    `float` or `bool` or whose default is a numeric literal (timm's `one_hot(x, n, on_value=1.)`), or a name every
    assignment of which in `fn` is one (`on_val = 1.0 - smoothing + off_val`)."""
    if node is None or depth <= 0:
        return False
    if isinstance(node, ast.Constant):
        return isinstance(node.value, (int, float))
    if isinstance(node, ast.UnaryOp):
        return python_number(ctx, node.operand, fn, depth)
    if isinstance(node, ast.BinOp):
        return python_number(ctx, node.left, fn, depth) and python_number(ctx, node.right, fn, depth)
    if not isinstance(node, ast.Name) or fn is None:
        return False
    if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
        args = fn.args
        defaults = {name: default for name, default, _ in parameter_defaults(args, False)}
        for arg in (*args.posonlyargs, *args.args, *args.kwonlyargs):
            if arg.arg == node.id:
                if arg.annotation is not None:
                    return isinstance(arg.annotation, ast.Name) and arg.annotation.id in _NUMBER_TYPES
                default = defaults.get(arg.arg)
                return isinstance(default, ast.Constant) and isinstance(default.value, (int, float)) \
                    and not isinstance(default.value, bool)
    assigned = ctx.assigned_in(fn).get(node.id, [])
    return bool(assigned) and all(python_number(ctx, v, fn, depth - 1) for v in assigned)
