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

from kb.scan import follow, inputgrads
from kb.scan.context import Context
from kb.scan.nodes import walk
from kb.scan.syntax import last_name

_INPUTS = frozenset({"Input", "InputLayer"})
_FIRST = frozenset({"input_shape", "input_dim", "batch_input_shape"})  # Keras reads them on a model's first layer only
_GAN_WORDS = ("discriminator", "critic", "adversar")
# An input the program makes itself, to change it by a gradient (style transfer's `x = tf.Variable(x, trainable=True)`
# handed to an L-BFGS wrapper, `Input(tensor=combination_image)`): its first layer's data gradient is used.
_OWN_INPUTS = ("Variable(", "variable(", "placeholder(", "(tensor=", " tensor=")
_PLAIN: weakref.WeakKeyDictionary[ast.AST, bool] = weakref.WeakKeyDictionary()
# Layers with no weights: what they hand on of the data is still data (no gradient is asked for it).
_WEIGHT_FREE = frozenset({"ZeroPadding1D", "ZeroPadding2D", "ZeroPadding3D", "Cropping1D", "Cropping2D", "Cropping3D",
                          "Reshape", "Permute", "Rescaling", "Resizing", "Activation", "Dropout", "SpatialDropout1D",
                          "SpatialDropout2D", "SpatialDropout3D", "GaussianNoise", "GaussianDropout"})
_DEPTH = 12  # a first convolution behind four optional Lambda layers (ssd_keras) is 9 steps from its Input


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
            return _model_input(ctx, parent.args[0], scope, parent, _DEPTH)
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


def _model_input(ctx: Context, value: ast.expr, scope: ast.AST, at: ast.AST, depth: int,
                 seen: frozenset[int] = frozenset()) -> bool:
    """`keras.Input(...)`; a layer with no weights applied to one (`ZeroPadding2D((1, 1))(img_input)`: its output is
    still the data); or a name that holds one where `at` reads it (the binding that reaches it, else every
    assignment of the name in the scope, each read once: `x1 = Lambda(f)(x1)` under an `if` names itself)."""
    if depth <= 0:
        return False
    if isinstance(value, ast.Name):
        reached = follow.reaching(scope, at, value.id)
        if reached is not None:
            return id(reached) in seen or _model_input(ctx, reached, scope, reached, depth - 1, seen | {id(reached)})
        values = ctx.assigned_in(scope).get(value.id, [])
        if values and not all(id(v) in seen or _model_input(ctx, v, scope, v, depth - 1, seen | {id(v)}) for v in values):
            return False
        # a parameter reassigned only on some paths (`if downsample: x = ZeroPadding2D(...)(x)`) still reaches the use
        # as the caller passed it: its callers must hand the input too (hunglc007/tensorflow-yolov4-tflite)
        return bool(values) and not _is_parameter(value.id, scope) or _parameter_input(ctx, value.id, scope, depth - 1)
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Call) and value.args \
            and (_last(ctx, value.func.func) in _WEIGHT_FREE or _weight_free_lambda(ctx, value.func, scope)):
        return _model_input(ctx, value.args[0], scope, value, depth - 1, seen)
    return _is_input(ctx, value)


_MAKES_WEIGHTS = ("Variable", "variable(", "add_weight", "get_variable", "self.")


def _weight_free_lambda(ctx: Context, layer: ast.Call, scope: ast.AST) -> bool:
    """`Lambda(fn, ...)`: a layer with no weights of its own, whose function (a lambda, or a def of the scope or the
    file) makes and reads none either (pierluigiferrari/ssd_keras's `Lambda(identity_layer)`,
    `Lambda(input_mean_normalization)` between the input and the first convolution): its output is still the data."""
    if _last(ctx, layer.func) != "Lambda" or not layer.args:
        return False
    fn: ast.AST | None = layer.args[0]
    if isinstance(fn, ast.Name):
        name = fn.id
        fn = next((d for d in (*walk(scope), *(ctx.tree.body if ctx.tree is not None else ()))
                   if isinstance(d, (ast.FunctionDef, ast.AsyncFunctionDef)) and d.name == name), None)
    if not isinstance(fn, (ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    text = "\n".join(ctx.lines[fn.lineno - 1:fn.end_lineno or fn.lineno])
    return not any(word in text for word in _MAKES_WEIGHTS)


def _is_parameter(name: str, scope: ast.AST) -> bool:
    return isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
        a.arg == name for a in (*scope.args.posonlyargs, *scope.args.args, *scope.args.kwonlyargs))


def _parameter_input(ctx: Context, name: str, scope: ast.AST, depth: int) -> bool:
    """`name` is a positional parameter of the function `scope`, and every call of the function in the file (at
    least one) hands it the model's input (mobilenet's `_conv_block(img_input, 32, alpha)`)."""
    if not isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)) or ctx.tree is None:
        return False
    params = [a.arg for a in (*scope.args.posonlyargs, *scope.args.args)]
    if name not in params:
        return False
    position = params.index(name)
    owners = [n for n in ctx.tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    calls = [(owner, c) for owner in owners for c in walk(owner)
             if isinstance(c, ast.Call) and isinstance(c.func, ast.Name) and c.func.id == scope.name]
    return bool(calls) and all(
        len(c.args) > position and not any(isinstance(a, ast.Starred) for a in c.args[:position + 1])
        and _model_input(ctx, c.args[position], owner, c, depth) for owner, c in calls)


def _is_input(ctx: Context, value: ast.expr) -> bool:
    if not isinstance(value, ast.Call):
        return False
    name = ctx.written(value.func)
    if name is None:  # `Input` of `from keras.layers import *`
        return isinstance(value.func, ast.Name) and value.func.id in _INPUTS and any("keras" in line for line in ctx.lines)
    return name.rpartition(".")[2] in _INPUTS and name.split(".")[0] in ("keras", "tf", "Input", "InputLayer")


def _last(ctx: Context, func: ast.expr) -> str:
    """The last part of a layer class's name, as imported or written."""
    name = ctx.written(func)
    return name.rpartition(".")[2] if name is not None else last_name(func) or ""
