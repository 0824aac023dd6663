"""Whether a function `jax.jit` or `jax.pmap` compiles visibly holds nothing XLA's GPU autotuner chooses a kernel for
(jax.xla-autotuning).

The autotuner times candidate kernels of GEMMs, convolutions and fusions and keeps the fastest; the choice can
change the bits only where the candidates add in different orders: a GEMM, a convolution, attention, a float
reduction. A function that only builds constants, copies, slices or updates arrays, draws random numbers, or
computes element by element (each output element alone, from its own inputs) gives the same bits whichever kernel
runs: maxtext's `jax.jit(raw_generate_synthetic_data)` of `jnp.zeros`, `jax.jit(jax.random.fold_in)`.

Read conservatively: every call in the function (and in the functions of the same file it calls by name, a few
levels deep) must be one of the known value-building or element-wise calls below; a `@` product, a call of a
method, a parameter, a model, or any other function counts as work the autotuner may choose for.
"""

from __future__ import annotations

import ast
import weakref

from kb.scan.context import Context
from kb.scan.nodes import iwalk

# Last names of JAX / NumPy calls that build, copy, move, cast or compute element by element (or reduce exactly:
# any / all / argmax over booleans and integers are order-free), and of Python builtins.
_ELEMENTWISE = frozenset({
    "zeros", "ones", "full", "empty", "zeros_like", "ones_like", "full_like", "empty_like", "arange", "linspace", "eye",
    "array", "asarray", "broadcast_to", "reshape", "transpose", "swapaxes", "moveaxis", "expand_dims", "squeeze",
    "concatenate", "stack", "split", "take", "take_along_axis", "where", "clip", "pad", "tile", "repeat", "flip", "roll",
    "astype", "ravel", "any", "all", "isnan", "isfinite", "logical_and", "logical_or", "logical_not", "equal",
    "not_equal", "greater", "greater_equal", "less", "less_equal", "maximum", "minimum", "abs", "exp", "log", "sqrt",
    "tanh", "sin", "cos", "square", "sign", "floor", "ceil", "round", "int32", "int64", "uint32", "float32", "bfloat16",
    "float16", "bool_", "dynamic_slice", "dynamic_update_slice", "dynamic_slice_in_dim", "dynamic_update_slice_in_dim",
    "dynamic_index_in_dim", "dynamic_update_index_in_dim", "stop_gradient", "convert_element_type", "select",
    "with_sharding_constraint", "device_put", "PRNGKey", "key", "fold_in", "uniform", "normal", "bernoulli", "randint",
    "truncated_normal", "key_data", "wrap_key_data",
})
_BUILTINS = frozenset({"len", "range", "int", "float", "bool", "isinstance", "dict", "list", "tuple", "zip", "enumerate",
                       "print", "min", "max", "sorted", "getattr", "hasattr", "str"})
# Methods of arrays that copy or reshape, and of Python's lists and dicts (no JAX array has these names).
_OBJECT_METHODS = frozenset({"astype", "reshape", "transpose", "squeeze", "copy", "swapaxes", "ravel", "append", "extend",
                             "items", "keys", "values", "insert"})
_LIBRARIES = ("jax.numpy.", "jax.random.", "jax.lax.", "numpy.", "jax.device_put")
_TREE_MAPS = ("jax.tree_util.tree_map", "jax.tree.map")
_DEPTH = 4
_WRAPPERS = frozenset({"jax.vmap", "jax.checkpoint", "jax.remat", "jax.named_call", "jax.numpy.vectorize"})


def function_of(ctx: Context, node: ast.Call, decorated: ast.AST | None) -> ast.AST | None:
    """The function a jit or pmap compiles: the decorated one (`@jax.jit`, `@partial(jax.jit, ...)`), a lambda, or
    a function of this file named by the first argument (`jax.jit(step)`, `jax.jit(partial(step, cfg))`); None
    when it is not visible (a method, a parameter, a name defined twice)."""
    if decorated is not None:
        return decorated
    target = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "fun"), None)
    while isinstance(target, ast.Call) and target.args and ((ctx.written(target.func) or "").endswith("partial")
                                                            or ctx.written(target.func) in _WRAPPERS):
        target = target.args[0]  # jax.jit(partial(f, cfg)), jax.jit(jax.vmap(f)): f's body is what compiles
    if isinstance(target, ast.Lambda):
        return target
    if isinstance(target, ast.Name):
        return _defined(ctx, target.id)
    if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name):
        return _method(ctx, target.value.id, target.attr)  # `self._step`, `Iterator.make_batch`
    return None


def _method(ctx: Context, owner: str, name: str) -> ast.AST | None:
    """The method `name` of the class `owner` names (`self`: the class the call is in), if this file defines it once."""
    if owner == "self":
        found = ctx.class_nodes[-1:]
    else:
        found = [n for n in iwalk(ctx.tree) if isinstance(n, ast.ClassDef) and n.name == owner] if ctx.tree else []
    if len(found) != 1:
        return None
    methods = [n for n in found[0].body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == name]
    return methods[0] if len(methods) == 1 else None


def holds_no_gemm(ctx: Context, fn: ast.AST, depth: int = _DEPTH, seen: frozenset[str] = frozenset()) -> bool:
    """Every call in `fn` (and in what it calls of this file) is a known value-building or element-wise one, and
    no `@` product is taken."""
    if depth <= 0:
        return False
    body = [fn.body] if isinstance(fn, ast.Lambda) else getattr(fn, "body", [])  # not the decorators
    for sub in (n for stmt in body for n in iwalk(stmt)):
        if isinstance(sub, ast.BinOp) and isinstance(sub.op, ast.MatMult):
            return False
        if isinstance(sub, ast.Call) and not _plain(ctx, sub, depth, seen):
            return False
    return True


def library_function(ctx: Context, node: ast.Call) -> bool:
    """`jax.jit(jax.random.fold_in)`: the compiled function is a known value-building or element-wise one."""
    target = node.args[0] if node.args else None
    written = ctx.written(target) if isinstance(target, (ast.Name, ast.Attribute)) else None
    return written is not None and _library(written)


def _plain(ctx: Context, call: ast.Call, depth: int, seen: frozenset[str]) -> bool:
    func = call.func
    if isinstance(func, ast.Name) and func.id in _BUILTINS and func.id not in ctx.aliases:
        return True
    written = ctx.written(func) if isinstance(func, (ast.Name, ast.Attribute)) else None
    if written is not None and written.startswith(_TREE_MAPS):
        return _mapped(ctx, call, depth, seen)
    if written is not None:
        return _library(written)
    if isinstance(func, ast.Name):
        inner = _defined(ctx, func.id)
        return inner is not None and func.id not in seen and holds_no_gemm(ctx, inner, depth - 1, seen | {func.id})
    if isinstance(func, ast.Attribute):
        if isinstance(func.value, ast.Subscript) and isinstance(func.value.value, ast.Attribute) \
                and func.value.value.attr == "at":
            return func.attr in ("set", "get")  # x.at[i].set(v): a copy (its own records judge repeated indices)
        return func.attr in _OBJECT_METHODS
    return False


def _mapped(ctx: Context, call: ast.Call, depth: int, seen: frozenset[str]) -> bool:
    """`jax.tree_util.tree_map(f, tree)`: plain when f is a lambda (whose body the walk reads with the function's)
    or a function of this file that is itself plain."""
    fn = call.args[0] if call.args else None
    if isinstance(fn, ast.Lambda):
        return True
    inner = _defined(ctx, fn.id) if isinstance(fn, ast.Name) and fn.id not in seen else None
    return inner is not None and holds_no_gemm(ctx, inner, depth - 1, seen | {fn.id})  # type: ignore[union-attr]


_REORDERS = frozenset({"einops.rearrange", "einops.repeat"})  # reshape, transpose, stack, broadcast: copies only


def _library(written: str) -> bool:
    return written in _REORDERS or (written.startswith(_LIBRARIES) and written.rpartition(".")[2] in _ELEMENTWISE)


def _defined(ctx: Context, name: str) -> ast.AST | None:
    """The one function of this file with that name (None: none, or several)."""
    if ctx.tree is None:
        return None
    found = [n for n in iwalk(ctx.tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == name]
    return found[0] if len(found) == 1 else None


_TRACED_ONLY = frozenset({"eval_shape", "trace"})
_READ_ONLY = frozenset({"cost_analysis", "memory_analysis", "as_text", "compiler_ir", "as_hlo_text"})


def never_runs(ctx: Context, node: ast.Call) -> bool:
    """The jit's result is only traced or lowered, never run: `jax.jit(f).eval_shape(x)` and `.trace(x)` compute
    shapes; `jax.jit(f).lower(x)` and its `.compile()` build an executable that a chain reading only its
    `cost_analysis()` (or text) never calls. Nothing runs, so no kernel choice reaches a result."""
    scope = ctx.fn_nodes[-1] if ctx.fn_nodes else ctx.tree
    parent = _parents(scope, node)
    step = parent.get(id(node))
    if not isinstance(step, ast.Attribute):
        return False
    if step.attr in _TRACED_ONLY:
        return True
    if step.attr != "lower":
        return False
    chain = parent.get(id(step))  # the .lower(...) call
    while chain is not None:
        attribute = parent.get(id(chain))
        if not isinstance(attribute, ast.Attribute):
            return False  # the lowered (or compiled) program is kept: it may be called later
        if attribute.attr in _READ_ONLY:
            return True
        if attribute.attr != "compile":
            return False
        chain = parent.get(id(attribute))
        if not isinstance(chain, ast.Call):
            return False
    return False


def _parents(scope: ast.AST | None, node: ast.AST) -> dict[int, ast.AST]:
    """Child id -> parent, for the statement of `scope` that holds `node` (a jit call is rare: read only there)."""
    out: dict[int, ast.AST] = {}
    for stmt in getattr(scope, "body", []):
        if stmt.lineno <= getattr(node, "lineno", 0) <= (stmt.end_lineno or stmt.lineno):
            for parent in iwalk(stmt):
                for child in ast.iter_child_nodes(parent):
                    out[id(child)] = parent
    return out


def in_pallas_kernel(ctx: Context) -> bool:
    """The call is in a function this file hands to `pallas_call` as its kernel (by name, or through
    `functools.partial`): Pallas lowers the kernel's body itself (Triton or Mosaic), with the block shapes the code
    fixes; XLA neither picks a library GEMM for its dots nor autotunes it."""
    names = {fn.name for fn in ctx.fn_nodes if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))}
    return bool(names) and ctx.tree is not None and bool(names & _kernels(ctx.tree))


# A module's kernel names, once per tree, kept no longer than the tree (a scan frees each file's tree when done)
_KERNELS: weakref.WeakKeyDictionary[ast.Module, frozenset[str]] = weakref.WeakKeyDictionary()


def _kernels(tree: ast.Module) -> frozenset[str]:
    """Names handed to `pallas_call`, and the functions a name so handed is bound to by `partial(f, ...)`."""
    found = _KERNELS.get(tree)
    if found is None:
        found = _KERNELS[tree] = _find_kernels(tree)
    return found


def _find_kernels(tree: ast.Module) -> frozenset[str]:
    handed, partials = set(), {}
    for sub in iwalk(tree):
        if isinstance(sub, ast.Call) and isinstance(sub.func, (ast.Attribute, ast.Name)) and sub.args \
                and (sub.func.attr if isinstance(sub.func, ast.Attribute) else sub.func.id) == "pallas_call":
            kernel = _unpartial(sub.args[0])
            if isinstance(kernel, ast.Name):
                handed.add(kernel.id)
        elif isinstance(sub, ast.Assign) and len(sub.targets) == 1 and isinstance(sub.targets[0], ast.Name):
            bound = _unpartial(sub.value)
            if bound is not sub.value and isinstance(bound, ast.Name):
                partials[sub.targets[0].id] = bound.id
    return frozenset(handed | {partials[n] for n in handed if n in partials})


def _unpartial(node: ast.expr) -> ast.expr:
    if isinstance(node, ast.Call) and ast.unparse(node.func).endswith("partial") and node.args:
        return node.args[0]
    return node
