"""What the code shows of a tensor's number of dimensions (the `input.ndim` call fact), followed
through the code around a call: a loss whose logits are 4-D segmentation maps runs the spatial
kernel, a classifier's (N, C) logits do not, and the scan tells them apart only by the rank.

Read, within bounds (depth-limited, the file only, plus classes of the same file):
- a reshape to literal sizes (`x.view(n, c, h, w)`: 4), `flatten(1)` (2), a dimension named by a
  transpose or permute (at least that many);
- `F.interpolate(x, size=(h, w))` or `size=img.shape[-2:]` (two spatial sizes: 4), else x's rank;
- shape-keeping functions and methods (`log_softmax`, activations, `.float()`, `.to()`, dropout,
  arithmetic with a number) keep their input's rank;
- a module of the class called on it (`self.conv(x)`): a Conv2d or ConvTranspose2d makes 4, Conv1d 3,
  Conv3d 5, a Linear or an activation keeps the rank, Flatten makes 2, an nn.Sequential applies its
  layers in order; an instance of a class of the file (`model(x)`, `self.net(x)`, a function's
  parameter that every call in the file passes such an instance) gives what its `forward` returns;
  a torchvision classifier (`models.resnet50()`) gives its (N, classes) logits (2), and a data-parallel
  wrapper (`DistributedDataParallel(model)`) what the module it wraps gives;
- a name every assignment of which in the function gives the same rank, or `a, b = f(x)`'s element of
  the tuple every return of a model's `forward` gives; a method's parameter, what every `self.m(...)` passes;
- a factory given its sizes one by one (`torch.zeros(n, t, v)`: 3); a PackedSequence's data, one less
  than the padded tensor packed (`pack_padded_sequence(scores, lengths)`: (tokens, V) of (N, T, V)).

A loss module's rank is read where it is used (kb/scan/lossrank.py, through `at_place`): its calls in the function, and the calls of
the parameter it is handed to in the file's functions; a call with more arguments than the module takes
(`criterion(preds, target, sizes, lengths)` where the name may also hold a CTC loss) is not its call.
"""

from __future__ import annotations

import ast
from typing import NamedTuple

from kb.scan import builders, follow, instances, modelclass, modulelist
from kb.scan.context import Context
from kb.scan.instances import Place
from kb.scan.nodes import call_argument, iwalk
from kb.scan.torchvision_models import MODELS as _TORCHVISION
from kb.scan.syntax import (ONE_OF, Element, Unknown, least_ndim, plain_literal, reshaped_ndim, self_attribute,
                            statements_in)


class Rank(NamedTuple):
    exact: int | None = None
    at_least: int | None = None
    # the last dimension holds a Linear layer's outputs (a classifier's classes), through the shape-keeping
    # steps after it: a loss that reads classes at dim 1 on it is on the (N, C) form (`classes_at_1`)
    last: bool = False


UNKNOWN = Rank()
_DEPTH = 16
_INTERPOLATE = frozenset({"torch.nn.functional.interpolate", "torch.nn.functional.upsample",
                          "torch.nn.functional.upsample_bilinear", "torch.nn.functional.upsample_nearest"})
_KEEP_FUNCTIONS = frozenset(f"torch.nn.functional.{n}" for n in (
    "log_softmax", "softmax", "relu", "gelu", "silu", "leaky_relu", "elu", "sigmoid", "tanh", "dropout", "dropout2d",
    "batch_norm", "layer_norm", "group_norm", "instance_norm", "normalize", "hardtanh", "relu6", "mish")) | frozenset(
    f"torch.{n}" for n in ("log_softmax", "softmax", "relu", "sigmoid", "tanh", "exp", "log", "clamp", "abs"))
_KEEP_METHODS = frozenset({"float", "double", "half", "bfloat16", "long", "int", "short", "bool", "to", "cuda", "cpu",
                           "contiguous", "clone", "detach", "log_softmax", "softmax", "relu", "sigmoid", "tanh", "exp", "log", "clamp", "type_as"})
_CONV = {"torch.nn.Conv1d": 3, "torch.nn.Conv2d": 4, "torch.nn.Conv3d": 5, "torch.nn.ConvTranspose1d": 3,
         "torch.nn.ConvTranspose2d": 4, "torch.nn.ConvTranspose3d": 5, "torch.nn.LazyConv2d": 4}
_KEEP_MODULES = frozenset(f"torch.nn.{n}" for n in (
    "Linear", "LazyLinear", "ReLU", "GELU", "SiLU", "LeakyReLU", "ELU", "Tanh", "Sigmoid", "Dropout", "Dropout2d",
    "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "LayerNorm", "GroupNorm", "InstanceNorm2d", "LogSoftmax", "Softmax",
    "Identity", "Upsample", "UpsamplingBilinear2d", "UpsamplingNearest2d", "AdaptiveAvgPool2d", "AdaptiveMaxPool2d",
    "MaxPool2d", "AvgPool2d", "ReLU6", "Hardtanh", "Mish", "ReflectionPad2d", "ZeroPad2d"))

# Layers whose output's last dimension is their features; the shape-keeping modules that move no dimension.
_LINEAR = frozenset({"torch.nn.Linear", "torch.nn.LazyLinear", "torch.nn.Bilinear"})
_MOVES_LAST = ("Pool", "Upsampl", "Pad", "BatchNorm2d", "BatchNorm3d", "InstanceNorm2d", "GroupNorm", "Dropout2d")
# Losses that read the classes at dim 1: on a tensor whose classes are last, only the (N, C) form fits.
_CLASSES_AT_1 = frozenset({"torch.nn.NLLLoss", "torch.nn.CrossEntropyLoss", "torch.nn.functional.nll_loss",
                           "torch.nn.functional.cross_entropy"})
# 2-D matrix products: their result is 2-D whatever feeds them.
_MATRIX = frozenset({"torch.mm", "torch.spmm", "torch.sparse.mm", "torch.addmm"})
_PACKS = frozenset({"torch.nn.utils.rnn.pack_padded_sequence"})
_VECTORS = frozenset({"torch.arange", "torch.randperm", "torch.linspace"})  # 1-D whatever their arguments
_SIZED = frozenset(f"torch.{n}" for n in ("zeros", "ones", "empty", "randn", "rand"))  # sizes given one by one
_EINOPS = frozenset({"einops.rearrange", "einops.reduce", "einops.repeat"})

# Wrappers whose call runs the module they wrap (its first argument) and returns what it returns, and helpers
# that hand back the module they are given, its layers swapped for ones of the same shapes (synchronised batch
# norms, a compiled or scripted forward, a reparametrised weight).
_WRAPPERS = frozenset({"torch.nn.parallel.DistributedDataParallel", "torch.nn.DataParallel",
                       "torch.nn.parallel.DataParallel", "torch.nn.SyncBatchNorm.convert_sync_batchnorm",
                       "torch.nn.modules.batchnorm.SyncBatchNorm.convert_sync_batchnorm", "torch.compile",
                       "torch.jit.script", "torch.nn.utils.spectral_norm", "torch.nn.utils.weight_norm"})
# torchvision's models that return something else than (N, classes) logits (boxes, masks, flows).
_NOT_CLASSIFIERS = (".detection.", ".segmentation.", ".optical_flow.")


def _classifier(name: str | None) -> bool:
    """A torchvision classifier or its builder (`torchvision.models.resnet50`): its forward gives (N, classes)."""
    return name is not None and name in _TORCHVISION and not any(part in name for part in _NOT_CLASSIFIERS)


def of(ctx: Context, node: ast.AST | None, op: str | None = None, call: ast.Call | None = None) -> Rank:
    """The rank the code shows for `node`, read where the walk is now, as the input of `op` (in `call`, whose
    target a loss's input rank may be read from: `with_target`)."""
    if node is None:
        return UNKNOWN
    place = Place(ctx.fn_nodes[-1] if ctx.fn_nodes else ctx.tree, ctx.class_nodes[-1] if ctx.class_nodes else None,
                  getattr(node, "lineno", 1 << 30), tuple(ctx.fn_nodes[:-1]))
    return with_target(ctx, classes_at_1(_rank(ctx, node, place, _DEPTH), op), op, call, place)


def at_place(ctx: Context, node: ast.AST, place: Place, op: str | None, call: ast.Call | None = None) -> Rank:
    """The rank the code shows for `node` read at `place` (a call found away from the walk), as the input of `op`."""
    return with_target(ctx, classes_at_1(_rank(ctx, node, place, _DEPTH), op), op, call, place)


def with_target(ctx: Context, shown: Rank, op: str | None, call: ast.Call | None, place: Place) -> Rank:
    """A loss that reads class indices (NLL, cross-entropy) whose target is visibly 1-D (`labels =
    torch.arange(n)`, `y.view(-1)`): its input is (N, C), or (C) with a target of probabilities, never the 3-D to 6-D
    spatial form, which takes an (N, d1, ...) target. Unknown input ranks only; a shown rank stands."""
    if op not in _CLASSES_AT_1 or shown.exact is not None or call is None or shown.at_least:
        return shown
    given = call_argument(call, ("target",), 1)
    if given is not None and _rank(ctx, given, place, _DEPTH).exact == 1:
        return Rank(2)
    return shown


def classes_at_1(shown: Rank, op: str | None) -> Rank:
    """A loss that reads the classes at dim 1 (NLL, cross-entropy) called on a tensor whose last dimension is a
    Linear layer's outputs: classes last and at dim 1 is the (N, C) form (2-D); an (N, T, C) input would read
    T as the classes and raise on its target's shape, so a spatial form never runs there."""
    if op in _CLASSES_AT_1 and shown.last and shown.exact is None and (shown.at_least or 0) <= 2:
        return Rank(2)
    return shown._replace(last=False)


def _rank(ctx: Context, node: ast.AST | None, place: Place, depth: int) -> Rank:
    if depth <= 0 or node is None:
        return UNKNOWN
    exact = reshaped_ndim(node)
    if exact is not None:
        return Rank(exact)
    least = least_ndim(node)
    if least is not None:
        return Rank(None, least)
    if isinstance(node, ast.Name):
        value = instances.last_value(ctx, place, node.id)
        enclosing = instances.enclosing(ctx, place, node.id) if value is None else None
        if enclosing is not None:  # a closure's free name: the function around it binds it
            return _rank(ctx, node, enclosing, depth - 1)
        if value is None and isinstance(place.fn, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                place.fn in ctx.defs.values() and node.id in instances.parameters(place.fn):
            return _passed(ctx, place.fn, node.id, place, depth)
        if value is None and place.cls is not None and isinstance(place.fn, (ast.FunctionDef, ast.AsyncFunctionDef)) \
                and place.fn in place.cls.body and node.id in instances.parameters(place.fn):
            found = {_rank(ctx, v, Place(m, place.cls, v.lineno), depth - 1)
                     for v, m in ctx.self_passed(place.cls, place.fn, node.id)}
            return found.pop() if len(found) == 1 else UNKNOWN  # a method's parameter: what every self.<m>() passes
        return _rank(ctx, value, place._replace(line=value.lineno), depth - 1) if value is not None else UNKNOWN
    if isinstance(node, Element):
        return _element(ctx, node.value, node.index, place, depth)
    if isinstance(node, ast.Attribute) and node.attr == "data":  # a PackedSequence's data, else a tensor's own
        packed = _data(ctx, node.value, place, depth)
        return _rank(ctx, node.value, place, depth - 1) if packed is None else packed
    if isinstance(node, ast.IfExp):  # `a if c else b`: the rank both branches give
        body = _rank(ctx, node.body, place, depth - 1)
        return body if body == _rank(ctx, node.orelse, place, depth - 1) else UNKNOWN
    if isinstance(node, ast.BinOp):
        left, right = _rank(ctx, node.left, place, depth - 1), _rank(ctx, node.right, place, depth - 1)
        numbers = [isinstance(side, ast.Constant) for side in (node.left, node.right)]
        if numbers[1] or left == right:
            return left
        if left.exact is not None and right.exact is not None:  # broadcasting: the larger rank
            return max(left, right, key=lambda r: r.exact or 0)._replace(last=left.last and right.last)
        return right if numbers[0] else UNKNOWN
    if self_attribute(node) and place.cls is not None:
        return _parameter(ctx, place.cls, node.attr)
    if isinstance(node, ast.Subscript):
        return _indexed(_rank(ctx, node.value, place, depth - 1), node.slice)
    if not isinstance(node, ast.Call):
        return UNKNOWN
    return _call(ctx, node, place, depth)


def _element(ctx: Context, call: ast.expr, index: int, place: Place, depth: int) -> Rank:
    """The rank of the `index`-th value a call returns: a PackedSequence's data (its first field), or that
    element of the tuple every return of a model's `forward` gives (`return logits, features`)."""
    if not isinstance(call, ast.Call):
        return UNKNOWN
    if ctx.dotted(call.func) in _PACKS:
        return (_data(ctx, call, place, depth) or UNKNOWN) if index == 0 else UNKNOWN
    if self_attribute(call.func) and place.cls is not None:  # (a forward is read whatever it is called on)
        return _module(ctx, instances.attribute_call(ctx, place.cls, call.func.attr), None, place, depth, index)
    if isinstance(call.func, ast.Name):
        return _module(ctx, instances.instance(ctx, call.func, place), None, place, depth, index)
    return UNKNOWN


def _data(ctx: Context, node: ast.AST | None, place: Place, depth: int) -> Rank | None:
    """The data of the PackedSequence `node` is (or names): `pack_padded_sequence(x, ...)` merges x's batch and
    time dimensions into one (a (N, T, V) score tensor packs to (tokens, V), 2-D). None: not a packed sequence."""
    for _ in range(_DEPTH):
        if isinstance(node, ast.Name):
            node = instances.last_value(ctx, place, node.id)
            place = place._replace(line=node.lineno) if node is not None else place
    if not (isinstance(node, ast.Call) and ctx.dotted(node.func) in _PACKS):
        return None
    shown = _rank(ctx, node.args[0] if node.args else None, place, depth - 1)
    return Rank(shown.exact - 1) if shown.exact is not None and shown.exact >= 2 else UNKNOWN


def _passed(ctx: Context, fn: ast.FunctionDef | ast.AsyncFunctionDef, param: str, place: Place, depth: int) -> Rank:
    """A parameter of a module-level function: the rank of what every call of it in the file passes
    (`cal_loss(pred, ...)` called on `pred = model(src)`), read where each call is; unknown unless all agree."""
    found = {_rank(ctx, v, instances.around(ctx, place._replace(fn=None, cls=None), v.lineno), depth - 1)
             for v in ctx.passed(fn, param)}
    return found.pop() if len(found) == 1 else UNKNOWN


def _indexed(base: Rank, index: ast.AST) -> Rank:
    """`x[..., 0, 0]` / `x[:, -1]`: of a known rank, less one per integer, plus one per None; `x[idx]` with
    one index array (a mask, a list of rows) keeps the last dimension (its classes) and, of a 2-D tensor,
    gives at most 2 dimensions."""
    parts = index.elts if isinstance(index, ast.Tuple) else [index]
    plain = [p for p in parts if isinstance(p, ast.Slice) or _integer(p) or
             (isinstance(p, ast.Constant) and (p.value is None or p.value is Ellipsis))]
    if len(plain) == len(parts):
        if base.exact is None:  # a Linear's outputs stay last behind a final slice, or one integer (the batch's row)
            keeps = not _none_or_ellipsis(parts) and (isinstance(parts[-1], ast.Slice) or len(parts) == 1)
            return Rank(None, None, True) if base.last and keeps else UNKNOWN
        ints = sum(1 for p in parts if _integer(p))
        nones = sum(1 for p in parts if isinstance(p, ast.Constant) and p.value is None)
        return Rank(base.exact - ints + nones) if len(parts) - nones <= base.exact else UNKNOWN
    if len(parts) == 1 and isinstance(index, (ast.Name, ast.Attribute, ast.Subscript, ast.Call)):
        return Rank(2 if base.exact == 2 else None, None, base.last)
    return UNKNOWN


def _none_or_ellipsis(parts: list[ast.AST] | list[ast.expr]) -> bool:
    return any(isinstance(p, ast.Constant) and (p.value is None or p.value is Ellipsis) for p in parts)


def _integer(node: ast.AST) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node = node.operand
    return isinstance(node, ast.Constant) and type(node.value) is int


def _call(ctx: Context, node: ast.Call, place: Place, depth: int) -> Rank:
    func = node.func
    name = ctx.dotted(func)
    first = node.args[0] if node.args else None
    if name in _INTERPOLATE:
        size = next((k.value for k in node.keywords if k.arg == "size"), node.args[1] if len(node.args) > 1 else None)
        spatial = _sizes(size)
        if spatial is not None:
            return Rank(spatial + 2)
        return _rank(ctx, first, place, depth - 1) if first is not None else UNKNOWN
    if name in _MATRIX:
        return Rank(2)
    if name in _VECTORS and node.args and not any(isinstance(a, ast.Starred) for a in node.args):
        return Rank(1)
    if name == "torch.matmul" and len(node.args) == 2:  # of two matrices (or stacks of them): the larger rank
        sides = [_rank(ctx, a, place, depth - 1).exact or 0 for a in node.args]
        return Rank(max(sides)) if min(sides) >= 2 else UNKNOWN
    if name in _SIZED and node.args and not any(isinstance(a, ast.Starred) for a in node.args) and \
            not any(k.arg in (None, "size", "out") for k in node.keywords):  # torch.zeros(n, t, v): one per size
        sizes = node.args[0].elts if len(node.args) == 1 and isinstance(node.args[0], (ast.Tuple, ast.List)) else node.args
        return Rank(len(sizes)) if len(sizes) > 1 or sizes is not node.args or _integer(sizes[0]) else UNKNOWN
    if name == "torch.nn.functional.linear" and first is not None:
        return _rank(ctx, first, place, depth - 1)._replace(last=True)
    if ctx.written(func) in _EINOPS and len(node.args) > 1:
        return _pattern(node.args[1])
    if name in ("torch.flatten",) and first is not None:
        start = plain_literal(node.args[1]) if len(node.args) > 1 else 0
        return Rank(start + 1) if isinstance(start, int) and start >= 0 else UNKNOWN
    if name in _KEEP_FUNCTIONS and first is not None:
        return _rank(ctx, first, place, depth - 1)
    if isinstance(func, ast.Attribute) and name is None:
        if func.attr == "flatten":
            start = plain_literal(node.args[0]) if node.args else 0
            return Rank(start + 1) if isinstance(start, int) and start >= 0 else UNKNOWN
        if func.attr in _KEEP_METHODS:
            return _rank(ctx, func.value, place, depth - 1)
        if func.attr == "squeeze" and not node.args and not node.keywords:  # drops size-1 dimensions only: a
            squeezed = _rank(ctx, func.value, place, depth - 1)  # Linear's outputs (its classes) stay last
            return Rank(None, None, True) if squeezed.last else UNKNOWN
        if self_attribute(func) and place.cls is not None and first is not None:
            return _attribute(ctx, place.cls, func.attr, first, place, depth)
        return UNKNOWN
    if isinstance(func, ast.Subscript) and self_attribute(func.value) and place.cls is not None and first is not None:
        return _module(ctx, modulelist.element(ctx, place.cls, func.value.attr, func.slice), first, place, depth)
    if isinstance(func, ast.Name) and first is not None and _keeps(ctx, func, place):  # act = partial(F.log_softmax, dim=1)
        return _rank(ctx, first, place, depth - 1)
    if isinstance(func, ast.Name):  # `model(x)`, or `model()` of a model that reads its own data
        return _module(ctx, instances.instance(ctx, func, place), first, place, depth)
    if isinstance(func, ast.Call) and first is not None:  # Net()(x)
        return _module(ctx, instances.unwrap(func), first, place, depth)
    return UNKNOWN


def _keeps(ctx: Context, func: ast.Name, place: Place) -> bool:
    """A name every assignment of which (in the function that binds it) is a shape-keeping function or a
    `functools.partial` of one (`act = partial(F.log_softmax, dim=1)` in one branch, `act = torch.sigmoid`
    in the other): its call keeps its input's rank."""
    for _ in range(len(place.outer) + 1):
        if place.fn is None:
            return False
        values = ctx.assigned_in(place.fn).get(func.id)
        if values:
            return all(_keeping(ctx, v) for v in values)
        found = instances.enclosing(ctx, place, func.id)
        if found is None:
            return False
        place = found
    return False


def _keeping(ctx: Context, value: ast.expr) -> bool:
    if isinstance(value, ast.Call) and ctx.dotted(value.func) == "functools.partial" and value.args:
        value = value.args[0]
    return isinstance(value, (ast.Name, ast.Attribute)) and ctx.dotted(value) in _KEEP_FUNCTIONS


def _pattern(node: ast.AST) -> Rank:
    """An einops pattern's output rank: the axes (or parenthesised groups) right of `->`."""
    if not (isinstance(node, ast.Constant) and isinstance(node.value, str)) or node.value.count("->") != 1:
        return UNKNOWN
    out = node.value.split("->")[1]
    if "..." in out or out.count("(") != out.count(")"):
        return UNKNOWN
    axes, level = 0, 0
    for token in out.replace("(", " ( ").replace(")", " ) ").split():
        if token == "(":
            axes += level == 0
            level += 1
        elif token == ")":
            level -= 1
        elif level == 0:
            axes += 1
    return Rank(axes)


_PARAMETERS = frozenset({"torch.nn.Parameter", "torch.nn.parameter.Parameter"})
_FACTORIES = frozenset(f"torch.{n}" for n in ("Tensor", "FloatTensor", "zeros", "ones", "empty", "randn", "rand"))


def _parameter(ctx: Context, cls: ast.ClassDef, attr: str) -> Rank:
    """`self.bias`, where every `self.bias = ...` of the class other than None is `nn.Parameter(torch.zeros(n))`
    of one size: 1-D (the bias a layer adds to its (N, out) product)."""
    made = [value for value, _ in ctx.self_assignments(cls).get(attr, ())
            if not (isinstance(value, ast.Constant) and value.value is None)]
    for value in made:
        inner = value.args[0] if isinstance(value, ast.Call) and ctx.dotted(value.func) in _PARAMETERS and value.args \
            else None
        if not (isinstance(inner, ast.Call) and ctx.dotted(inner.func) in _FACTORIES and len(inner.args) == 1
                and not inner.keywords and not isinstance(inner.args[0], (ast.Tuple, ast.List, ast.Starred))):
            return UNKNOWN
    return Rank(1) if made else UNKNOWN


def _sizes(node: ast.AST | None) -> int | None:
    """How many spatial sizes `size=` gives: a literal tuple's length, or `x.shape[-2:]` / `x.shape[2:]`
    / `x.size()[2:]` (an image batch's two spatial sizes)."""
    if isinstance(node, (ast.Tuple, ast.List)):
        return len(node.elts)
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice) and node.slice.upper is None:
        lower = plain_literal(node.slice.lower) if node.slice.lower is not None else None
        base = node.value
        shaped = (isinstance(base, ast.Attribute) and base.attr == "shape") or \
            (isinstance(base, ast.Call) and isinstance(base.func, ast.Attribute) and base.func.attr == "size")
        if shaped and lower in (-2, 2):
            return 2
    return None


def _module(ctx: Context, made: ast.Call | None, first: ast.AST | None, place: Place, depth: int,
            element: int | None = None) -> Rank:
    """The rank a module returns when called on `first`, from the call that made the module (of the
    `element`-th value of the tuple it returns, where given: only a class's `forward` shows one)."""
    if made is None:
        return UNKNOWN
    made = instances.aliased(ctx, made, place)
    name = ctx.dotted(made.func)
    if element is not None and name not in _WRAPPERS:
        return _defined(ctx, made, depth, element)
    if name in _CONV:
        return Rank(_CONV[name])
    if _classifier(name):
        return Rank(2)
    if name in _WRAPPERS and made.args and isinstance(made.args[0], (ast.Name, ast.Call)) and depth > 0:
        inner = instances.instance(ctx, made.args[0], instances.around(ctx, place, made.lineno)) \
            if isinstance(made.args[0], ast.Name) else instances.unwrap(made.args[0])  # `DDP(Net().cuda())`
        return _module(ctx, inner, first, place, depth - 1, element) if inner is not made else UNKNOWN
    if name in _LINEAR:
        return _rank(ctx, first, place, depth - 1)._replace(last=True)
    if name in _KEEP_MODULES:
        return _kept(name, _rank(ctx, first, place, depth - 1))
    if modelclass.torchvision_by_name(ctx, made.func):
        return Rank(2)
    if name in ("torch.nn.Flatten",):
        return Rank(2) if not made.args and not made.keywords else UNKNOWN
    if name == "torch.nn.Sequential":
        rank = _rank(ctx, first, place, depth - 1)
        for layer in modulelist.sequential(ctx, _unstarred(made.args)):
            rank = _layer(ctx, layer, rank)
        return rank
    return _defined(ctx, made, depth)


def _attribute(ctx: Context, cls: ast.ClassDef, attr: str, first: ast.AST, place: Place, depth: int) -> Rank:
    """`self.<attr>(x)`: what the module the class holds there gives, where every construction of it agrees
    (`nn.Linear(...)` in one branch, an `nn.Sequential` ending in one in the other: classes last either way; a
    None is left out, since calling it would raise); else, with no such attribute, what the class's method of
    that name returns (`return self.forward_head(output)`)."""
    made = instances.attribute_call(ctx, cls, attr)
    if made is not None:
        return _module(ctx, made, first, place, depth)
    values = [value for value, _ in ctx.self_assignments(cls).get(attr, ())]
    if values:
        kept = [v for v in values if not (isinstance(v, ast.Constant) and v.value is None)]
        calls = [instances.unwrap(v) if v is not None else None for v in kept]
        found = {_module(ctx, c, first, place, depth - 1) if c is not None else UNKNOWN for c in calls}
        return found.pop() if len(found) == 1 else UNKNOWN
    method = next((n for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == attr), None)
    return _returns(ctx, cls, method, depth - 1) if method is not None and depth > 0 else UNKNOWN


def _defined(ctx: Context, made: ast.Call, depth: int, element: int | None = None) -> Rank:  # a class's forward
    if isinstance(made.func, ast.Name) and made.func.id in ctx.class_defs():
        return _forward(ctx, ctx.class_defs()[made.func.id], depth, element)
    cls = _made_by_classmethod(ctx, made.func) or modelclass.defined(ctx, made.func)  # else what every class a builder function returns gives
    return _forward(*cls, depth, element) if cls else builders.agreed(ctx, made, _forward, depth, element) or UNKNOWN


def _made_by_classmethod(ctx: Context, func: ast.expr) -> tuple[Context, ast.ClassDef] | None:
    """`LLaMA.from_name(size)`: a class of the code base made by its own classmethod, every return of which is
    `cls(...)`; the class, with a Context of its file."""
    if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)):
        return None
    own = ctx.class_defs().get(func.value.id)
    found = (ctx, own) if own is not None else modelclass.defined(ctx, func.value)
    method = next((n for n in found[1].body if isinstance(n, ast.FunctionDef) and n.name == func.attr), None) \
        if found is not None else None
    if method is None or not method.args.args or \
            not any(isinstance(d, ast.Name) and d.id == "classmethod" for d in method.decorator_list):
        return None
    first = method.args.args[0].arg
    returns = follow.returns(method)
    made = all(isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id == first for v in returns)
    return found if returns and made else None


def _unstarred(args: list[ast.expr]) -> list[ast.expr]:
    """`nn.Sequential(*[nn.Dropout(p), nn.Linear(d, n)])`: a literal list or tuple unpacked into the call gives its
    elements as arguments, in order (another starred value is left as it is, and reads as no layer)."""
    return [e for a in args for e in (a.value.elts if isinstance(a, ast.Starred) and
                                      isinstance(a.value, (ast.List, ast.Tuple)) else [a])]


def _kept(name: str, rank: Rank) -> Rank:
    """A shape-keeping module's output: its input's rank; its last dimension still the Linear's outputs
    unless the module works over spatial dimensions (a pool, a pad, a 2-D norm)."""
    return rank._replace(last=False) if any(part in name for part in _MOVES_LAST) else rank


def _layer(ctx: Context, layer: ast.AST, rank: Rank) -> Rank:
    if not isinstance(layer, ast.Call):
        return UNKNOWN
    name = ctx.dotted(layer.func)
    if name in _CONV:
        return Rank(_CONV[name])
    if name in _LINEAR:
        return rank._replace(last=True)
    if name in _KEEP_MODULES:
        return _kept(name, rank)
    if name == "torch.nn.Flatten" and not layer.args and not layer.keywords:
        return Rank(2)
    return UNKNOWN


def _forward(ctx: Context, cls: ast.ClassDef, depth: int, element: int | None = None) -> Rank:
    """What a module class of the file returns from `forward`: every return gives the same rank (of its
    tuple's `element`-th value, where given: `return logits, features`)."""
    forward = next((n for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == "forward"), None)
    return _returns(ctx, cls, forward, depth, element) if forward is not None else UNKNOWN


def _returns(ctx: Context, cls: ast.ClassDef, fn: ast.FunctionDef | ast.AsyncFunctionDef, depth: int,
             element: int | None = None) -> Rank:
    """What every return of a method of the class gives (of its tuple's `element`-th value, where given). Read
    as one tensor, a tuple literal is left out: a tensor operation (the loss) handed a tuple would raise, so only
    the method's other returns reach it (`return x, self.prototypes(x)` beside `return x`)."""
    returns = [n.value for n in statements_in(fn) if isinstance(n, ast.Return) and n.value is not None]
    if element is not None:  # that value of the tuple every return gives
        picked = [r.elts[element] for r in returns if isinstance(r, ast.Tuple) and element < len(r.elts)
                  and not any(isinstance(e, ast.Starred) for e in r.elts)]
        returns = picked if len(picked) == len(returns) else []
    else:
        returns = [r for r in returns if not isinstance(r, ast.Tuple)]
    shown = [_rank(ctx, value, Place(fn, cls, value.lineno + 1), depth - 1) for value in returns]
    found = {r._replace(last=False) if r.exact == 2 else r for r in shown}  # 2-D: (N, C) however the C came
    return found.pop() if len(found) == 1 else UNKNOWN


def facts(shown: Rank) -> tuple[tuple[str, object], ...]:
    """The call facts a rank gives: `input.ndim`, or the scanner's own `input.min_ndim` (a tuple, never queried)."""
    if shown.exact is not None:
        return (("input.ndim", shown.exact),)
    if shown.at_least is not None:
        return (("input.min_ndim", (shown.at_least,)),)
    return ()


# The interpolation modes each number of spatial dimensions accepts (F.interpolate raises for the others:
# "linear" needs a 3-D input, "bilinear" and "bicubic" 4-D, "trilinear" 5-D).
_MODES = {1: ("nearest", "nearest-exact", "area", "linear"), 2: ("nearest", "nearest-exact", "area", "bilinear", "bicubic"),
          3: ("nearest", "nearest-exact", "area", "trilinear")}


def mode_facts(ctx: Context, node: ast.Call) -> tuple[tuple[str, object], ...]:
    """(("mode", (ONE_OF, modes...)),) for an interpolation whose mode the code leaves open and whose rank shows
    which modes can run (interpolate_modes): a record of another mode would raise, not run; () otherwise."""
    mode = next((k.value for k in node.keywords if k.arg == "mode"), node.args[3] if len(node.args) > 3 else None)
    if mode is None or not isinstance(ctx.literal(mode), Unknown):
        return ()
    modes = interpolate_modes(ctx, node)
    return (("mode", (ONE_OF, *modes)),) if modes else ()


def interpolate_modes(ctx: Context, node: ast.Call) -> tuple[str, ...] | None:
    """The modes an `F.interpolate` call can run with, by the spatial rank it shows: as many sizes as
    `size=` or `scale_factor=` lists (`scale_factor=(2, 1)`: 2; a name the function binds to such tuples only,
    `target_shape = (t, h, w)`: 3), or its input's rank less 2 (a parameter unpacked from its shape above the
    call, `b, c, h, w = image.shape`: 4). None: not shown."""
    if ctx.dotted(node.func) not in _INTERPOLATE:
        return None
    given = {k.arg: k.value for k in node.keywords if k.arg}
    given.update(dict(zip(("input", "size", "scale_factor"), node.args)))
    spatial = None
    fn = ctx.fn_nodes[-1] if ctx.fn_nodes else None
    for key in ("size", "scale_factor"):
        listed = _listed(given.get(key), fn, ctx)
        if listed is not None:
            spatial = listed
    if spatial is None:
        shown = of(ctx, given.get("input"))
        exact = shown.exact if shown.exact is not None else _unpacked(given.get("input"), fn, node)
        spatial = exact - 2 if exact is not None else None
    return _MODES.get(spatial) if spatial is not None else None


def _listed(value: ast.AST | None, fn: ast.AST | None, ctx: Context) -> int | None:
    """How many sizes a `size=` / `scale_factor=` value lists: a literal tuple's length, the length both
    branches of `a if c else b` list, or, for a local name of the function, the length every binding of it
    lists (each binding an `x = (...)`: a name also bound another way, `+=`, a loop or a parameter, is not
    read). interpolate raises unless the input has as many spatial dimensions, so the length fixes its rank."""
    if isinstance(value, (ast.Tuple, ast.List)):
        return None if any(isinstance(e, ast.Starred) for e in value.elts) else len(value.elts)
    if isinstance(value, ast.IfExp):
        body = _listed(value.body, None, ctx)
        return body if body is not None and body == _listed(value.orelse, None, ctx) else None
    if not (isinstance(value, ast.Name) and isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))) or \
            value.id in instances.parameters(fn):
        return None
    bound = ctx.assigned_in(fn).get(value.id, [])
    stores = sum(1 for n in iwalk(fn) if isinstance(n, ast.Name) and n.id == value.id and isinstance(n.ctx, ast.Store))
    declared = any(isinstance(n, (ast.Global, ast.Nonlocal)) and value.id in n.names for n in iwalk(fn))
    if not bound or len(bound) != stores or declared:
        return None
    lengths = {_listed(v, None, ctx) for v in bound}
    return lengths.pop() if len(lengths) == 1 and None not in lengths else None


def _shape_of(value: ast.expr, name: str) -> bool:
    """`name.shape` or `name.size()`: the whole shape of the tensor the name holds."""
    if isinstance(value, ast.Call) and not value.args and not value.keywords:
        value = value.func
        return isinstance(value, ast.Attribute) and value.attr == "size" and \
            isinstance(value.value, ast.Name) and value.value.id == name
    return isinstance(value, ast.Attribute) and value.attr == "shape" and \
        isinstance(value.value, ast.Name) and value.value.id == name


def _unpacked(value: ast.AST | None, fn: ast.AST | None, call: ast.Call) -> int | None:
    """The rank a function's parameter has where a statement of the function's own body, above the call,
    unpacks its whole shape into plain names (`b, c, h, w = image.shape`: 4): the unpacking raises on any
    other rank, and a parameter the function never rebinds holds the same tensor at the call. None: no such
    statement (one in a branch or a loop, a starred target, or a parameter rebound in the function)."""
    if not (isinstance(value, ast.Name) and isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))) or \
            value.id not in instances.parameters(fn):
        return None
    found = [len(s.targets[0].elts) for s in fn.body
             if isinstance(s, ast.Assign) and s.lineno < call.lineno and len(s.targets) == 1
             and isinstance(s.targets[0], (ast.Tuple, ast.List))
             and not any(isinstance(e, ast.Starred) for e in s.targets[0].elts) and _shape_of(s.value, value.id)]
    if not found or any(isinstance(n, ast.Name) and n.id == value.id and not isinstance(n.ctx, ast.Load)
                        for n in iwalk(fn)):
        return None
    return found[0]
