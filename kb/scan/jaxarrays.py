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

    def written(self, node: ast.AST) -> str | None: ...

    def assigned_in(self, ctx: ast.AST) -> dict[str, list[ast.expr]]: ...

    def self_assignments(self, cls: ast.ClassDef) -> dict[str, list[tuple[ast.expr | None, dict]]]: ...

_MAKERS = ("jax.numpy.", "jax.random.", "jax.nn.", "jax.lax.")
# Annotations that declare a JAX array (chex.Array is JAX's array or NumPy's, as chex spells an operand).
JAX_ARRAY_TYPES = frozenset({"jax.Array", "jaxtyping.Array", "jax.numpy.ndarray", "jax.numpy.DeviceArray", "jax.interpreters.xla.DeviceArray",
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


def annotated_local(ctx: Context, name: str, scope: ast.AST) -> bool:
    """`name: jax.Array = ...` (or jaxtyping's `Float[Array, "n d"]`) in `scope`: the code declares it a JAX array."""
    return any(isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.target.id == name
               and jax_annotation(ctx, stmt.annotation) for stmt in statements_in(scope))


# flax.linen's functions that are jax.nn's or jax.numpy's under another name: each returns a JAX array.
_FLAX_FUNCTIONS = frozenset({"softmax", "log_softmax", "relu", "gelu", "sigmoid", "tanh", "silu", "swish", "elu", "celu",
                             "selu", "leaky_relu", "softplus", "log_sigmoid", "hard_tanh", "glu", "one_hot", "standardize",
                             "avg_pool", "max_pool", "dot_product_attention"})
# flax.linen's modules whose call returns one array (not the recurrent cells, which return a carry and an output).
_FLAX_MODULES = frozenset({"Dense", "DenseGeneral", "Conv", "ConvTranspose", "ConvLocal", "Dropout", "LayerNorm", "BatchNorm",
                           "GroupNorm", "RMSNorm", "Embed", "MultiHeadDotProductAttention", "SelfAttention",
                           "MultiHeadAttention"})


def flax_output(ctx: Context, node: ast.Call) -> bool:
    """`nn.Dense(4)(x)`, `nn.Dropout(rate)(x, deterministic)` or `nn.softmax(x)` of flax.linen: a JAX array."""
    if isinstance(node.func, ast.Call):
        name, known = ctx.written(node.func.func), _FLAX_MODULES
    else:
        name, known = ctx.written(node.func), _FLAX_FUNCTIONS
    return name is not None and name.startswith("flax.linen.") and name.rpartition(".")[2] in known


_TRANSFORMS = frozenset({"jax.jit", "jax.pmap", "jax.grad", "jax.value_and_grad", "jax.vmap", "jax.checkpoint", "jax.remat"})
_STATIC = frozenset({"static_argnums", "static_argnames", "static_broadcasted_argnums"})


def _transforms(ctx: Context, fn: ast.AST) -> list[list[ast.keyword]]:
    """The keywords of each JAX transform that decorates `fn` (`@jax.jit`, `@functools.partial(jax.pmap,
    axis_name="d")`: its keywords; `@jax.jit` bare: none)."""
    out: list[list[ast.keyword]] = []
    for decorator in getattr(fn, "decorator_list", ()):
        target, keywords = decorator, []
        if isinstance(decorator, ast.Call):
            keywords = decorator.keywords
            target = decorator.args[0] if ctx.written(decorator.func) == "functools.partial" and decorator.args \
                else decorator.func
        if ctx.written(target) in _TRANSFORMS:
            out.append(keywords)
    return out


def traced(ctx: Context, fn: ast.AST) -> bool:
    """A JAX transform given no `backend` decorates `fn`: what it computes from its arguments are tracers compiled
    for the GPU, whatever the names holding them are annotated (ayaka14732/llama-2-jax's `seq @ params.gate_proj`)."""
    return any(not any(k.arg == "backend" for k in keywords) for keywords in _transforms(ctx, fn))


def traced_parameter(ctx: Context, name: str, fn: ast.AST) -> bool:
    """`name` is a parameter of `fn`, which a JAX transform decorates with no static argument (`@jax.jit`,
    `@jax.value_and_grad`, `@functools.partial(jax.pmap, axis_name="d")`): JAX calls `fn` with tracers, so each
    array the parameter holds, a leaf of a pytree included (`params["embedding"]["embedding"]`), is a JAX array.
    A transform given a `backend` (`partial(jax.jit, backend="cpu")`) is left out: it runs elsewhere than the GPU."""
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or not fn.decorator_list:
        return False
    args = fn.args
    if not any(a.arg == name for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)):
        return False
    return any(not any(k.arg in _STATIC or k.arg == "backend" for k in keywords) for keywords in _transforms(ctx, fn))


def is_jax(ctx: Context, node: ast.AST, scope: ast.AST, depth: int, traced: bool = True) -> bool:
    """The expression is visibly a JAX array: made by jax.numpy / jax.random / jax.nn / jax.lax, a flax.linen
    module or function, or Flax's `self.param`; a name every assignment of which in the function (or module) is
    (unpacking `promote_dtype` included); a parameter, local or `self` field annotated as one; its `.T`, or an item
    of it. With `traced`, a parameter of a function a JAX transform decorates counts too: its arrays are tracers,
    though of a dtype only the caller knows (so a record that needs the dtype asks without it)."""
    if depth <= 0:
        return False
    if isinstance(node, ast.Call):
        name = ctx.dotted(node.func)
        return (name is not None and name.startswith(_MAKERS)) or flax_param(ctx, node) or flax_output(ctx, node)
    if isinstance(node, ast.Subscript):  # an element or slice of a JAX array, a leaf of a traced pytree
        return is_jax(ctx, node.value, scope, depth, traced)
    if isinstance(node, ast.Name):
        if annotated_local(ctx, node.id, scope):
            return True
        values = ctx.assigned_in(scope).get(node.id, []) + unpacked(ctx, node.id, scope)
        if traced and not values and traced_parameter(ctx, node.id, scope):
            return True
        if annotated_parameter(ctx, node.id, scope):
            return all(is_jax(ctx, v, scope, depth - 1, traced) for v in values)
        return bool(values) and all(is_jax(ctx, v, scope, depth - 1, traced) for v in values)
    if isinstance(node, ast.Attribute):  # `w.T` of a JAX array; `self.real` of a field declared one
        if node.attr in ("T", "mT"):
            return is_jax(ctx, node.value, scope, depth, traced)
        return self_attribute(node) and field_declared(ctx, node.attr)
    if isinstance(node, ast.BinOp):
        return is_jax(ctx, node.left, scope, depth - 1, traced) or is_jax(ctx, node.right, scope, depth - 1, traced)
    return False
