"""Whether a TensorFlow convolution's input is visibly a `tf.placeholder` (tf.cudnn-conv-backprop-data).

A placeholder is fed data by `Session.run`'s `feed_dict`; nothing asks for a gradient with respect to it, and a
TF 1 session runs only the part of the graph its fetches need: the backprop-to-data kernel of a convolution
applied to a placeholder (a network's first layer on its input images) is built by `tf.gradients` and never run.
Followed through names (kb/scan/follow.py): `x = tf.placeholder(...)`, a parameter every caller of the file passes
one to.
"""

from __future__ import annotations

import ast

from kb.scan import follow
from kb.scan.context import Context

_PLACEHOLDERS = frozenset({"tf.placeholder", "tf.compat.v1.placeholder"})
_DEPTH = 4


def is_placeholder(ctx: Context, node: ast.AST | None, where: follow.Where | None = None, depth: int = _DEPTH) -> bool:
    if node is None or depth <= 0:
        return False
    if where is None:
        where = follow.Where(ctx.fn_nodes[-1] if ctx.fn_nodes else ctx.tree, follow.top_level(ctx), False)
    if isinstance(node, ast.Call):
        return not where.foreign and ctx.written(node.func) in _PLACEHOLDERS
    if isinstance(node, ast.Name):
        values = follow.values_of(ctx, where, node.id)
        return bool(values) and all(i is None and is_placeholder(ctx, v, w, depth - 1) for v, w, i in values or ())
    return False
