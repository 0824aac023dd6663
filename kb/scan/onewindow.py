"""A TensorFlow max-pool with one window along its pooled axis: the text-CNN pattern.

A text CNN convolves an embedded sentence of `sequence_length` words with a `[filter_size, embedding_size,
1, num_filters]` filter (stride 1, "VALID"), which leaves `sequence_length - filter_size + 1` rows, and
max-pools them with `ksize=[1, sequence_length - filter_size + 1, 1, 1]`, "VALID": the window is as tall
as its input, so there is exactly one window along that axis whatever the stride, and the other axes'
windows are 1. No input lies in two windows, so each receives at most one gradient and the cuDNN
backward adds nothing in a varying order (the record's condition: overlapping windows). The extents are
read from the code only: the window written as `input_extent - kernel_extent + 1` with the very names (or
numbers) of the placeholder's extent and the filter's, each bound once in the scope, through a chain of
single assignments (elementwise activations, `bias_add`, `expand_dims(x, -1)`, `embedding_lookup`)
from the placeholder to the convolution and from it to the pool. Anything else is left to the report.
"""

from __future__ import annotations

import ast

from kb.scan.context import Context
from kb.scan.nodes import call_argument, iwalk


# ops whose output keeps every axis of their first tensor argument (elementwise, bias_add)
_SAME_SHAPE = frozenset({"relu", "relu6", "elu", "selu", "leaky_relu", "tanh", "sigmoid", "bias_add", "dropout",
                         "identity", "softplus", "gelu", "swish", "silu"})
_DEPTH = 8


def _tail(ctx: Context, node: ast.AST) -> str | None:
    """A TensorFlow function's last name (`relu` for `tf.nn.relu`), None when not TensorFlow's."""
    if not isinstance(node, ast.Call):
        return None
    name = ctx.written(node.func)
    if name is None or not (name.startswith("tensorflow.") or name.startswith("tf.")):
        return None
    return name.rsplit(".", 1)[-1]


def _key(node: ast.AST) -> str:
    return ast.dump(node, annotate_fields=False)


class _Flow:
    """Reaching single assignments in one scope: the last `target = value` before a use, in a statement
    list that holds the use, with no other store of the target between them (so it is the value the use
    sees, a loop's earlier body statement included)."""

    def __init__(self, ctx: Context, scope: ast.AST) -> None:
        self.ctx = ctx
        self.assigns: dict[str, list[ast.Assign]] = {}
        self.stores: dict[str, list[int]] = {}
        self.parent: dict[int, ast.AST] = {}
        for sub in iwalk(scope):
            for child in ast.iter_child_nodes(sub):
                self.parent[id(child)] = sub
            if isinstance(sub, (ast.Name, ast.Attribute)) and isinstance(sub.ctx, (ast.Store, ast.Del)):
                self.stores.setdefault(_load_key(sub), []).append(sub.lineno)
            elif isinstance(sub, ast.Assign) and len(sub.targets) == 1:
                self.assigns.setdefault(_load_key(sub.targets[0]), []).append(sub)
            elif isinstance(sub, ast.arg):
                self.stores.setdefault(_key(ast.Name(sub.arg, ast.Load())), []).append(sub.lineno)

    def _blocks(self, node: ast.AST) -> set[int]:
        """The ids of the statements enclosing the node (their statement lists hold it)."""
        out = set()
        while id(node) in self.parent:
            node = self.parent[id(node)]
            out.add(id(node))
        return out

    def value(self, node: ast.AST) -> ast.AST:
        """The value reaching a name or `self.x` (the node itself when not one plain assignment)."""
        for _ in range(_DEPTH):
            if not isinstance(node, (ast.Name, ast.Attribute)):
                return node
            key = _key(node)
            line = getattr(node, "lineno", 0)
            before = [a for a in self.assigns.get(key, []) if a.lineno < line]
            if not before:
                return node
            last = max(before, key=lambda a: a.lineno)
            holder = self.parent.get(id(last))
            while isinstance(holder, (ast.With, ast.AsyncWith)):  # a `with` body runs through
                holder = self.parent.get(id(holder))
            if holder is None or id(holder) not in self._blocks(node) \
                    or any(last.lineno < at < line for at in self.stores.get(key, [])) \
                    or sum(at == last.lineno for at in self.stores.get(key, [])) != 1:
                return node
            node = last.value
        return node

    def fixed(self, node: ast.AST) -> bool:
        """Every name in the expression is bound at most once in the scope (a loop variable counts once)."""
        return all(len(self.stores.get(_key(ast.Name(n.id, ast.Load())), [])) <= 1
                   for n in iwalk(node) if isinstance(n, ast.Name))


def _ints(flow: _Flow, node: ast.AST | None) -> list[ast.AST] | None:
    node = flow.value(node) if node is not None else None
    if isinstance(node, (ast.List, ast.Tuple)) and not any(isinstance(e, ast.Starred) for e in node.elts):
        return list(node.elts)
    return None


def _is(node: ast.AST, number: int) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) is int and node.value == number


def _load_key(node: ast.AST) -> str:
    return _key(node).replace("Store()", "Load()").replace("Del()", "Load()")


def _same(a: ast.AST, b: ast.AST) -> bool:
    if isinstance(a, ast.Constant) and isinstance(b, ast.Constant):
        return type(a.value) is int and type(b.value) is int and a.value == b.value
    return _key(a) == _key(b)


def _input_extent(flow: _Flow, node: ast.AST, axis: int) -> ast.AST | None:
    """The expression of the tensor's extent along `axis`, read back to a `tf.placeholder` shape."""
    for _ in range(_DEPTH):
        node = flow.value(node)
        tail = _tail(flow.ctx, node)
        if tail is None or not isinstance(node, ast.Call):
            return None
        if tail == "placeholder":
            shape = _ints(flow, call_argument(node, ("shape",), 1))
            return shape[axis] if shape is not None and axis < len(shape) else None
        if tail == "expand_dims":
            where = call_argument(node, ("axis", "dim"), 1)
            if where is None or not (isinstance(where, ast.UnaryOp) and isinstance(where.op, ast.USub) and _is(where.operand, 1)
                                     or isinstance(where, ast.Constant) and type(where.value) is int and where.value > axis):
                return None
        elif tail == "embedding_lookup":  # the ids' axes, then the embedding's
            ids = call_argument(node, ("ids",), 1)
            if ids is None:
                return None
            node = ids
            continue
        elif tail not in _SAME_SHAPE:
            return None
        first = call_argument(node, ("input", "value", "x", "features"), 0)
        if first is None:
            return None
        node = first
    return None


def _kernel_extent(flow: _Flow, node: ast.AST, axis: int) -> ast.AST | None:
    """The filter's extent along spatial `axis` (0-based), read from `tf.Variable(init(shape))` or
    `tf.get_variable(name, shape)`."""
    node = flow.value(node)
    tail = _tail(flow.ctx, node)
    if not isinstance(node, ast.Call):
        return None
    if tail == "Variable":
        given = call_argument(node, ("initial_value",), 0)
        init = flow.value(given) if given is not None else None

        if not isinstance(init, ast.Call) or _tail(flow.ctx, init) not in ("truncated_normal", "random_normal", "random_uniform", "zeros", "ones"):
            return None
        shape = _ints(flow, call_argument(init, ("shape",), 0))
    elif tail == "get_variable":
        shape = _ints(flow, call_argument(node, ("shape",), 1))
    else:
        return None
    return shape[axis] if shape is not None and len(shape) == 4 else None


def _conv(flow: _Flow, node: ast.AST) -> ast.Call | None:
    """The `tf.nn.conv2d` the pooled tensor comes from, through elementwise ops."""
    for _ in range(_DEPTH):
        node = flow.value(node)
        tail = _tail(flow.ctx, node)
        if not isinstance(node, ast.Call) or tail is None:
            return None
        if tail == "conv2d":
            return node
        if tail not in _SAME_SHAPE:
            return None
        first = call_argument(node, ("input", "value", "x", "features"), 0)
        if first is None:
            return None
        node = first
    return None


def _valid(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.upper() == "VALID"


def one_window(ctx: Context, node: ast.Call) -> bool:
    """`tf.nn.max_pool(h, ksize=[1, A - B + 1, 1, 1], strides=..., padding="VALID")` where `h` is a stride-1
    VALID `tf.nn.conv2d` (NHWC) of a tensor whose extent along that axis is `A`, with a filter of extent
    `B` there (same names, or the same numbers): one window along that axis, windows of 1 elsewhere."""
    window_node = call_argument(node, ("ksize",), 1)
    if not isinstance(window_node, (ast.List, ast.Tuple)) or len(window_node.elts) != 4:
        return False
    if not _valid(call_argument(node, ("padding",), 3)) or any(k.arg == "data_format" for k in node.keywords):
        return False
    pooled = [i for i, e in enumerate(window_node.elts) if not _is(e, 1)]
    if len(pooled) != 1 or pooled[0] not in (1, 2):
        return False
    axis = pooled[0]
    source = call_argument(node, ("value", "input"), 0)
    scope = ctx.fn_nodes[-1] if ctx.fn_nodes else ctx.tree
    if source is None or scope is None:
        return False
    flow = _Flow(ctx, scope)
    conv = _conv(flow, source)
    if conv is None or not _valid(call_argument(conv, ("padding",), 3)) or any(k.arg in ("data_format", "dilations") for k in conv.keywords):
        return False
    strides = _ints(flow, call_argument(conv, ("strides",), 2))
    if strides is None or len(strides) != 4 or not _is(strides[axis], 1):
        return False
    image, kernel = call_argument(conv, ("input",), 0), call_argument(conv, ("filters", "filter"), 1)
    if image is None or kernel is None:
        return False
    extent, size = _input_extent(flow, image, axis), _kernel_extent(flow, kernel, axis - 1)
    if extent is None or size is None:
        return False
    window = window_node.elts[axis]
    if isinstance(window, ast.Constant) and isinstance(extent, ast.Constant) and isinstance(size, ast.Constant):
        numbers = [n.value for n in (window, extent, size) if type(n.value) is int]
        return len(numbers) == 3 and numbers[0] == numbers[1] - numbers[2] + 1
    return isinstance(window, ast.BinOp) and isinstance(window.op, ast.Add) and _is(window.right, 1) \
        and isinstance(window.left, ast.BinOp) and isinstance(window.left.op, ast.Sub) \
        and _same(window.left.left, extent) and _same(window.left.right, size) and flow.fixed(window)
