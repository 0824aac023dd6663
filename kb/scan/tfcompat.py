"""TensorFlow 1 names kept under `tf.compat.v1`, read as the TF 2 op they are.

`import tensorflow.compat.v1 as tf` keeps TF 1 code running on TF 2: every `tf.X` of such a file is
`tf.compat.v1.X`, which no record lists. TensorFlow itself says which of those are the op `tf.X`
(kb/scan/tfcompat_names.py, generated from the installed TensorFlow): the same object, or TF 1's
endpoint of the same kernel with TF 1's parameters. Only those are read as `tf.X`; a `tf.compat.v1`
name that is neither (a TF 1-only op) keeps its own name, which a record may list as an alias.

Code that wants TensorFlow's original function imports it from the private module that defines or
re-exports it (`from tensorflow.python.ops import gradients as lib; lib.gradients`): the same object as a
public op, which TensorFlow also says (kb/scan/tfprivate_names.py), so it is read as that op (RULES Y4-1).
"""

from __future__ import annotations

import ast
import operator

from kb.scan.tfcompat_names import SAME, V1
from kb.scan.tfprivate_names import PRIVATE

PREFIX = "tf.compat.v1."
# TF 1 parameter names of the same argument under TF 2's name (TF 1's own deprecation aliases).
RENAMED = {"filter": "filters", "value": "input", "dim": "axis", "keep_dims": "keepdims", "reduction_indices": "axis"}


def exported(name: str) -> str:
    """The public name of a function spelled through TensorFlow's implementation modules
    (`tf.python.ops.gradients.gradients` is `tf.compat.v1.gradients`); any other name as it is."""
    return PRIVATE.get(name, name) if name.startswith("tf.python.") else name


def tf2_name(name: str, wanted: frozenset[str]) -> str | None:
    """`tf.X` for `tf.compat.v1.X` when TensorFlow makes it the op `tf.X` and a record lists `tf.X`; the
    public name a record lists for a private spelling of it."""
    public = exported(name)
    if public != name and (public in wanted or not public.startswith(PREFIX)):
        return public if public in wanted else None
    name = public
    if not name.startswith(PREFIX):
        return None
    tail = name[len(PREFIX):]
    if (tail in SAME or tail in V1) and "tf." + tail in wanted:
        return "tf." + tail
    return None


def v1_parameters(name: str) -> tuple[str, ...] | None:
    """TF 1's positional parameters of `tf.compat.v1.X` where they differ from the TF 2 op's (None: the
    same object, so TF 2's signature reads the call)."""
    name = exported(name)
    return V1.get(name[len(PREFIX):]) if name.startswith(PREFIX) else None


def as_tf2(written: str, node: ast.Call, args: list[object],
           kwargs: tuple[tuple[str, object], ...]) -> tuple[list[object], tuple[tuple[str, object], ...]]:
    """A call's arguments as the TF 2 op reads them. For TF 1's endpoint `written` (`tf.compat.v1.nn.dropout`),
    keywords: positional ones named by TF 1's signature, TF 1 names renamed, numbers written as arithmetic
    (`1 - 0.`) read, and `keep_prob` turned into the `rate` it stands for when it is a number. Else unchanged."""
    params = v1_parameters(written)
    if params is None:
        return args, kwargs
    args = [a if n is None else n for n, a in zip((number(a) for a in node.args), args)]
    kwargs = tuple((name, v if n is None else n) for k, (name, v) in zip([k for k in node.keywords if k.arg], kwargs)
                   for n in (number(k.value),))
    named = [*zip(params, args), *kwargs]
    out: list[tuple[str, object]] = []
    for key, value in named:
        if key == "keep_prob":
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                out.append(("rate", 1 - value))
            else:
                out.append(("keep_prob", value))  # not a parameter of TF 2's op: unknown, so nothing is ruled out
            continue
        out.append((RENAMED.get(key, key), value))
    return [], tuple(out)


_ARITHMETIC = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv}


def number(node: ast.AST, depth: int = 4) -> int | float | None:
    """The value of a number written as arithmetic on number literals (`1 - 0.`, `-0.5`), else None: TF 1
    code writes `keep_prob` so (`tf.nn.dropout(x, 1 - self.dropout)` once the default is read in)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return node.value
    if depth <= 0:
        return None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        inner = number(node.operand, depth - 1)
        return None if inner is None else (-inner if isinstance(node.op, ast.USub) else inner)
    if isinstance(node, ast.BinOp) and type(node.op) in _ARITHMETIC:
        left, right = number(node.left, depth - 1), number(node.right, depth - 1)
        if left is None or right is None or (isinstance(node.op, ast.Div) and right == 0):
            return None
        return _ARITHMETIC[type(node.op)](left, right)
    return None
