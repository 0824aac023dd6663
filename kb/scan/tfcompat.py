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
# TF 1's other names of a `tf.compat.v1` function: TensorFlow exports one function under several TF 1 names
# (image_ops_impl.resize_images is `tf.compat.v1.image.resize` and `tf.compat.v1.image.resize_images`; TF 1 code
# writes the latter as `tf.image.resize_images`), which the generated table lists under one of them only.
V1_SPELLINGS = {"tf.image.resize_images": "tf.compat.v1.image.resize",
                "tf.compat.v1.image.resize_images": "tf.compat.v1.image.resize"}
# TF 1 enumerations that were numbers where the TF 2 op takes strings: TF 1's resize takes ResizeMethodV1
# (BILINEAR = 0, NEAREST_NEIGHBOR = 1, BICUBIC = 2, AREA = 3), and a call often writes the number itself
# (`method=1`); TF 2's op is read with the method's string.
V1_NUMBERS: dict[str, tuple[str, dict[int, str]]] = {
    "image.resize": ("method", {0: "bilinear", 1: "nearest", 2: "bicubic", 3: "area"})}


def exported(name: str) -> str:
    """The public name of a function spelled through TensorFlow's implementation modules
    (`tf.python.ops.gradients.gradients` is `tf.compat.v1.gradients`); any other name as it is."""
    return PRIVATE.get(name, name) if name.startswith("tf.python.") else name


_V2 = "tf.compat.v2."


def tf2_name(name: str, wanted: frozenset[str]) -> str | None:
    """`tf.X` for `tf.compat.v1.X` when TensorFlow makes it the op `tf.X` and a record lists `tf.X`; the
    public name a record lists for a private spelling of it; and `tf.X` for `tf.compat.v2.X`, TensorFlow 2's own
    API under its compat name (google-research/pegasus's `tf.compat.v2.nn.dropout`), whatever the records list."""
    if name.startswith(_V2):
        return "tf." + name[len(_V2):]
    public = exported(name)
    if public != name and (public in wanted or not public.startswith(PREFIX)):
        return public if public in wanted else None
    name = V1_SPELLINGS.get(public, public)
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
    name = V1_SPELLINGS.get(name, name)
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
    numbers = V1_NUMBERS.get(V1_SPELLINGS.get(exported(written), exported(written))[len(PREFIX):])
    if numbers:  # `method=1`: the TF 2 op's "nearest"
        out = [(k, numbers[1].get(v, v) if k == numbers[0] and type(v) is int else v) for k, v in out]
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
