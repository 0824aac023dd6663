"""Whether a TensorFlow tensor is visibly built from no variable, for the rule constant-filter
(kb/scan/resolvers.py): a convolution's filter made of constants and random draws takes no gradient, so
TensorFlow builds no filter-gradient kernel for it (`tf.gradients` prunes what leads to no variable).

A blur filter made from a random sigma (`tf.exp(-x**2 / (2 * sigma**2))` with `x = tf.range(...)`), an
identity filter (`tf.constant(np.eye(n))`) are such tensors. Read within the file: literals, NumPy values,
`tf.constant`, pure TensorFlow math and random draws of such values, integer values (shapes, int casts:
no gradient flows through an integer), names every binding of which in the function is one (`x /= s`
too), a parameter of a module-level function that every call of it in the file passes such a value, and a call
of a function of the file (nested in the caller, or at module level) every `return` of which gives such a value
(`W = tf.constant(table[i])`, `return W`: pretrained weights loaded as constants).
Anything else (a variable, a layer, a method call, a parameter with no call in the file) may hold a
variable: not constant.
"""

from __future__ import annotations

import ast

from kb.scan import reaching
from kb.scan.context import Context
from kb.scan.nodes import iwalk
from kb.scan.syntax import inner_statements, statements_in

# TensorFlow functions (last name, under tf., tf.math., tf.random., tf.compat.v1.) that compute a value from
# their arguments only: no variable of their own. Their result is constant when every argument is.
_PURE = frozenset({
    "exp", "pow", "square", "sqrt", "rsqrt", "log", "abs", "negative", "reshape", "tile", "reduce_sum",
    "reduce_mean", "reduce_max", "reduce_min", "reduce_prod", "to_float", "to_double", "cast", "expand_dims",
    "squeeze", "stack", "concat", "transpose", "fill", "linspace", "maximum", "minimum",
    "add", "multiply", "divide", "truediv", "subtract", "cos", "sin", "floor", "ceil", "round", "one_hot", "sign",
    "identity", "uniform", "normal", "truncated_normal", "random_uniform", "random_normal", "gamma", "shuffle"})
# Results that carry no gradient whatever their arguments: integers (shapes, int casts) and cut gradients.
_NO_GRADIENT = frozenset({"shape", "size", "rank", "to_int32", "to_int64", "stop_gradient", "constant", "range", "eye",
                          "ones", "zeros"})
# Functions whose later arguments are shapes, multiples or axes (integers): only the first carries a value.
_FIRST_ONLY = frozenset({"reshape", "tile", "expand_dims", "squeeze", "transpose"})
_INT_DTYPES = frozenset({"int8", "int16", "int32", "int64", "uint8"})
_PREFIXES = ("tf.compat.v1.", "tf.compat.v2.", "tf.math.", "tf.random.", "tf.")
_IGNORED_KEYWORDS = frozenset({"name", "dtype", "seed"})


def constant(ctx: Context, node: ast.AST | None, fn: ast.AST | None, depth: int = 16,
             seen: frozenset[str] = frozenset()) -> bool:
    """The expression is visibly a value built from no variable (module docstring); False when unsure."""
    if node is None or depth <= 0:
        return False
    if isinstance(node, ast.Constant):
        return node.value is not None
    if isinstance(node, (ast.List, ast.Tuple)):
        return all(constant(ctx, e, fn, depth - 1, seen) for e in node.elts)
    if isinstance(node, ast.BinOp):
        return constant(ctx, node.left, fn, depth - 1, seen) and constant(ctx, node.right, fn, depth - 1, seen)
    if isinstance(node, ast.UnaryOp):
        return constant(ctx, node.operand, fn, depth - 1, seen)
    if isinstance(node, ast.Subscript):
        return constant(ctx, node.value, fn, depth - 1, seen)
    if isinstance(node, ast.Attribute):  # x.shape, x.shape.ndims: sizes; tf.float32, np.pi: a library's constants
        return node.attr in ("shape", "ndims") or (ctx.dotted(node) or "").split(".")[0] in ("tf", "numpy", "math")
    if isinstance(node, ast.Name):
        if node.id in seen:
            return True  # `x = tf.tile(x, ...)`: the value x had, which its other bindings give
        return fn is not None and _name(ctx, node.id, fn, depth, seen | {node.id})
    if isinstance(node, ast.Call):
        return _call(ctx, node, fn, depth, seen)
    return False


def _call(ctx: Context, node: ast.Call, fn: ast.AST | None, depth: int, seen: frozenset[str]) -> bool:
    name = ctx.dotted(node.func) or ""
    if not name and isinstance(node.func, ast.Name) and f"def {node.func.id}" not in seen:
        helper = _function(ctx, node.func.id, fn)
        return helper is not None and _returns_constant(ctx, helper, depth - 1, seen | {f"def {node.func.id}"})
    if name.split(".")[0] == "numpy":
        return True  # a NumPy value: made on the host, no TensorFlow variable in it
    if isinstance(node.func, ast.Attribute) and node.func.attr == "get_shape" and name == "":
        return True
    last = next((name[len(p):] for p in _PREFIXES if name.startswith(p)), None)
    if last is None or "." in last:
        return False
    if last in _NO_GRADIENT:
        return True
    if last == "cast":
        dtype = node.args[1] if len(node.args) > 1 else next((k.value for k in node.keywords if k.arg == "dtype"), None)
        if dtype is not None and (ctx.dotted(dtype) or "").rpartition(".")[2] in _INT_DTYPES:
            return True
    if last not in _PURE or any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
        return False
    if last in _FIRST_ONLY:
        first = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "tensor"), None)
        return constant(ctx, first, fn, depth - 1, seen)
    return all(constant(ctx, a, fn, depth - 1, seen) for a in node.args) and \
        all(constant(ctx, k.value, fn, depth - 1, seen) for k in node.keywords if k.arg not in _IGNORED_KEYWORDS)


def _name(ctx: Context, name: str, fn: ast.AST, depth: int, seen: frozenset[str]) -> bool:
    """Every binding of `name` in `fn` (plain and augmented assignments) is constant; a parameter of a
    module-level function is what every call of it in the file passes, read in the caller."""
    values: list[ast.expr] = []
    for stmt in statements_in(fn):
        if isinstance(stmt, ast.Assign) and any(name in _bound(t) for t in stmt.targets):
            if not (len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
                return False  # unpacked or chained: not read
            values.append(stmt.value)
        elif isinstance(stmt, (ast.AugAssign, ast.AnnAssign)) and name in _bound(stmt.target):
            if stmt.value is None:
                return False
            values.append(stmt.value)
        elif isinstance(stmt, (ast.For, ast.AsyncFor, ast.With, ast.AsyncWith)) and any(
                name in _bound(t) for t in _targets(stmt)):
            return False
    if any(isinstance(n, ast.NamedExpr) and n.target.id == name for n in iwalk(fn)):
        return False
    rebound = all(constant(ctx, v, fn, depth - 1, seen) for v in values)
    if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) and name in _parameters(fn):
        if not rebound or ctx.defs.get(fn.name) is not fn or fn not in getattr(ctx.tree, "body", []):
            return False
        passed = ctx.passed(fn, name)  # what the callers give, and what the function rebinds it to
        return bool(passed) and all(constant(ctx, v, _around(ctx, v), depth - 1) for v in passed)
    return bool(values) and rebound


def _function(ctx: Context, name: str, fn: ast.AST | None) -> ast.FunctionDef | None:
    """The function of the file a plain call `name(...)` in `fn` reaches: the one `def name` nested in `fn`, else the
    module-level one (None: a lambda, a rebound name, several definitions, or no definition in the file)."""
    nested = [s for s in statements_in(fn) if isinstance(s, ast.FunctionDef) and s.name == name] if fn is not None else []
    if len(nested) > 1 or (fn is not None and any(name in _bound(t) for s in statements_in(fn)
                                                  if isinstance(s, ast.Assign) for t in s.targets)):
        return None
    found = nested[0] if nested else ctx.defs.get(name)
    return found if isinstance(found, ast.FunctionDef) else None


def _returns_constant(ctx: Context, fdef: ast.FunctionDef, depth: int, seen: frozenset[str]) -> bool:
    """Every `return` of `fdef` (not of functions nested in it) gives a constant value: read in `fdef`, where a
    returned name is the value of the assignment that reaches it (`W = table[i]`, `W = tf.constant(W)`, `return W`:
    a constant, whatever `W` held before)."""
    returns: list[ast.Return] = []
    stack: list[ast.stmt] = list(fdef.body)
    while stack:
        item = stack.pop()
        if isinstance(item, ast.Return):
            returns.append(item)
        elif not isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            stack.extend(inner_statements(item))
    if not returns or any(r.value is None for r in returns):
        return False
    return all(constant(ctx, _returned(ctx, r, fdef), fdef, depth, seen) for r in returns)


def _returned(ctx: Context, ret: ast.Return, fdef: ast.FunctionDef) -> ast.expr | None:
    """What `return name` returns: the one plain assignment of the body that reaches it (kb/scan/reaching.py),
    else the returned expression itself (every binding of the name then counts)."""
    value = ret.value
    if isinstance(value, ast.Name):
        return reaching.reaching_value(ctx.reaching_memo, fdef, value) or value
    return value


def _bound(target: ast.AST) -> set[str]:
    return {n.id for n in iwalk(target) if isinstance(n, ast.Name)}


def _targets(stmt: ast.stmt) -> list[ast.AST]:
    if isinstance(stmt, (ast.For, ast.AsyncFor)):
        return [stmt.target]
    return [item.optional_vars for item in getattr(stmt, "items", []) if item.optional_vars is not None]


def _parameters(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    args = fn.args
    return {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs, *(x for x in (args.vararg, args.kwarg) if x))}


def _around(ctx: Context, value: ast.AST) -> ast.AST | None:
    """The module-level function of the file that holds the caller's argument (None: the module level)."""
    line = getattr(value, "lineno", 0)
    return next((d for d in ctx.defs.values() if d.lineno <= line <= (d.end_lineno or d.lineno)), ctx.tree)
