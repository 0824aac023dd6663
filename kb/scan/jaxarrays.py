"""What shows a value to be a JAX array besides the call that made it (Context.is_jax, for `x @ w`).

The arrays of a JAX program are often made elsewhere: a field of a dataclass annotated `jax.Array`
(`real: jax.Array`, read as `self.real`), a parameter annotated so (`def apply(w: jax.Array, x)`), a Flax
parameter (`self.param(...)`, also held in `self.X` by `setup` and unpacked from
`nn.dtypes.promote_dtype(x, self.X)`). Those are JAX arrays by what the code declares. NumPy arrays and
torch tensors are annotated with their own types and are never taken for JAX arrays here.
"""

from __future__ import annotations

import ast
from typing import Protocol

from kb.scan.syntax import self_attribute, statements_in


class Context(Protocol):
    """What is read of kb.scan.context.Context (which calls this module, so does not import it here)."""
    class_nodes: list[ast.ClassDef]
    aliases: dict[str, str]

    def dotted(self, node: ast.AST) -> str | None: ...

    def self_assignments(self, cls: ast.ClassDef) -> dict[str, list[tuple[ast.expr | None, dict]]]: ...

# Annotations that declare a JAX array (chex.Array is JAX's array or NumPy's, as chex spells an operand).
JAX_ARRAY_TYPES = frozenset({"jax.Array", "jax.numpy.ndarray", "jax.numpy.DeviceArray", "jax.interpreters.xla.DeviceArray",
                             "chex.Array", "chex.ArrayDevice"})


def jax_annotation(ctx: Context, annotation: ast.expr | None) -> bool:
    """`jax.Array`, `jnp.ndarray`, `chex.Array`, or jaxtyping's `Float[jax.Array, "b n"]` of one."""
    if annotation is None:
        return False
    if isinstance(annotation, ast.Subscript):
        outer = ctx.dotted(annotation.value)
        if outer is None or not outer.startswith("jaxtyping."):
            return False
        first = annotation.slice.elts[0] if isinstance(annotation.slice, ast.Tuple) and annotation.slice.elts else annotation.slice
        return jax_annotation(ctx, first)
    return ctx.dotted(annotation) in JAX_ARRAY_TYPES


def flax_param(ctx: Context, node: ast.AST) -> bool:
    """`self.param(...)` in a module that imports Flax: a parameter Flax made, a JAX array."""
    return isinstance(node, ast.Call) and self_attribute(node.func, "param") \
        and any(v == "flax" or v.startswith("flax.") for v in ctx.aliases.values())


def annotated_parameter(ctx: Context, name: str, fn: ast.AST) -> bool:
    """`name` is a parameter of the function `fn` annotated as a JAX array."""
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        return False
    args = fn.args
    for a in (*args.posonlyargs, *args.args, *args.kwonlyargs):
        if a.arg == name:
            return jax_annotation(ctx, a.annotation)
    return False


def field_declared(ctx: Context, attr: str) -> bool:
    """`self.<attr>` of the enclosing class is a field annotated as a JAX array (`real: jax.Array` in the class
    body) or set to a Flax parameter (`self.table = self.param(...)`) by every assignment in its methods."""
    if not ctx.class_nodes:
        return False
    cls = ctx.class_nodes[-1]
    for stmt in cls.body:
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.target.id == attr:
            return jax_annotation(ctx, stmt.annotation)
    values = ctx.self_assignments(cls).get(attr, [])
    return bool(values) and all(value is not None and flax_param(ctx, value) for value, _ in values)


def unpacked(ctx: Context, name: str, scope: ast.AST) -> list[ast.expr]:
    """The arguments that `x, w = nn.dtypes.promote_dtype(x, self.w, dtype=...)` in `scope` hands `name`
    (promote_dtype returns its positional arguments in order, cast to one dtype)."""
    found = []
    for stmt in statements_in(scope):
        if type(stmt) is ast.Assign and len(stmt.targets) == 1 and isinstance(stmt.targets[0], (ast.Tuple, ast.List)) \
                and isinstance(stmt.value, ast.Call):
            callee = ctx.dotted(stmt.value.func)
            if callee is None or not callee.endswith(".promote_dtype") or not callee.startswith("flax."):
                continue
            for i, target in enumerate(stmt.targets[0].elts):
                if isinstance(target, ast.Name) and target.id == name and i < len(stmt.value.args):
                    found.append(stmt.value.args[i])
    return found
