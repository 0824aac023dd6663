"""Max-pools whose windows tile their input: the code rule `windows-do-not-overlap`.

A max-pool's backward pass adds each output's gradient into the one input its window's maximum came
from. The CUDA and cuDNN kernels do that with atomic adds, and the records of them (cuDNN's max-pool
backprop in TensorFlow, PyTorch's max_pool3d backward) say the order of those adds varies only where
windows overlap (a stride smaller than the window). A stride at least the window's, in every dimension,
leaves every input inside at most one window, so it receives at most one gradient and there is no sum
whose order could vary. Padding (TensorFlow's "SAME", PyTorch's `padding=`, `ceil_mode`) only moves or
cuts windows at the borders, it never makes two of them share an input; a PyTorch dilation above 1
spreads a window out, so two can interleave, and is not ruled out.
"""

from __future__ import annotations

import ast

from kb.scan import onewindow
from kb.scan.context import Context
from kb.scan.nodes import iwalk
from kb.scan.resolvers import resolver
from kb.scan.syntax import Unknown, plain_literal

# (window, stride, dilation) positions: functions take the input first, layer classes do not
_FUNCTION = (1, 2, 4)
_LAYER = (0, 1, 3)
_WINDOW = ("ksize", "pool_size", "kernel_size")
_STRIDE = ("strides", "stride")
_DEFAULT_POOL = {"1D": (2,), "2D": (2, 2), "3D": (2, 2, 2)}  # Keras's pool_size when not given


def _given(node: ast.Call, names: tuple[str, ...], position: int) -> ast.AST | None:
    found = next((k.value for k in node.keywords if k.arg in names), None)
    if found is None and position < len(node.args) and not any(isinstance(a, ast.Starred) for a in node.args[:position + 1]):
        found = node.args[position]
    return found


def _sizes(value: object) -> tuple[int, ...] | None:
    """A literal window or stride as a tuple of ints (`2` as `(2,)`), None when it is not one."""
    if isinstance(value, int) and not isinstance(value, bool):
        return (value,)
    if isinstance(value, (tuple, list)) and value and all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        return tuple(value)
    return None


def _tiles(window: tuple[int, ...], stride: tuple[int, ...]) -> bool:
    """Every stride at least its window (one number for all dimensions on either side)."""
    if len(window) == 1 or len(stride) == 1:
        return all(s >= w for w in window for s in stride)
    return len(window) == len(stride) and all(s >= w for w, s in zip(window, stride))


@resolver("windows-do-not-overlap", "rule")
def windows_do_not_overlap(ctx: Context, op: str, node: ast.Call, data: ast.AST | None) -> str | None:
    """A max-pool whose literal stride is at least its window in every dimension (`MaxPooling2D((4, 4))`,
    whose `strides` default to `pool_size`; `tf.nn.max_pool2d(x, ksize=2, strides=2, padding="VALID")`;
    `nn.MaxPool3d(2)`, whose `stride` defaults to `kernel_size`), with no dilation: the windows tile the
    input, so each input receives at most one gradient and the backward pass adds nothing in a varying
    order. Padding never makes such windows overlap."""
    name = op.rsplit(".", 1)[-1]
    layer = name[:1].isupper()
    at_window, at_stride, at_dilation = _LAYER if layer else _FUNCTION
    dilation = _given(node, ("dilation", "dilation_rate"), at_dilation) if op.startswith("torch.") else None
    if dilation is not None and _sizes(ctx.literal(dilation)) not in ((1,), (1, 1), (1, 1, 1)):
        return None
    window_node = _given(node, _WINDOW, at_window)
    if window_node is None and layer and not op.startswith("torch."):
        window: object = _DEFAULT_POOL.get(name[-2:].upper())
    else:
        window = ctx.literal(window_node) if window_node is not None else None
    stride_node = _given(node, _STRIDE, at_stride)
    stride = ctx.literal(stride_node) if stride_node is not None else None
    if stride is None or stride == () or stride == []:  # Keras's and PyTorch's default: the window
        if not (layer or op.startswith("torch.")):
            return None  # TensorFlow's own functions need strides
        if stride_node is None or plain_literal(stride_node) is None:  # the stride is the window itself, whatever its size
            return "the stride defaults to the pooling window, so the windows do not overlap and each input gets at " \
                   "most one gradient"
        stride = window
    w = None if isinstance(window, Unknown) else _sizes(window)
    s = None if isinstance(stride, Unknown) else _sizes(stride)
    if w is None or s is None or not _tiles(w, s):
        if not layer and not op.startswith("torch.") and onewindow.one_window(ctx, node):
            return "the window spans the whole VALID convolution output along the pooled axis (input extent " \
                   "- kernel extent + 1) and is 1 along the others: one window, so each input gets at most one gradient"
        return None
    return "the stride is at least the pooling window, so the windows do not overlap and each input gets at most one gradient"


# What adds two values: a window reduced with it sums (sum or average pooling)
_ADDS = frozenset({"jax.lax.add", "jax.numpy.add", "operator.add"})


@resolver("window-sums", "rule")
def window_sums(ctx: Context, op: str, node: ast.Call, data: ast.AST | None) -> str | None:
    """`jax.lax.reduce_window` whose computation visibly adds (`jax.lax.add`, `jnp.add`, `operator.add`,
    `lambda a, b: a + b`): sum or average pooling, whose gradient spreads each output's gradient over its
    window (a padded convolution). Only a max or min window picks one input, the select-and-scatter its
    gradient lowers to."""
    if op != "jax.lax.reduce_window":
        return None
    given = ctx.argument(op, node, "computation")
    if given is None:
        return None
    if _addition(ctx, given):
        return "the window is reduced with an addition (sum pooling): no select-and-scatter in its gradient"
    passed = _passed_reduction(ctx, given)
    if passed and all(_addition(ctx, value) for value in passed):
        return "every call of the function in this file passes an addition as the window's reduction (sum " \
               "pooling): no select-and-scatter in its gradient"
    return None


def _addition(ctx: Context, given: ast.AST) -> bool:
    return ctx.dotted(given) in _ADDS or isinstance(given, ast.Lambda) and _adds(given)


def _passed_reduction(ctx: Context, given: ast.AST) -> list[ast.expr]:
    """A reduction that is a parameter of the enclosing module-level function (a `pool(inputs, init,
    reduce_fn, ...)` helper) that the function never rebinds: what every call of it in the file passes
    (empty when unknown: a call that leaves it out or passes *args, or no call)."""
    fn, tree = ctx.fn_nodes[-1] if ctx.fn_nodes else None, ctx.tree
    if not isinstance(given, ast.Name) or not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) \
            or tree is None or fn not in tree.body or ctx.defs.get(fn.name) is not fn:
        return []
    args = fn.args
    if given.id not in {a.arg for a in (*args.posonlyargs, *args.args)}:
        return []
    if any(isinstance(n, ast.Name) and n.id == given.id and not isinstance(n.ctx, ast.Load) for n in iwalk(fn)):
        return []  # rebound in the function
    named = sum(isinstance(n, ast.Name) and n.id == fn.name for n in iwalk(tree))
    if named != sum(isinstance(c.func, ast.Name) and c.func.id == fn.name for c in ctx.all_calls):
        return []  # handed on (`map(pool, ...)`, `partial(pool, ...)`): called where this file does not show
    return ctx.passed(fn, given.id)


def _adds(fn: ast.Lambda) -> bool:
    """`lambda a, b: a + b` (either order): the lambda adds its two parameters."""
    names = [a.arg for a in fn.args.args]
    body = fn.body
    return len(names) == 2 and not fn.args.vararg and isinstance(body, ast.BinOp) and isinstance(body.op, ast.Add) \
        and isinstance(body.left, ast.Name) and isinstance(body.right, ast.Name) and {body.left.id, body.right.id} == set(names)
