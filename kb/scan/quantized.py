"""A tensor the code shows is not quantized, for the rule not-quantized (kb/scan/resolvers.py): a record about
quantized tensors (`resize_` of one, torch.quantized-resize) does not apply to a tensor of ids or weights.

A quantized tensor comes only from a quantizing call (`torch.quantize_per_tensor`, a quantized module) or a
quantized dtype (`dtype=torch.quint8`, `.to(torch.qint8)`); so a tensor is visibly not one where it is made
by a legacy typed constructor (`torch.LongTensor(n, m)`, `torch.cuda.FloatTensor(...)`), by a factory that
names no dtype or a non-quantized one (`torch.empty(n)`, `torch.zeros(n, dtype=torch.long)`), is visibly
integer or real floating point (kb/scan/values.py), is `new()` of such a tensor or of a module's parameter
(`embed.weight.data.new()`: a Parameter holds a float tensor; a quantized module's weight is a method), is a
view, copy or move of one to a device (`.to(self.device)`, `.cuda()`), or is a name every binding of which
in the function is one (`data = data.to(device)` keeps what data's other bindings are).
"""

from __future__ import annotations

import ast

from kb.scan import pyints, values
from kb.scan.context import Context
from kb.scan.nodes import iwalk
from kb.scan.syntax import self_attribute

_QUANTIZED_DTYPES = frozenset(f"torch.{n}" for n in ("quint8", "qint8", "qint32", "quint4x2", "quint2x4"))
_TYPED = ("Float", "Double", "Half", "BFloat16", "Byte", "Char", "Short", "Int", "Long", "Bool")
_CONSTRUCTORS = frozenset(f"torch.{where}{kind}Tensor" for where in ("", "cuda.") for kind in _TYPED)
# Factories whose result has the dtype they name, or the default float dtype (or an int/bool from their data).
_FACTORIES = frozenset(f"torch.{n}" for n in ("empty", "zeros", "ones", "full", "arange",
                                             "rand", "randn", "randint", "linspace", "from_numpy", "empty_strided"))
_DATA_FACTORIES = frozenset({"torch.tensor", "torch.as_tensor"})
# Methods that keep their receiver's dtype unless they name one (views, copies, and `new*` without `dtype=`).
_KEEPING = frozenset({"contiguous", "clone", "detach", "view", "reshape", "squeeze", "unsqueeze", "flatten",
                      "permute", "transpose", "cuda", "cpu", "narrow", "t", "expand", "repeat", "new", "new_empty",
                      "new_zeros", "new_ones", "new_full", "new_tensor", "resize_", "pin_memory"})
_PARAMETERS = frozenset({"weight", "bias"})


_VARIABLES = frozenset({"torch.autograd.Variable", "torch.autograd.variable.Variable"})


def not_quantized(ctx: Context, node: ast.AST | None, fn: ast.AST | None, depth: int = 8,
                  seen: frozenset[str] = frozenset()) -> bool:
    """The tensor `node` is visibly not quantized (see the module's docstring); False when not shown."""
    if node is None or depth <= 0:
        return False
    if values.integer(ctx, node, fn) or values.real_float(ctx, node, fn):
        return True
    if isinstance(node, ast.Subscript):
        return not_quantized(ctx, node.value, fn, depth - 1, seen)
    if isinstance(node, ast.Attribute):
        if node.attr in _PARAMETERS and _parameter(ctx, node):
            return True  # a module's parameter: a Parameter of a quantized dtype cannot be made
        return node.attr == "data" and not_quantized(ctx, node.value, fn, depth - 1, seen)
    if isinstance(node, ast.Name):
        if node.id in seen:
            return True  # `data = data.to(device)`: not quantized if data's other bindings are not
        bound = pyints.only_bindings(ctx, fn, node.id)
        return bool(bound) and all(not_quantized(ctx, b, fn, depth - 1, seen | {node.id}) for b in bound)
    if not isinstance(node, ast.Call):
        return False
    dtype = next((k.value for k in node.keywords if k.arg == "dtype"), None)
    named = ctx.dotted(dtype) if dtype is not None else None
    if dtype is not None and (named is None or not named.startswith("torch.") or named in _QUANTIZED_DTYPES):
        return False  # a quantized dtype, or one held in a name: unknown
    name = ctx.dotted(node.func)
    if name in _VARIABLES and node.args:  # `Variable(im_data)` (PyTorch before 0.4): the tensor it wraps
        return not_quantized(ctx, node.args[0], fn, depth - 1, seen)
    if name is not None:  # torch.tensor / as_tensor of a quantized tensor keep it: only with a dtype named
        return name in _CONSTRUCTORS or name in _FACTORIES or (name in _DATA_FACTORIES and dtype is not None)
    if not isinstance(node.func, ast.Attribute):
        return False
    method = node.func.attr
    if method == "to" and not all(_device(ctx, a) for a in node.args):
        return False  # `.to(torch.qint8)`, `.to(other)`: may name a quantized dtype
    if any(ctx.dotted(a) in _QUANTIZED_DTYPES for a in node.args):
        return False  # `x.view(torch.qint8)`, `x.new_full(n, v, torch.qint8)`: names a quantized dtype
    if method == "to" or (method in _KEEPING and dtype is None):
        return not_quantized(ctx, node.func.value, fn, depth - 1, seen)
    return dtype is not None and method.startswith("new_")


def _device(ctx: Context, arg: ast.expr) -> bool:
    """A device, never a dtype: a string (`"cuda"`), `torch.device(...)`, or a name or attribute called
    `device` (`self.device`, `device`)."""
    if isinstance(arg, ast.Constant):
        return isinstance(arg.value, str)
    if isinstance(arg, ast.Call):
        return ctx.dotted(arg.func) == "torch.device"
    last = arg.attr if isinstance(arg, ast.Attribute) else arg.id if isinstance(arg, ast.Name) else ""
    return last == "device"


def _parameter(ctx: Context, node: ast.Attribute) -> bool:
    """`m.weight` of another object (a module's parameter), or `self.weight` that the enclosing class assigns
    nothing but `nn.Parameter(...)` (or never: inherited from an nn module)."""
    if not self_attribute(node):
        return True
    if not ctx.class_nodes:
        return False
    for sub in iwalk(ctx.class_nodes[-1]):
        targets = sub.targets if isinstance(sub, ast.Assign) else [sub.target] \
            if isinstance(sub, (ast.AnnAssign, ast.AugAssign)) else []
        if any(self_attribute(t, node.attr) for t in targets) and not (
                isinstance(sub, ast.Assign) and isinstance(sub.value, ast.Call)
                and (ctx.dotted(sub.value.func) or "").endswith("nn.Parameter")):
            return False
    return True
