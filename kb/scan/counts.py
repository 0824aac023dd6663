"""Whether a permutation's argument is a count (for Context.is_unique): `jax.random.permutation(key, n)` with `n` an
integer shuffles `arange(n)`, whose values never repeat; given an array it shuffles that array's values, which may.

A count is what the code shows to be a number of things: an int literal, a `.shape[k]` / `.size` / `len(...)` /
`jnp.size(...)`, a value a configuration object gives by name (`config["MINIBATCH_SIZE"]`, `args.batch_size`: the
object named as settings are, `config`, `cfg`, `args`, `FLAGS`...: a setting, not an array),
arithmetic of counts, or a name every assignment in the function makes one. The shuffles of TensorFlow
(`tf.random.shuffle(tf.range(n))`) keep their input's values, so they keep indices unique as a cast does.
"""

from __future__ import annotations

import ast
from typing import Any

# Functions that shuffle the values of one of their arguments (its position): unique values stay unique.
PERMUTATIONS = {"jax.random.permutation": 1}
SHUFFLES = frozenset({"tf.random.shuffle", "tf.random_shuffle", "tf.compat.v1.random_shuffle", "tf.compat.v1.random.shuffle",
                      *PERMUTATIONS})
_SIZES = frozenset({"len", "jax.numpy.size", "numpy.size"})
_DEPTH = 4
_SETTINGS = frozenset({"config", "cfg", "conf", "configs", "hparams", "hps", "hp", "args", "flags", "opt", "opts",
                       "options", "settings"})


def _settings(node: ast.expr) -> bool:
    """A configuration object by its name (`config`, `self.cfg`, `args`, `FLAGS`): a table of settings, whose
    entries a permutation takes as counts (a batch's own `batch["ids"]` is data, not a setting)."""
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
    return name.lower() in _SETTINGS


def permutes_a_count(ctx: Any, node: ast.Call, fn: ast.AST | None) -> bool:
    """`jax.random.permutation(key, n)` with `n` a count: a shuffled `arange(n)`. `ctx` is the walk's Context
    (its `assigned_in` and `dotted`)."""
    return len(node.args) == 2 and not node.keywords and _count(ctx, node.args[1], fn, _DEPTH)


def _count(ctx: Any, node: ast.expr, fn: ast.AST | None, depth: int) -> bool:
    if depth <= 0:
        return False
    if isinstance(node, ast.Constant):
        return type(node.value) is int
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv)):
        return _count(ctx, node.left, fn, depth - 1) and _count(ctx, node.right, fn, depth - 1)
    if isinstance(node, ast.Attribute):
        return node.attr == "size" or _settings(node.value)  # x.size, config.batch_size
    if isinstance(node, ast.Subscript):
        key = node.slice
        shape = isinstance(node.value, ast.Attribute) and node.value.attr == "shape"
        return shape or (isinstance(key, ast.Constant) and isinstance(key.value, str) and _settings(node.value))
    if isinstance(node, ast.Call):
        return ctx.dotted(node.func) in _SIZES or (isinstance(node.func, ast.Name) and node.func.id == "len")
    if isinstance(node, ast.Name) and fn is not None:
        values = ctx.assigned_in(fn).get(node.id, [])
        return bool(values) and all(_count(ctx, v, fn, depth - 1) for v in values)
    return False
