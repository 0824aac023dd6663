"""What values the code shows at a call, for the code rules (kb/scan/resolvers.py): memory an in-place op
fills whole before it is read, accumulated values that are ones (counts), a seed attribute that is an int.

Kept apart from the rules' table so that each reads in a few lines: the rule says what it concludes, this
module how the code shows it.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from kb.scan.context import Context

# In-place methods that write every element of their tensor without reading it (add_, mul_ read it first).
WHOLE_WRITES = frozenset({"normal_", "uniform_", "bernoulli_", "fill_", "zero_", "copy_", "random_", "exponential_",
                          "geometric_", "cauchy_", "log_normal_"})

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
    added = next((k.value for k in node.keywords if k.arg == keyword), None)
    if added is None and len(node.args) > at and not any(isinstance(a, ast.Starred) for a in node.args[:at + 1]):
        added = node.args[at]
    return added is not None and _ones(ctx, added, ctx.fn_nodes[-1] if ctx.fn_nodes else ctx.tree, 3)


def _ones(ctx: Context, node: ast.AST, fn: ast.AST | None, depth: int) -> bool:
    if depth <= 0:
        return False
    if isinstance(node, ast.Call):
        name = ctx.dotted(node.func) or ""
        owner, _, last = name.rpartition(".")
        if last in _ONES and owner in _ONES_OWNERS:
            return True
    if fn is not None and ctx.is_mask(node, fn):
        return True
    if isinstance(node, ast.Name) and fn is not None:
        values = ctx.assigned_in(fn).get(node.id, [])
        return bool(values) and all(_ones(ctx, v, fn, depth - 1) for v in values)
    return False


def int_attribute(ctx: Context, cls: ast.ClassDef, attr: str) -> bool:
    """Every `self.<attr> = v` of the class is an int literal, or a parameter of its method whose default is one."""
    made = ctx.self_assignments(cls).get(attr, [])
    if not made:
        return False
    for value, defaults in made:
        if isinstance(value, ast.Name) and value.id in defaults:
            value = defaults[value.id]
        if not (isinstance(value, ast.Constant) and type(value.value) is int):
            return False
    return True


def filled_next(node: ast.Call, fn: ast.AST) -> bool:
    """`mask = torch.empty(...)` whose very next statement fills it whole in place (`mask.bernoulli_(p)`,
    `buf.zero_()`, `out.copy_(src)`): nothing reads it before every element is written."""
    for name, after in _assigned_then(node, fn):
        call = after.value if isinstance(after, ast.Expr) else None
        return isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) \
            and call.func.attr in WHOLE_WRITES and isinstance(call.func.value, ast.Name) and call.func.value.id == name \
            and not any(isinstance(n, ast.Name) and n.id == name
                        for a in (*call.args, *(kw.value for kw in call.keywords)) for n in ast.walk(a))
    return False


def _assigned_then(node: ast.Call, fn: ast.AST) -> Iterator[tuple[str, ast.stmt]]:
    """(name, the next statement) for `name = <node>` followed by a statement in the same block of `fn`."""
    for block in (getattr(sub, field, None) for sub in ast.walk(fn) for field in ("body", "orelse")):
        if not isinstance(block, list):
            continue
        for k, stmt in enumerate(block[:-1]):
            if isinstance(stmt, ast.Assign) and stmt.value is node and len(stmt.targets) == 1 \
                    and isinstance(stmt.targets[0], ast.Name):
                yield stmt.targets[0].id, block[k + 1]


def filled_by_loop(node: ast.Call, fn: ast.AST) -> bool:
    """`buf = torch.empty([n, ...])` followed at once by `for i in range(n):` whose body writes `buf[i] = ...`
    as a statement of its own, with no `break` or `continue` and no read of `buf` before that write: every
    row is written before the buffer is read."""
    first = node.args[0] if node.args else None
    if isinstance(first, (ast.List, ast.Tuple)):
        first = first.elts[0] if first.elts else None
    if first is None or isinstance(first, ast.Starred):
        return False
    for name, loop in _assigned_then(node, fn):
        if not (isinstance(loop, ast.For) and isinstance(loop.target, ast.Name) and not loop.orelse
                and isinstance(loop.iter, ast.Call) and isinstance(loop.iter.func, ast.Name)
                and loop.iter.func.id == "range" and len(loop.iter.args) == 1 and not loop.iter.keywords
                and ast.dump(loop.iter.args[0]) == ast.dump(first)):
            return False
        if any(isinstance(sub, (ast.Break, ast.Continue)) for sub in ast.walk(loop)):
            return False
        for inner in loop.body:
            target = inner.targets[0] if isinstance(inner, ast.Assign) and len(inner.targets) == 1 else None
            if isinstance(inner, ast.Assign) and isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) \
                    and target.value.id == name and isinstance(target.slice, ast.Name) and target.slice.id == loop.target.id:
                return not any(isinstance(sub, ast.Name) and sub.id == name for sub in ast.walk(inner.value))
            if any(isinstance(sub, ast.Name) and sub.id == name for sub in ast.walk(inner)):
                return False
        return False
    return False
