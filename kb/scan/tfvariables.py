"""TF 1 variables as graph code makes them: where a layer call reuses variables another call created, and
where a tensor is visibly a constant no gradient reaches (issue 45, the thirteenth measured corpus's TF 1
recommenders).

- Reuse. `tf.layers.dense(x, n, name="f1", reuse=True)` (and every `tf.layers.*` / `tf.compat.v1.layers.*`
  layer function), or any such call inside `with tf.variable_scope(..., reuse=True):` (reuse is inherited by
  the scopes inside), looks its variables up in the graph and raises if they do not exist: it creates none
  and runs no initializer, so it draws no initial value (RULES K5-1). Only the literal `True` counts:
  `reuse=tf.AUTO_REUSE` creates the variables when they are missing, and a name (`reuse=reuse`) may be False.
- Constants. `tf.gather(params, ids)` sends the gradient of its output into `params` as a tf.IndexedSlices;
  the nondeterministic reduction (tf.gather-backprop) happens only where a gradient reaches `params`. A
  tensor made by `tf.constant(...)`, a `tf.Variable(..., trainable=False)` / `tf.get_variable(...,
  trainable=False)` (no optimizer differentiates it), a `tf.convert_to_tensor` of a Python literal or a NumPy
  value, or an integer tensor (`dtype=tf.int64`: TF differentiates no integer tensor) gets none. A trainable
  variable, or a value not visible, stays reported.
"""

from __future__ import annotations

import ast

from kb.scan import follow
from kb.scan.context import Context
from kb.scan.syntax import plain_literal

_LAYER_PREFIXES = ("tf.layers.", "tf.compat.v1.layers.")
_SCOPES = frozenset({"tf.variable_scope", "tf.compat.v1.variable_scope"})
_CONSTANTS = frozenset({"tf.constant", "tf.compat.v1.constant"})
_CONVERTS = frozenset({"tf.convert_to_tensor", "tf.compat.v1.convert_to_tensor"})
_VARIABLES = frozenset({"tf.Variable", "tf.compat.v1.Variable", "tf.get_variable", "tf.compat.v1.get_variable"})
_INT_DTYPES = frozenset({"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "bool"})


def _reuse_true(call: ast.Call) -> bool:
    """The call passes `reuse=True` as the literal True."""
    return any(k.arg == "reuse" and isinstance(k.value, ast.Constant) and k.value.value is True for k in call.keywords)


def reusing_scope(ctx: Context, expr: ast.expr) -> bool:
    """`tf.variable_scope(..., reuse=True)` (TF 1's or tf.compat.v1's): the scope reuses every variable."""
    return isinstance(expr, ast.Call) and _reuse_true(expr) and ctx.dotted(expr.func) in _SCOPES


def reused_layer(ctx: Context, node: ast.Call) -> str | None:
    """Why a TF 1 layer function's call creates no variable (it reuses them), or None."""
    name = ctx.written(node.func) or ""
    if not name.startswith(_LAYER_PREFIXES) and not (ctx.dotted(node.func) or "").startswith(_LAYER_PREFIXES):
        return None
    if _reuse_true(node):
        return "reuse=True: the call reuses the variables another call created; it creates none and draws no initial value"
    if ctx.reusing_scopes:
        return ("inside tf.variable_scope(..., reuse=True): the call reuses the variables another call created; "
                "it creates none and draws no initial value")
    return None


def _integer_dtype(ctx: Context, call: ast.Call) -> bool:
    """The call's `dtype=` is an integer (or bool) dtype: `tf.int64`, `"int32"`, `np.int64`."""
    given = next((k.value for k in call.keywords if k.arg == "dtype"), None)
    if given is None:
        return False
    text = plain_literal(given) if isinstance(given, ast.Constant) else (
        given.attr if isinstance(given, ast.Attribute) else None)
    return isinstance(text, str) and text in _INT_DTYPES


def _no_gradient(ctx: Context, value: ast.AST) -> str | None:
    """Why the tensor `value` makes gets no gradient, or None."""
    if not isinstance(value, ast.Call):
        return None
    name = ctx.dotted(value.func)
    if name in _CONSTANTS:
        return "a constant made by tf.constant"
    if name in _VARIABLES:
        trainable = next((k.value for k in value.keywords if k.arg == "trainable"), None)
        if isinstance(trainable, ast.Constant) and trainable.value is False:
            return "a variable made with trainable=False, which no optimizer differentiates"
        return None
    if name in _CONVERTS:
        if _integer_dtype(ctx, value):
            return "an integer tensor (tf.convert_to_tensor with an integer dtype), which TF differentiates never"
        first = value.args[0] if value.args else next((k.value for k in value.keywords if k.arg == "value"), None)
        if isinstance(first, (ast.List, ast.Tuple, ast.Constant)):
            return "a constant made by tf.convert_to_tensor of a Python literal"
        if isinstance(first, ast.Call) and (ctx.written(first.func) or "").startswith(("np.", "numpy.")):
            return "a constant made by tf.convert_to_tensor of a NumPy array"
    return None


def constant_params(ctx: Context, node: ast.Call) -> str | None:
    """Why the tensor a gather reads (`params`, its first argument) gets no gradient: it is made in place,
    or the name holds, where the gather reads it (follow.reaching), a value made so; None otherwise."""
    params = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "params"), None)
    if params is None or isinstance(params, ast.Starred):
        return None
    if isinstance(params, ast.Name):
        scope = ctx.fn_nodes[-1] if ctx.fn_nodes else ctx.tree
        if scope is None:
            return None
        held = follow.reaching(scope, node, params.id)
        return _no_gradient(ctx, held) if held is not None else None
    return _no_gradient(ctx, params)
