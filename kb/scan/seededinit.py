"""Keras layers whose random initializers carry their own seeds (rule seeded-initializers, kb/scan/resolvers.py):
TensorSpeech/TensorFlowTTS's MelGAN and ParallelWaveGAN layers (forty-fifth corpus, 20 false alarms of
`keras.unseeded-random`) take `kernel_initializer=get_initializer(initializer_seed)`, where the module's
`get_initializer(initializer_seed=42)` returns `tf.keras.initializers.GlorotNormal(seed=initializer_seed)`. A seeded
initializer draws the same values in every run, whatever the global generator holds.

An initializer is seeded when it is a call of an initializers class (`...initializers.GlorotNormal(seed=s)`, any
spelling with `initializers` in its dotted name) whose `seed=` is fixed, or a call of a module-level function of the
file every `return` of which is one, its seed either fixed there or the function's parameter, bound at the call (or
by the parameter's default) to a fixed value. A fixed seed: a value kb/scan/pyints.py shows is never None, a parameter
of the enclosing function whose default is a number, or one named for a seed (`initializer_seed`, `seed`) with no
None default: code that threads a seed through its constructors means it to be one (a caller passing None is not
what such code is written for). Anything else (an initializer string, `"glorot_uniform"`, or an unseeded class) is
not seeded.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from kb.scan import pyints
from kb.scan.context import Context
from kb.scan.nodes import iwalk
from kb.scan.syntax import parameter_defaults

Function = ast.FunctionDef | ast.AsyncFunctionDef


def _parameter(fn: ast.AST | None, name: str) -> tuple[ast.arg, ast.expr | None] | None:
    """(the parameter, its default or None) of `fn` named `name`, or None."""
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    args = fn.args
    found = next((a for a in (*args.posonlyargs, *args.args, *args.kwonlyargs) if a.arg == name), None)
    if found is None:
        return None
    return found, next((default for n, default, _ in parameter_defaults(args, False) if n == name), None)


def fixed(ctx: Context, node: ast.AST | None, fn: ast.AST | None) -> bool:
    """The seed `node` (read in `fn`) is fixed (module docstring)."""
    if node is None:
        return False
    if isinstance(node, ast.Name) and (found := _parameter(fn, node.id)) is not None:
        _, default = found
        if isinstance(default, ast.Constant):
            return default.value is not None and isinstance(default.value, (int, float))
        return default is None and "seed" in node.id.lower()
    return pyints.never_none(ctx, node, fn)


def _seed_of(ctx: Context, call: ast.AST | None) -> ast.expr | None:
    """The `seed=` of a call of an initializers class, or None (not such a call, or no seed)."""
    if not isinstance(call, ast.Call) or "initializers" not in (ctx.dotted(call.func) or "").split(".")[:-1]:
        return None
    return next((k.value for k in call.keywords if k.arg == "seed"), None)


def seeded(ctx: Context, node: ast.AST, fn: ast.AST | None) -> bool:
    """The initializer expression `node`, read in `fn`, is seeded (module docstring)."""
    seed = _seed_of(ctx, node)
    if seed is not None:
        return fixed(ctx, seed, fn)
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ctx.defs):
        return False
    helper = ctx.defs[node.func.id]
    returns = [r.value for r in iwalk(helper) if isinstance(r, ast.Return)]
    if not returns:
        return False
    for value in returns:
        inner = _seed_of(ctx, value) if value is not None else None
        if inner is None:
            return False
        if isinstance(inner, ast.Name) and (found := _parameter(helper, inner.id)) is not None:
            if not fixed(ctx, _bound(node, helper, inner.id, found[1]), fn):
                return False
        elif not fixed(ctx, inner, helper):
            return False
    return True


def _bound(call: ast.Call, helper: Function, name: str, default: ast.expr | None) -> ast.expr | None:
    """What `call` passes for `helper`'s parameter `name` (a keyword, a position, or the default)."""
    given = next((k.value for k in call.keywords if k.arg == name), None)
    if given is not None:
        return given
    positional = [a.arg for a in (*helper.args.posonlyargs, *helper.args.args)]
    if name in positional and positional.index(name) < len(call.args) \
            and not any(isinstance(a, ast.Starred) for a in call.args):
        return call.args[positional.index(name)]
    return default


def all_seeded(ctx: Context, op: str, node: ast.Call, constant: Callable[[Context, ast.AST], bool]) -> bool:
    """Every initializer parameter of the Keras layer call is given a constant (`constant`) or seeded initializer, or
    left at a constant default, and at least one is seeded (the constant case is constant-initializers')."""
    params = ctx.op_params.get(op, ())
    initialisers = [(name, default) for name, default in params if name.endswith("_initializer")]
    if not initialisers or any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
        return False
    fn = ctx.fn_nodes[-1] if ctx.fn_nodes else None
    any_seeded = False
    for name, default in initialisers:
        given = ctx.argument(op, node, name)
        if given is None:
            if not (isinstance(default, str) and default.lower() in ("zeros", "ones", "constant", "identity")):
                return False
        elif seeded(ctx, given, fn):
            any_seeded = True
        elif not constant(ctx, given):
            return False
    return any_seeded
