"""Whether a Keras convolution is a model's first layer, applied to the model's data input (for the rule
input-is-a-placeholder, tf.cudnn-conv-backprop-data).

The gradient a convolution passes back to its input is needed only where something before it takes a gradient.
A model's first layer gets the data itself (`x = Conv2D(32, 3)(inputs)` with `inputs = keras.Input(shape)`, the
first layer of `Sequential([...])`, a layer given `input_shape=`): training differentiates with respect to the
weights, and whatever TensorFlow computes of the data's gradient on the way (an eager tape runs both backprops) is
thrown away, so no result of the run depends on it. Not where the program differentiates with respect to that
input (style transfer, adversarial examples: kb/scan/inputgrads.py), nor in a file that makes an input tensor of its
own (a variable or placeholder of the image it changes by a gradient), nor in one that names a discriminator or
adversarial training, where a generator's output is a model's input and its gradient flows back through the
first layer.
"""

from __future__ import annotations

import ast
import weakref

from kb.scan import inputgrads
from kb.scan.context import Context
from kb.scan.nodes import walk

_INPUTS = frozenset({"Input", "InputLayer"})
_FIRST = frozenset({"input_shape", "input_dim", "batch_input_shape"})  # Keras reads them on a model's first layer only
_GAN_WORDS = ("discriminator", "critic", "adversar")
# An input the program makes itself, to change it by a gradient (style transfer's `x = tf.Variable(x, trainable=True)`
# handed to an L-BFGS wrapper, `Input(tensor=combination_image)`): its first layer's data gradient is used.
_OWN_INPUTS = ("Variable(", "variable(", "placeholder(", "(tensor=", " tensor=")
_PLAIN: weakref.WeakKeyDictionary[ast.AST, bool] = weakref.WeakKeyDictionary()


def on_model_input(ctx: Context, node: ast.Call) -> bool:
    """The Keras layer built by `node` is a model's first layer, on the model's data input (see the module's
    docstring), in a file where nothing differentiates with respect to that input."""
    if ctx.tree is None or not _plain_training(ctx.tree, ctx.lines):
        return False
    if any(k.arg in _FIRST for k in node.keywords):
        return True
    scope = ctx.fn_nodes[-1] if ctx.fn_nodes else ctx.tree
    if scope is None:
        return False
    for parent in walk(scope):
        if isinstance(parent, ast.Call) and parent.func is node and parent.args:
            return _model_input(ctx, parent.args[0], scope)
        if isinstance(parent, ast.List) and any(e is node for e in parent.elts):
            elts = parent.elts
            return elts[0] is node or (len(elts) > 1 and elts[1] is node and _is_input(ctx, elts[0]))
    return False


def _plain_training(tree: ast.Module, lines: list[str]) -> bool:
    """The file neither makes an input tensor of its own, nor differentiates with respect to its input, nor names a
    discriminator (one reading per file)."""
    if tree not in _PLAIN:
        text = "\n".join(lines).lower()
        _PLAIN[tree] = not any(word in text for word in (*_GAN_WORDS, *(w.lower() for w in _OWN_INPUTS))) \
            and not inputgrads.only_inputs(tree, lines)
    return _PLAIN[tree]


def _model_input(ctx: Context, value: ast.expr, scope: ast.AST) -> bool:
    """`keras.Input(...)`, or a name every assignment of which in the scope is one."""
    if isinstance(value, ast.Name):
        values = ctx.assigned_in(scope).get(value.id, [])
        return bool(values) and all(_is_input(ctx, v) for v in values)
    return _is_input(ctx, value)


def _is_input(ctx: Context, value: ast.expr) -> bool:
    if not isinstance(value, ast.Call):
        return False
    name = ctx.written(value.func) or ""
    return name.rpartition(".")[2] in _INPUTS and name.split(".")[0] in ("keras", "tf", "Input", "InputLayer")
