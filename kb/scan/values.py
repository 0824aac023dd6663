"""What values the code shows at a call, for the code rules (kb/scan/resolvers.py): memory an in-place op
fills whole before it is read, a seed attribute that is an int, an integer tensor (values that hold one value
everywhere, ones and fills, are kb/scan/uniform.py's);
and, for the walk (kb/scan/visitor.py), a tensor that is visibly real floating point (`real_float`).

Kept apart from the rules' table so that each reads in a few lines: the rule says what it concludes, this
module how the code shows it.
"""

from __future__ import annotations

import ast
import itertools
from collections.abc import Iterator

from kb.scan import nodes, pyints, reaching
from kb.scan.context import Context
from kb.scan.syntax import last_name, statements_in

# In-place methods that write every element of their tensor without reading it (add_, mul_ read it first).
WHOLE_WRITES = frozenset({"normal_", "uniform_", "bernoulli_", "fill_", "zero_", "copy_", "random_", "exponential_",
                          "geometric_", "cauchy_", "log_normal_"})

# Methods that give the tensor converted (dtype, device, layout): a whole write after them leaves no value to read.
CONVERSIONS = frozenset({"type_as", "to", "cuda", "cpu", "float", "double", "half", "bfloat16", "long", "int", "contiguous"})


def converted_from(node: ast.Call) -> ast.Call:
    """The call a chain of conversions starts from (`torch.empty(1, 1).type_as(src)`: `torch.empty(1, 1)`); a copy it
    makes reads the memory, but the whole write after the chain (`.fill_(v)`) replaces every value it carried."""
    while isinstance(node.func, ast.Attribute) and node.func.attr in CONVERSIONS and isinstance(node.func.value, ast.Call):
        node = node.func.value
    return node


def int_attribute(ctx: Context, cls: ast.ClassDef, attr: str) -> bool:
    """Every `self.<attr> = v` of the class is an int literal, or a parameter of its method whose default is one."""
    made = ctx.self_assignments(cls).get(attr, [])
    if not made:
        return False
    for value, defaults in made:
        if isinstance(value, ast.Name) and value.id in defaults:
            value = defaults[value.id]
        if not (isinstance(value, ast.Constant) and type(value.value) is int):
            return False
    return True


_SIZED = frozenset({"torch.empty", "torch.Tensor.new_empty"})  # their sizes are their arguments (not `empty_like`'s)


def no_elements(op: str, node: ast.Call) -> bool:
    """`torch.empty(0)`, `x.new_empty(0)`, `torch.empty((0, 4))`, `torch.empty(8, 0)`, `size=(0,)`: a size
    that is a literal zero makes a tensor of no elements, with no uninitialised value for anything to read
    (a placeholder: an unused bias, an empty memory). Only literal sizes count: `torch.empty(n)` may be
    anything."""
    if op not in _SIZED:
        return False
    sizes: list[ast.expr] = list(node.args)
    given = next((k.value for k in node.keywords if k.arg == "size"), None)
    if given is not None:
        sizes = [given]
    if len(sizes) == 1 and isinstance(sizes[0], (ast.Tuple, ast.List)):
        sizes = list(sizes[0].elts)
    return any(isinstance(s, ast.Constant) and type(s.value) is int and s.value == 0 for s in sizes)


def filled_next(node: ast.Call, fn: ast.AST) -> bool:
    """`mask = torch.empty(...)` whose very next statement fills it whole in place (`mask.bernoulli_(p)`,
    `buf.zero_()`, `out.copy_(src)`, `buf[:] = src`), or whose first later statement of the same block that
    names it does (no statement between mentions it or breaks out of a loop, no function or lambda of `fn`
    mentions it, and no `try` or `with` holds it: nothing else can read it, nor skip the fill), and `x.resize_(n)` as a statement whose next statement so fills x: nothing reads the memory
    before every element is written."""
    for name, after in _assigned_then(node, fn):
        if not _fills_whole(after, name) and _may_skip(node, fn, name):
            gap = list(itertools.takewhile(lambda stmt: not _names(stmt, name), _later(after, fn)))
            if not any(isinstance(sub, (ast.Break, ast.Continue)) for stmt in gap for sub in nodes.iwalk(stmt)):
                after = next((stmt for stmt in _later(after, fn) if _names(stmt, name)), after)
        return _fills_whole(after, name)
    for block in (getattr(sub, field, None) for sub in nodes.iwalk(fn) for field in ("body", "orelse")):
        if not isinstance(block, list):
            continue
        for k, stmt in enumerate(block[:-1]):
            if isinstance(stmt, ast.Expr) and stmt.value is node and isinstance(node.func, ast.Attribute) \
                    and isinstance(node.func.value, ast.Name):  # `x.resize_(n)`: x's other aliases may read it later
                return _fills_whole(block[k + 1], node.func.value.id)
    return False


def _may_skip(node: ast.Call, fn: ast.AST, name: str) -> bool:
    """Statements that never name `name` may stand between it and its fill: no function or lambda of `fn`
    names it (a closure could read it), and no `try` or `with` of `fn` holds it (an exception raised between
    could be caught, the fill skipped, and the memory read after)."""
    for sub in nodes.iwalk(fn):
        if sub is fn:
            continue
        if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) and _names(sub, name):
            return False
        if isinstance(sub, (ast.Try, getattr(ast, "TryStar", ast.Try), ast.With, ast.AsyncWith)) and any(n is node for n in nodes.iwalk(sub)):
            return False
    return True


def _fills_whole(stmt: ast.stmt, name: str) -> bool:
    """`name.<whole write>(...)` or `name[:] = v` / `name[...] = v`, with nothing of `name` in the arguments; or a
    `with torch.no_grad():` block (a gradient mode, which suppresses no exception) whose first statement naming it so
    fills it (glide-text2im's `w = torch.empty(...)`, then `with torch.no_grad(): w.normal_(std=0.02)`)."""
    if isinstance(stmt, ast.With) and all(_grad_mode(item.context_expr) and item.optional_vars is None
                                          for item in stmt.items):
        inner = next((sub for sub in stmt.body if _names(sub, name)), None)
        return inner is not None and _fills_whole(inner, name)
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Subscript):
        target = stmt.targets[0]
        whole = target.slice
        return isinstance(target.value, ast.Name) and target.value.id == name and not _names(stmt.value, name) \
            and ((isinstance(whole, ast.Slice) and whole.lower is None and whole.upper is None and whole.step is None)
                 or (isinstance(whole, ast.Constant) and whole.value is Ellipsis))
    call = stmt.value if isinstance(stmt, ast.Expr) else None
    if isinstance(call, ast.Call) and _init_call(call.func) and call.args and isinstance(call.args[0], ast.Name) \
            and call.args[0].id == name:  # nn.init.kaiming_uniform_(w): every in-place initialiser writes all of w
        return not any(_names(a, name) for a in (*call.args[1:], *(kw.value for kw in call.keywords)))
    return isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) \
        and call.func.attr in WHOLE_WRITES and isinstance(call.func.value, ast.Name) and call.func.value.id == name \
        and not any(_names(a, name) for a in (*call.args, *(kw.value for kw in call.keywords)))


def _grad_mode(expr: ast.expr) -> bool:
    return isinstance(expr, ast.Call) and last_name(expr.func) in ("no_grad", "inference_mode", "enable_grad")


def init_fills_argument(node: ast.Call, fn: ast.AST, module: ast.Module | None = None) -> bool:
    """`nn.init.xavier_uniform_(torch.empty(n, m))`, or the same through a local name every binding of which in
    `fn` is such an initialiser (`initializer = nn.init.xavier_uniform_`, then `initializer(torch.empty(n, m))`),
    or, where `fn` binds the name not at all, a name every binding of which in `module` is one (HKUDS/SSLRec's
    module-level `init = nn.init.xavier_uniform_`, then `nn.Parameter(init(t.empty(n, d)))` in a model's `__init__`):
    the initialiser writes every element of the new tensor before anything can read it."""
    made = node.args[0] if node.args else None
    if not (isinstance(made, ast.Call) and isinstance(made.func, (ast.Attribute, ast.Name))
            and (made.func.attr if isinstance(made.func, ast.Attribute) else made.func.id) in _MADE_EMPTY):
        return False
    if _init_call(node.func):
        return True
    if not isinstance(node.func, ast.Name):
        return False
    bound = _bindings(fn).get(node.func.id) or []
    if not bound and module is not None and module is not fn:
        bound = _bindings(module).get(node.func.id) or []  # every binding in the file: a function's too
    return bool(bound) and all(value is not None and _init_call(value) for value in bound)


_MADE_EMPTY = frozenset({"empty", "empty_like", "empty_strided", "new_empty"})


def _init_call(func: ast.expr) -> bool:
    """`nn.init.X_`, `torch.nn.init.X_` or `init.X_`: PyTorch's in-place initialisers, each of which writes
    every element of the tensor it is given (uniform_, normal_, kaiming_*, xavier_*, orthogonal_, zeros_, ...)."""
    if not (isinstance(func, ast.Attribute) and func.attr.endswith("_") and not func.attr.startswith("_")):
        return False
    owner = func.value
    return (isinstance(owner, ast.Name) and owner.id == "init") or (
        isinstance(owner, ast.Attribute) and owner.attr == "init" and isinstance(owner.value, (ast.Name, ast.Attribute))
        and (owner.value.id if isinstance(owner.value, ast.Name) else owner.value.attr) == "nn")


def _names(node: ast.AST, name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name for n in nodes.iwalk(node))


def _later(first: ast.stmt, fn: ast.AST) -> Iterator[ast.stmt]:
    """`first` and the statements after it in its block of `fn`."""
    for block in (getattr(sub, field, None) for sub in nodes.iwalk(fn) for field in ("body", "orelse")):
        if isinstance(block, list) and any(stmt is first for stmt in block):
            yield from block[next(k for k, stmt in enumerate(block) if stmt is first):]
            return


def _assigned_then(node: ast.Call, fn: ast.AST) -> Iterator[tuple[str, ast.stmt]]:
    """(name, the next statement) for `name = <node>` followed by a statement in the same block of `fn`."""
    for block in (getattr(sub, field, None) for sub in nodes.iwalk(fn) for field in ("body", "orelse")):
        if not isinstance(block, list):
            continue
        for k, stmt in enumerate(block[:-1]):
            if isinstance(stmt, ast.Assign) and stmt.value is node and len(stmt.targets) == 1 \
                    and isinstance(stmt.targets[0], ast.Name):
                yield stmt.targets[0].id, block[k + 1]


def filled_by_loop(node: ast.Call, fn: ast.AST) -> bool:
    """`buf = torch.empty([n, ...])` followed at once by `for i in range(n):` whose body writes `buf[i] = ...`
    as a statement of its own, with no `break` or `continue` and no read of `buf` before that write: every
    row is written before the buffer is read."""
    first = node.args[0] if node.args else None
    if isinstance(first, (ast.List, ast.Tuple)):
        first = first.elts[0] if first.elts else None
    if first is None or isinstance(first, ast.Starred):
        return False
    for name, loop in _assigned_then(node, fn):
        if not (isinstance(loop, ast.For) and isinstance(loop.target, ast.Name) and not loop.orelse
                and isinstance(loop.iter, ast.Call) and isinstance(loop.iter.func, ast.Name)
                and loop.iter.func.id == "range" and len(loop.iter.args) == 1 and not loop.iter.keywords
                and ast.dump(loop.iter.args[0]) == ast.dump(first)):
            return False
        if any(isinstance(sub, (ast.Break, ast.Continue)) for sub in nodes.iwalk(loop)):
            return False
        for inner in loop.body:
            target = inner.targets[0] if isinstance(inner, ast.Assign) and len(inner.targets) == 1 else None
            if isinstance(inner, ast.Assign) and isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) \
                    and target.value.id == name and isinstance(target.slice, ast.Name) and target.slice.id == loop.target.id:
                return not any(isinstance(sub, ast.Name) and sub.id == name for sub in nodes.iwalk(inner.value))
            if any(isinstance(sub, ast.Name) and sub.id == name for sub in nodes.iwalk(inner)):
                return False
        return False
    return False


# The scans whose records ask the input's dtype kind (`input.dtype`): cumulative ops, functions and methods.
SCANS = frozenset(f"torch.{owner}{name}" for owner in ("", "Tensor.")
                  for name in ("cumprod", "cumsum", "logcumsumexp", "cummax", "cummin"))
# Functions and methods whose result is a real floating tensor whatever their input (softmax of a complex
# tensor raises; a cast names its dtype; torch.rand/randn make float32 unless given a dtype, which is read as
# unknown; sigmoid is left out: it takes complex inputs). `torch.rand_like` keeps its input's dtype: left out too.
_FLOAT_FUNCTIONS = frozenset({
    "torch.softmax", "torch.log_softmax", "torch.rand", "torch.randn", "torch.nn.functional.softmax",
    "torch.nn.functional.log_softmax", "torch.special.softmax", "torch.special.log_softmax"})
_FLOAT_METHODS = frozenset({"softmax", "log_softmax", "float", "double", "half", "bfloat16"})
# Methods that return their receiver's dtype (views, copies, moves that name no dtype).
_SAME_DTYPE = frozenset({"contiguous", "clone", "detach", "view", "reshape", "squeeze", "unsqueeze", "flatten",
                         "permute", "transpose", "cuda", "cpu", "narrow", "flip", "t", "expand", "repeat", "prod",
                         "abs", "neg", "new_zeros", "new_ones"})
# Methods that, given a dimension, return (values, indices): the values keep the receiver's dtype.
_VALUES_INDICES = frozenset({"max", "min", "sort", "topk", "kthvalue", "median", "mode", "cummax", "cummin"})


def real_float(ctx: Context, node: ast.AST | None, fn: ast.AST | None, depth: int = 8,
               seen: frozenset[str] = frozenset()) -> bool:
    """The tensor is visibly real floating point, not complex: made by softmax, `torch.rand`/`randn`, a
    cast (`.float()`), or views, items and the values of `max(dim)` / `sort` / `topk` of such a tensor, or a
    name every binding of which in the function (assignments, the unpacked values of `x.max(dim=...)`, a loop
    over such a tensor or over `zip` of such tensors) so made; `p = p[:n]` leaves it to p's other bindings."""
    if node is None or depth <= 0:
        return False
    if isinstance(node, ast.Subscript):
        return real_float(ctx, node.value, fn, depth - 1, seen)
    if isinstance(node, ast.Name):
        if node.id in seen:
            return False  # a = b; b = a: nothing made either
        bound = [b for b in _bindings(fn).get(node.id, ()) if not _itself(b, node.id)] if fn is not None else []
        return bool(bound) and all(b is not None and real_float(ctx, b, fn, depth - 1, seen | {node.id}) for b in bound)
    if not isinstance(node, ast.Call):
        return False
    if any(k.arg == "dtype" for k in node.keywords):
        return False
    name = ctx.dotted(node.func)
    if name is not None:
        return name in _FLOAT_FUNCTIONS
    if isinstance(node.func, ast.Attribute):
        if node.func.attr in _FLOAT_METHODS:
            return True
        if node.func.attr in _SAME_DTYPE and not _names_dtype(node):
            return real_float(ctx, node.func.value, fn, depth - 1, seen)
    return False


# Integer dtypes a factory may name (`dtype=torch.int32`), the casts to them, and the legacy constructors.
_INT_DTYPES = frozenset(f"torch.{n}" for n in ("int8", "int16", "int32", "int64", "uint8", "long", "int", "short"))
_INT_METHODS = frozenset({"long", "int", "short"})
_INT_CONSTRUCTORS = frozenset({"torch.LongTensor", "torch.IntTensor", "torch.ShortTensor", "torch.cuda.LongTensor",
                               "torch.cuda.IntTensor"})
# Factories whose result has the dtype their `dtype=` names (none named: a float, except torch.tensor/arange).
_SIZED_FACTORIES = frozenset(f"torch.{n}" for n in ("ones", "zeros", "empty", "full", "ones_like", "zeros_like",
                                                   "full_like", "empty_like", "arange", "tensor", "as_tensor"))
_JOINS = frozenset({"torch.cat", "torch.concat", "torch.concatenate", "torch.stack"})
# TensorFlow: factories whose `dtype` (keyword or second argument) names an integer dtype, and the tensor
# scatters, whose updates and result have their `tensor` argument's dtype (TensorFlow raises otherwise).
_TF_INT_DTYPES = frozenset(f"tf.{n}" for n in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"))
_TF_FACTORIES = frozenset({"tf.zeros", "tf.ones", "tf.constant", "tf.zeros_like", "tf.ones_like"})
_TF_TENSOR_SCATTERS = frozenset(f"tf.{p}tensor_scatter_nd_{n}" for p in ("", "compat.v1.")
                                for n in ("add", "sub", "update", "max", "min"))
_INT_KEEPING = frozenset({"torch.cumsum", "torch.cumprod"})


def dtype_facts(ctx: Context, op: str, data: ast.AST | None, node: ast.Call, fn: ast.AST | None) -> tuple:
    """The `input.dtype` call fact of a scan (`SCANS`) where the code shows its input's kind: an integer dtype the call
    names to accumulate in (`torch.cumsum(mask, 0, dtype=torch.int32)`: the input is cast to it first), real
    floating point (`real_float`), or an integer tensor (`integer`) when the call names no `dtype=` to accumulate in
    (`torch.cumsum(lengths, 0)` of int lengths adds integers: exact in any order); () when not shown."""
    if op in _TF_TENSOR_SCATTERS:
        tensor = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "tensor"), None)
        return (("updates", "int"),) if integer(ctx, tensor, fn) else ()  # updates must have the tensor's dtype
    if op not in SCANS:
        return ()
    given = next((k.value for k in node.keywords if k.arg == "dtype"), None)
    if given is not None and ctx.dotted(given) in _INT_DTYPES:  # `cumsum(mask, 0, dtype=torch.int32)`: summed as ints
        return (("input.dtype", "int"),)
    if real_float(ctx, data, fn):
        return (("input.dtype", "float"),)  # softmax probabilities, a cast: a real input, never complex
    if not any(k.arg == "dtype" for k in node.keywords) and integer(ctx, data, fn):
        return (("input.dtype", "int"),)
    return ()


def integer(ctx: Context, node: ast.AST | None, fn: ast.AST | None, depth: int = 8,
            seen: frozenset[str] = frozenset(), in_place: bool = False) -> bool:
    """The tensor is visibly of an integer dtype: a factory that names one (`torch.ones(n, dtype=torch.int32)`),
    `torch.tensor` of int literals or of a list of Python ints (kb/scan/pyints.py), `torch.arange` of int literals, `.long()` / `.int()`, `torch.LongTensor(...)`,
    a `torch.cat` / `torch.stack` of such tensors (integers promote to an integer), a `torch.cumsum` of one,
    views and items of one, or a name every binding of which in the function is one (`x[a:b] = v` writes
    into it, keeping its dtype; `x = torch.cumsum(x)` is one if x's other bindings are). `in_place`: the name's
    augmented assignments (`total += n`) are read as a tensor's in-place updates, which keep its dtype (an integer
    tensor that a float is added to in place raises), where its other bindings make it an integer tensor."""
    if node is None or depth <= 0:
        return False
    if isinstance(node, ast.Subscript):
        if _unique_index_or_count(node):
            return True
        return integer(ctx, node.value, fn, depth - 1, seen)
    if isinstance(node, ast.Name):
        if node.id in seen:
            return True  # `x = torch.cumsum(cat((head, x)))`: integer if x's other bindings are
        last = reaching.dominating_value(fn, node) if fn is not None else None
        if last is not None and integer(ctx, last, fn, depth - 1, seen):  # its own names: their own dominating bindings
            return True  # the binding every path to the use passes last: `n = torch.tensor(n, dtype=torch.long)`
        bound = [b for b in _bindings(fn).get(node.id, ()) if not _itself(b, node.id)] if fn is not None else []
        if in_place and fn is not None:
            for _ in range(_augmented(fn, node.id)):
                bound.remove(None)  # each augmented assignment's entry: an in-place update of the tensor
        return bool(bound) and all(b is not None and integer(ctx, b, fn, depth - 1, seen | {node.id}) for b in bound)
    if not isinstance(node, ast.Call):
        return False
    name = ctx.dotted(node.func)
    dtype = next((k.value for k in node.keywords if k.arg == "dtype"), None)
    if name is not None:
        if name in _INT_CONSTRUCTORS:
            return True
        if name in _TF_FACTORIES:
            given = dtype if dtype is not None else (node.args[1] if len(node.args) > 1 else None)
            return given is not None and ctx.dotted(given) in _TF_INT_DTYPES
        if name in _TF_TENSOR_SCATTERS:
            return bool(node.args) and integer(ctx, node.args[0], fn, depth - 1, seen)
        if name in _INT_KEEPING and dtype is None:  # a running sum of integers is an integer tensor
            return bool(node.args) and integer(ctx, node.args[0], fn, depth - 1, seen)
        if name in _JOINS:
            parts = node.args[0] if node.args else None
            return dtype is None and isinstance(parts, (ast.List, ast.Tuple)) and bool(parts.elts) \
                and all(integer(ctx, p, fn, depth - 1, seen) for p in parts.elts)
        if name not in _SIZED_FACTORIES:
            return False
        if dtype is not None:
            return ctx.dotted(dtype) in _INT_DTYPES
        if name in ("torch.tensor", "torch.as_tensor"):
            return bool(node.args) and (_int_literals(node.args[0]) or pyints.int_list(ctx, node.args[0], fn))
        if name == "torch.arange":
            return bool(node.args) and all(isinstance(a, ast.Constant) and type(a.value) is int for a in node.args)
        return False
    if isinstance(node.func, ast.Attribute):
        if node.func.attr in _INT_METHODS and not node.args and not node.keywords:
            return True
        if node.func.attr in _SAME_DTYPE and not _names_dtype(node):
            return integer(ctx, node.func.value, fn, depth - 1, seen)
    return False


def whole_numbers(ctx: Context, node: ast.AST | None, fn: ast.AST | None) -> bool:
    """A tensor made from Python ints whatever its dtype: `torch.as_tensor([num_boxes], dtype=torch.float)` with
    `num_boxes = sum(len(t["labels"]) for t in targets)` (the DETR family's box count), read through the binding
    every path to the use passes last. Its elements are whole numbers; a sum of them below 2**24 is exact in float32
    in any order."""
    if isinstance(node, ast.Name) and fn is not None:
        node = reaching.dominating_value(fn, node)
    if not isinstance(node, ast.Call) or ctx.dotted(node.func) not in ("torch.tensor", "torch.as_tensor") or not node.args:
        return False
    given = node.args[0]
    return pyints.int_list(ctx, given, fn) or pyints.int_value(ctx, given, fn, {})


def _augmented(fn: ast.AST, name: str) -> int:
    """How many augmented assignments (`name += v`) `fn` makes to the name (each a None entry of _bindings)."""
    return sum(1 for stmt in statements_in(fn) if isinstance(stmt, ast.AugAssign)
               and isinstance(stmt.target, ast.Name) and stmt.target.id == name)


_UNIQUES = frozenset({"unique", "unique_consecutive"})


def _unique_index_or_count(node: ast.Subscript) -> bool:
    """`torch.unique_consecutive(x, return_counts=True)[1]` (or `x.unique(...)[k]`, k >= 1): an item after the
    first of what unique returns is its inverse indices or its counts, int64 whatever x's dtype
    (torch.unique's documentation; NumPy's and TensorFlow's unique return integer indices and counts too)."""
    made, index = node.value, node.slice
    if not (isinstance(made, ast.Call) and isinstance(index, ast.Constant) and type(index.value) is int and index.value >= 1):
        return False
    func = made.func
    last = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
    return last in _UNIQUES and any(k.arg in ("return_counts", "return_inverse") for k in made.keywords)


def _int_literals(node: ast.AST) -> bool:
    """A list or tuple display, nested or not, of int literals only (`[0]`, `[[1, 2], [3, 4]]`)."""
    if isinstance(node, (ast.List, ast.Tuple)):
        return bool(node.elts) and all(_int_literals(e) for e in node.elts)
    return isinstance(node, ast.Constant) and type(node.value) is int


def _names_dtype(node: ast.Call) -> bool:
    """`x.view(torch.complex64)`: a view that reinterprets the memory as the dtype it names (an attribute
    argument, or a `dtype=` keyword)."""
    return node.func.attr == "view" and any(isinstance(a, ast.Attribute) for a in node.args) \
        if isinstance(node.func, ast.Attribute) else False


def _itself(value: ast.expr | None, name: str) -> bool:
    """`name[...]` or a same-dtype method of `name` (`p = p[:n]`, `x = x.view(-1)`): a binding that keeps
    the dtype the name already had."""
    while value is not None:
        if isinstance(value, ast.Name):
            return value.id == name
        if isinstance(value, ast.Subscript):
            value = value.value
        elif isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in _SAME_DTYPE \
                and not any(k.arg == "dtype" for k in value.keywords):
            value = value.func.value
        else:
            return False
    return False


def bindings_of(fn: ast.AST, name: str) -> list[ast.expr | None]:
    """What each binding of `name` in `fn` holds (None: unknown); empty where `fn` binds it not at all."""
    return _bindings(fn).get(name, [])


def _bindings(fn: ast.AST) -> dict[str, list[ast.expr | None]]:
    """Name -> what each of its bindings in `fn` holds, as an expression of the same dtype (None: unknown):
    `x = v` gives v; `v, i = t.max(dim)` gives t for v; `for p in t` and `for a, p in zip(s, t)` give t."""
    found: dict[str, list[ast.expr | None]] = {}
    if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        for arg in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs, *(a for a in (fn.args.vararg, fn.args.kwarg) if a)):
            found[arg.arg] = [None]  # a parameter: what callers pass

    def bind(target: ast.AST, value: ast.expr | None) -> None:
        if isinstance(target, ast.Name):
            found.setdefault(target.id, []).append(value)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                bind(element, None)
        elif isinstance(target, ast.Starred):
            bind(target.value, None)

    for stmt in statements_in(fn):
        if isinstance(stmt, ast.Assign):
            for target in stmt.targets:
                value = stmt.value
                if isinstance(target, (ast.Tuple, ast.List)) and len(target.elts) == 2 and isinstance(value, ast.Call) \
                        and isinstance(value.func, ast.Attribute) and value.func.attr in _VALUES_INDICES \
                        and (value.args or value.keywords):
                    bind(target.elts[0], value.func.value)
                    bind(target.elts[1], None)
                elif isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, ast.Call) \
                        and not any(isinstance(e, ast.Starred) for e in target.elts):
                    for k, element in enumerate(target.elts):  # x, y = load(): item k of what the call returns
                        bind(element, ast.Subscript(value=value, slice=ast.Constant(k)))
                else:
                    bind(target, value)
        elif isinstance(stmt, (ast.AugAssign, ast.AnnAssign)):
            bind(stmt.target, stmt.value if isinstance(stmt, ast.AnnAssign) else None)
        elif isinstance(stmt, (ast.For, ast.AsyncFor)):
            loop = stmt.iter
            if isinstance(stmt.target, ast.Tuple) and isinstance(loop, ast.Call) and isinstance(loop.func, ast.Name) \
                    and loop.func.id == "zip" and not loop.keywords and len(loop.args) == len(stmt.target.elts) \
                    and not any(isinstance(a, ast.Starred) for a in loop.args):
                for element, source in zip(stmt.target.elts, loop.args):
                    bind(element, ast.Subscript(value=source, slice=ast.Constant(0)) if isinstance(element, ast.Name) else None)
            else:
                bind(stmt.target, ast.Subscript(value=loop, slice=ast.Constant(0)) if isinstance(stmt.target, ast.Name) else None)
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            for item in stmt.items:
                if item.optional_vars is not None:
                    bind(item.optional_vars, None)
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.setdefault(stmt.name, []).append(None)
    for sub in nodes.iwalk(fn):
        if isinstance(sub, ast.NamedExpr):
            bind(sub.target, sub.value)
        elif isinstance(sub, (ast.Import, ast.ImportFrom)):
            for alias in sub.names:
                found.setdefault((alias.asname or alias.name).split(".")[0], []).append(None)
    return found


# What returns a dense tensor, never a tf.IndexedSlices.
# A placeholder is fed a dense value by the session (`feed_dict`), never a tf.IndexedSlices.
_DENSE_MAKERS = frozenset({"tf.convert_to_tensor", "tf.compat.v1.convert_to_tensor", "tf.placeholder",
                           "tf.compat.v1.placeholder", "tf.placeholder_with_default",
                           "tf.compat.v1.placeholder_with_default"})
_ARITHMETIC = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow)


def dense_value(ctx: Context, node: ast.AST | None, fn: ast.AST | None, depth: int = 6,
                seen: frozenset[str] = frozenset(), item: bool = False) -> bool:
    """The value is visibly a Python or NumPy value, never a tf.IndexedSlices: a literal, a list, tuple or
    dict, what `np.*` makes, a tensor `tf.convert_to_tensor` made (`X = tf.convert_to_tensor(X)`), an item
    of such an array or tensor (not of a list: its items may be anything), what a function of the file
    returns (`x, y = load()` takes item k of every `return` of `load`), a name every binding of which in the
    function is one, or a flag: a parameter whose default is a bool literal and which the function tests as
    a Python condition (`if is_training:`). `item`: the value is indexed, so only arrays and tensors count."""
    if node is None or depth <= 0:
        return False
    if not item and (isinstance(node, ast.Constant) or isinstance(node, (
            ast.List, ast.Tuple, ast.Dict, ast.ListComp, ast.DictComp, ast.SetComp, ast.JoinedStr))):
        return True
    if isinstance(node, ast.BinOp) and isinstance(node.op, _ARITHMETIC):
        # tf.IndexedSlices has no arithmetic operators: with a dense operand the result is dense (or an error)
        return any(dense_value(ctx, side, fn, depth - 1, seen, item) for side in (node.left, node.right))
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self" \
            and ctx.class_nodes and not item:
        assigned = ctx.self_assignments(ctx.class_nodes[-1]).get(node.attr, [])
        return bool(assigned) and all(dense_value(ctx, value, None, depth - 1, seen) for value, _ in assigned)
    if isinstance(node, ast.Subscript):
        made = node.value
        if isinstance(made, ast.Call) and isinstance(made.func, ast.Name) and isinstance(node.slice, ast.Constant) \
                and type(node.slice.value) is int and made.func.id in ctx.defs:
            callee = ctx.defs[made.func.id]
            returns = [r.value for r in nodes.iwalk(callee) if isinstance(r, ast.Return)]
            k = node.slice.value
            return bool(returns) and all(isinstance(r, ast.Tuple) and len(r.elts) > k
                                         and dense_value(ctx, r.elts[k], callee, depth - 1, item=item) for r in returns)
        return dense_value(ctx, made, fn, depth - 1, seen, item=True)
    if isinstance(node, ast.Call):
        name = ctx.dotted(node.func)
        if name is not None:
            return name.split(".")[0] == "numpy" or name in _DENSE_MAKERS
        if isinstance(node.func, ast.Name) and node.func.id in ctx.defs:
            callee = ctx.defs[node.func.id]
            returns = [r.value for r in nodes.iwalk(callee) if isinstance(r, ast.Return)]
            return bool(returns) and all(dense_value(ctx, r, callee, depth - 1, item=item) for r in returns)
        return False
    if isinstance(node, ast.Name) and fn is not None:
        if node.id in seen:
            return False
        if not item and _flag(fn, node.id):
            return True
        bound = [b for b in _bindings(fn).get(node.id, ()) if not _itself(b, node.id)]
        return bool(bound) and all(b is not None and dense_value(ctx, b, fn, depth - 1, seen | {node.id}, item)
                                   for b in bound)
    return False


def _flag(fn: ast.AST, name: str) -> bool:
    """`name` is a parameter of `fn` whose default is a bool literal, never rebound in `fn`, and tested there
    as a Python condition (`if name:`, `while not name:`, `a if name else b`): a Python flag."""
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    positional = [*fn.args.posonlyargs, *fn.args.args]
    defaults = dict(zip([a.arg for a in positional[len(positional) - len(fn.args.defaults):]], fn.args.defaults))
    defaults.update({a.arg: d for a, d in zip(fn.args.kwonlyargs, fn.args.kw_defaults) if d is not None})
    default = defaults.get(name)
    if not (isinstance(default, ast.Constant) and isinstance(default.value, bool)):
        return False
    if _bindings(fn).get(name) != [None]:
        return False  # rebound in the function: not only what callers pass
    for sub in nodes.iwalk(fn):
        test = sub.test if isinstance(sub, (ast.If, ast.While, ast.IfExp)) else None
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            test = test.operand
        if isinstance(test, ast.Name) and test.id == name:
            return True
    return False


def one_operand(op: str, node: ast.Call) -> bool:
    """An einsum given its subscripts (a string literal) and exactly one operand, no operands unpacked from a
    list (`*xs`: their number is unknown) and none by keyword: a sum or a transposition of that operand."""
    if not op.endswith(".einsum") or any(isinstance(a, ast.Starred) for a in node.args) \
            or any(k.arg in (None, "operands") for k in node.keywords):
        return False
    return len(node.args) == 2 and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)
