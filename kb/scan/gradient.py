"""Whether a call's arguments can require a gradient: the data flow `no-input-requires-grad`
(kb/scan/resolvers.py) reads, through one module's functions, the arguments its calls pass, and the
instances of its module classes. A gradient has a source (a parameter, a module's output,
`requires_grad=`): what visibly reaches none is free of one; anything not read here is not.
"""

from __future__ import annotations

import ast
from collections import deque
from collections.abc import Callable
from typing import Any

import kb
from kb.scan import follow, reaching
from kb.scan.context import Context
from kb.scan.nodes import iwalk
from kb.scan.survey import FIELDS
from kb.scan.syntax import NOT_FRAMEWORK, literal, self_attribute, statements_in

# What decides whether a call's input requires a gradient (grad_free): torch calls that make one
# whatever their arguments, the torch classes whose result needs none when their arguments need none,
# methods whose arguments only place or shape the receiver, what makes a Python or NumPy value of a
# tensor, builtins that keep their arguments' need, attributes that are no tensor, and what a module
# instance may be asked for without running it.
_NO_TENSOR = NOT_FRAMEWORK | {"math"}  # libraries whose calls make no tensor: the scan's non-framework ones, and math
_GRAD_MAKERS = frozenset({"torch.nn.Parameter", "torch.nn.parameter.Parameter", "torch.autograd.Variable"})
_GRAD_FREE_CLASSES = frozenset({"torch.utils.data.DataLoader", "torch.utils.data.TensorDataset", "torch.Generator",
                                "torch.device", "torch.Size"})
_PLACING = frozenset({"to", "cuda", "cpu", "float", "double", "half", "bfloat16", "long", "int", "bool", "type",
                      "view", "reshape", "flatten", "squeeze", "unsqueeze", "permute", "transpose", "contiguous",
                      "expand", "repeat", "flip", "size", "dim", "numel", "clone", "chunk", "split", "unbind", "astype"})
_GRAD_DROPPING = frozenset({"detach", "item", "tolist", "numpy", "size", "dim", "numel", "nonzero", "argmax", "argmin",
                            "argsort"})
_GRAD_FREE_BUILTINS = frozenset({"len", "int", "float", "bool", "str", "list", "tuple", "range", "enumerate", "zip",
                                 "min", "max", "abs", "round", "sum"})
# builtins whose result is a Python number, string or range whatever their argument (`len(images)`, `int(t)`)
_NUMBER_BUILTINS = frozenset({"len", "int", "float", "bool", "str", "range"})
# factories: a new torch leaf tensor, free of a gradient unless `requires_grad=True` is passed (checked first), whatever
# the arguments it copies or is shaped by (`torch.arange(n)`); JAX's that no argument's gradient reaches (not jnp.full)
_FACTORIES = frozenset(f"torch.{n}" for n in (
    "arange", "zeros", "ones", "empty", "full", "rand", "randn", "randint", "randperm", "linspace", "logspace", "eye",
    "tensor", "zeros_like", "ones_like", "empty_like", "full_like", "rand_like", "randn_like", "randint_like")) | {
    f"jax.numpy.{n}" for n in ("arange", "zeros", "ones", "empty", "eye", "zeros_like", "ones_like", "empty_like")}
# what reads a saved checkpoint back (a state dict, whose tensors state_dict() detached before saving)
_CHECKPOINT_LOADERS = frozenset({"torch.load", "torch.hub.load_state_dict_from_url", "torch.utils.model_zoo.load_url",
                                 "safetensors.torch.load_file"})
_INTEGER_PARAMS = frozenset({"dim", "repeats", "output_size", "index", "indices"})  # integers: never a gradient
_SIZE_ATTRS = frozenset({"shape", "device", "dtype", "ndim", "is_cuda", "requires_grad"})
_MODULE_USES = frozenset({"to", "cuda", "cpu", "train", "eval", "float", "double", "half", "parameters",
                          "named_parameters", "buffers", "named_buffers", "modules", "children", "state_dict",
                          "load_state_dict", "zero_grad", "requires_grad_"})


def grad_free(ctx: Context, node: ast.AST, fn: ast.AST, depth: int = 12, seen: frozenset = frozenset()) -> bool:
    """True when the expression visibly requires no gradient in `fn` (a function, or the module):
    made by torch factories, NumPy or Python, and what torch functions and tensor methods make of
    such values, through the names of the function (every binding of a name), the arguments every
    call of a module-level function in the file passes, and the inputs every call of a module class's
    instances in the file passes to its `forward`. A module's output, a parameter, `requires_grad=`,
    anything not read here: False."""
    if depth <= 0:
        return False
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.Attribute):
        if node.attr in _SIZE_ATTRS:
            return True  # x.shape, x.device, x.dtype: no tensor
        if self_attribute(node) and ctx.class_nodes and any(item is fn for item in ctx.class_nodes[-1].body):
            return ctx.attribute_values(node.attr) is not None \
                or _attribute_grad_free(ctx, ctx.class_nodes[-1], node.attr, depth, seen)  # ctx.scale set to literals
        return isinstance(node.value, ast.Name) and ctx.aliases.get(node.value.id, "").split(".")[0] in _NO_TENSOR  # math.pi, np.int64
    if isinstance(node, ast.Name):
        value = reaching.reaching_value(ctx.reaching_memo, fn, node)
        if value is not None:  # the one binding this use sees (kb/scan/reaching.py), not every binding of the name
            return (reaching.untouched(ctx.alias_memo, fn, node.id) or _writes_grad_free(ctx, fn, depth, seen)) \
                and grad_free(ctx, value, fn, depth - 1, seen)
        return _name_grad_free(ctx, node.id, fn, depth, seen)
    if isinstance(node, ast.Subscript):
        return grad_free(ctx, node.value, fn, depth - 1, seen)  # an index carries no gradient
    if isinstance(node, ast.Compare):
        return True  # a boolean result
    if isinstance(node, (ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.IfExp, ast.Tuple, ast.List)):
        parts = [node.left, node.right] if isinstance(node, ast.BinOp) else [node.operand] if isinstance(node, ast.UnaryOp) \
            else [node.body, node.orelse] if isinstance(node, ast.IfExp) else node.values if isinstance(node, ast.BoolOp) \
            else node.elts
        return all(grad_free(ctx, p, fn, depth - 1, seen) for p in parts)
    if isinstance(node, ast.Call):
        return _call_grad_free(ctx, node, fn, depth, seen)
    return False


def grad_free_at(ctx: Context, node: ast.AST, fn: ast.AST, at: ast.AST) -> bool:
    """grad_free, or, for a name, the value it holds where `at` reads it (follow.reaching: the last plain
    binding before, through `if` branches) visibly requires no gradient: `y = target(x).detach()` then
    `F.interpolate(y)`, though another binding of `y` in the function is a model's output."""
    if grad_free(ctx, node, fn):
        return True
    if not isinstance(node, ast.Name):
        return False
    value = follow.reaching(fn, at, node.id)
    return value is not None and grad_free(ctx, value, fn)


_NAMES: dict[str, tuple[str, ...]] = {}


def _parameter_names(op: str) -> tuple[str, ...]:
    """The op's parameters in order, as kb.parameters gives them (empty: not known); memoized."""
    if op not in _NAMES:
        try:
            params = kb.parameters(op, framework="jax" if op.startswith("jax.") else "pytorch")
        except (LookupError, ValueError, KeyError):
            params = None
        _NAMES[op] = tuple(p[0] if isinstance(p, (tuple, list)) else str(p) for p in params or ())
    return _NAMES[op]


def integer_arguments(op: str, node: ast.Call, method: bool) -> set[int]:
    """ids of the arguments the op's signature binds to an integer parameter (`repeats`, `dim`)."""
    found = {id(k.value) for k in node.keywords if k.arg in _INTEGER_PARAMS}
    names = list(_parameter_names(op)) if op.startswith(("torch.", "jax.numpy.")) else []
    if method and names and names[0] in ("input", "self"):
        names = names[1:]  # the receiver, listed first for some Tensor methods
    for position, arg in enumerate(node.args[:len(names)]):
        if isinstance(arg, ast.Starred):
            break
        if names[position] in _INTEGER_PARAMS:
            found.add(id(arg))
    return found


def _args_grad_free(ctx: Context, node: ast.Call, fn: ast.AST, depth: int, seen: frozenset, op: str = "") -> bool:
    ints = integer_arguments(op, node, False) if op else set()  # a gather's indices: what is gathered decides
    return all(not isinstance(a, ast.Starred) and (id(a) in ints or grad_free(ctx, a, fn, depth - 1, seen)) for a in node.args) \
        and all(k.arg is not None and (id(k.value) in ints or grad_free(ctx, k.value, fn, depth - 1, seen)) for k in node.keywords)


def _call_grad_free(ctx: Context, node: ast.Call, fn: ast.AST, depth: int, seen: frozenset) -> bool:
    if any(k.arg == "requires_grad" and literal(k.value) is not False for k in node.keywords):
        return False
    func = node.func
    name = ctx.dotted(func)
    if name is not None:
        if name in _GRAD_MAKERS:
            return False
        last = name.rsplit(".", 1)[-1]
        if name in _FACTORIES:
            return True  # a new leaf tensor (requires_grad=True was ruled out above)
        if name in _CHECKPOINT_LOADERS:
            return True  # a saved state dict: state_dict() holds detached tensors, so none loaded requires a gradient
        if name.startswith(("torch.", "jax.numpy.")) and (last[:1].islower() or name in _GRAD_FREE_CLASSES):
            return _args_grad_free(ctx, node, fn, depth, seen, name)  # a function of values that need no gradient
        return name.split(".")[0] in _NO_TENSOR  # NumPy, random, math: no tensor
    if isinstance(func, ast.Name):
        if func.id in _NUMBER_BUILTINS and func.id not in ctx.aliases and func.id not in ctx.defs:
            return True  # len(x), int(t): a Python value, whatever its argument
        if func.id in _GRAD_FREE_BUILTINS:
            return _args_grad_free(ctx, node, fn, depth, seen)
        wrapped = _partial_call(ctx, func.id, node, fn)
        if wrapped is not None:
            return _call_grad_free(ctx, wrapped, fn, depth - 1, seen)  # arange = partial(torch.arange, device=d)
        target = ctx.defs.get(func.id)
        if target is None or func.id in ctx.aliases or not _top_level(ctx, target):
            return False  # a class of the file (a module), or a function not read here
        returns = [r.value for r in iwalk(target) if isinstance(r, ast.Return)]
        return bool(returns) and all(r is not None and grad_free(ctx, r, target, depth - 1, seen) for r in returns)
    if isinstance(func, ast.Attribute):
        if func.attr in _GRAD_DROPPING:
            return True  # x.detach(), x.item(), x.tolist(), x.numpy()
        if func.attr == "requires_grad_":
            return False
        if not grad_free(ctx, func.value, fn, depth - 1, seen):
            return False
        return func.attr in _PLACING or _args_grad_free(ctx, node, fn, depth, seen)
    return False


def _partial_call(ctx: Context, name: str, node: ast.Call, fn: ast.AST) -> ast.Call | None:
    """`name(...)` where `name` is only ever bound in `fn` to `functools.partial(f, *a, **k)`: the call
    `f(*a, ..., **k, ...)` it makes, so that what `f` makes is read as if called directly."""
    bound = ctx.assigned_in(fn).get(name, []) if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) else []
    if len(bound) != 1 or not isinstance(bound[0], ast.Call) or ctx.dotted(bound[0].func) != "functools.partial" \
            or not bound[0].args or any(isinstance(a, ast.Starred) for a in bound[0].args):
        return None
    made = bound[0]
    return ast.Call(func=made.args[0], args=[*made.args[1:], *node.args], keywords=[*made.keywords, *node.keywords])


def _attribute_grad_free(ctx: Context, cls: ast.ClassDef, attr: str, depth: int, seen: frozenset) -> bool:
    """Every `self.<attr> = value` in the class's methods (at least one) binds a value that needs no
    gradient in its method (`self._hashes = torch.from_numpy(hashes)`, then `self._hashes.cuda()`), and
    no other write (an augmented or subscript assignment, an in-place method) touches it."""
    key = (id(cls), "self." + attr)
    if key in seen:
        return True  # self.x = self.x.cuda(): what it is comes from its other bindings
    seen = seen | {key}
    found = False
    for method in (n for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))):
        for sub in iwalk(method):
            if isinstance(sub, ast.Assign):
                for target in sub.targets:
                    if self_attribute(target) and target.attr == attr:
                        if not grad_free(ctx, sub.value, method, depth - 1, seen):
                            return False
                        found = True
                    elif isinstance(target, ast.Subscript) and self_attribute(target.value) and target.value.attr == attr:
                        return False
            elif isinstance(sub, (ast.AugAssign, ast.AnnAssign)) and (self_attribute(sub.target) and sub.target.attr == attr):
                return False
            elif isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and sub.func.attr.endswith("_") \
                    and self_attribute(sub.func.value) and sub.func.value.attr == attr:
                return False
    return found


def _top_level(ctx: Context, target: ast.AST) -> bool:
    return ctx.tree is not None and any(item is target for item in ctx.tree.body)


def _bindings(ctx: Context, fn: ast.AST) -> dict[str, list[ast.expr | None]]:
    """Name -> what every binding of it in `fn` binds (None: a binding not read here: a loop or `with`
    target, an import, a nested function), and "" -> the values `fn` writes into tensors in place
    (subscript and augmented assignments, the arguments of `x.op_(...)`; None for `out=` or an
    assigned `.requires_grad`/`.data`/`.grad`)."""
    found = ctx.binding_memo.get(id(fn))
    if found is not None:
        return found
    found = {"": []}
    writes = found[""]

    def bind(target: ast.AST, value: ast.expr | None) -> None:
        if isinstance(target, ast.Name):
            found.setdefault(target.id, []).append(value)
        elif isinstance(target, (ast.Tuple, ast.List)):
            elts = value.elts if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts) else None
            for k, item in enumerate(target.elts):
                bind(item.value if isinstance(item, ast.Starred) else item, elts[k] if elts is not None else value)
        elif isinstance(target, ast.Subscript):
            writes.append(value)
        elif isinstance(target, ast.Attribute):
            writes.append(None if target.attr in ("requires_grad", "data", "grad") else value)

    for stmt in statements_in(fn):
        if isinstance(stmt, ast.Assign):
            for target in stmt.targets:
                bind(target, stmt.value)
        elif isinstance(stmt, (ast.AnnAssign, ast.AugAssign)):
            if stmt.value is not None:
                bind(stmt.target, stmt.value)
            if isinstance(stmt, ast.AugAssign):
                writes.append(stmt.value)
        elif isinstance(stmt, (ast.For, ast.AsyncFor)):
            bind(stmt.target, None)
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            for item in stmt.items:
                if item.optional_vars is not None:
                    bind(item.optional_vars, None)
        elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
            for alias in stmt.names:
                found.setdefault((alias.asname or alias.name).split(".")[0], []).append(None)
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.setdefault(stmt.name, []).append(None)
    tops = [s for s in fn.body if not isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))] \
        if isinstance(fn, ast.Module) else [fn]
    for sub in (sub for top in tops for sub in iwalk(top)):
        if isinstance(sub, ast.NamedExpr):
            found.setdefault(sub.target.id, []).append(None)
        elif isinstance(sub, ast.comprehension):
            bind(sub.target, None)
        elif isinstance(sub, ast.Call):
            if any(k.arg == "out" for k in sub.keywords):
                writes.append(None)
            elif isinstance(sub.func, ast.Attribute) and sub.func.attr.endswith("_") and not sub.func.attr.startswith("_"):
                writes.extend(a for a in sub.args if not isinstance(a, ast.Starred))
                writes.extend(k.value for k in sub.keywords)
    ctx.binding_memo[id(fn)] = found
    return found


def _writes_grad_free(ctx: Context, fn: ast.AST, depth: int, seen: frozenset) -> bool:
    """Every in-place write of `fn` writes values that need no gradient (assumed while it is checked:
    a gradient has a source, which the check of each write would meet)."""
    memo = ctx.writes_memo.get(id(fn))
    if memo is not None:
        return memo
    ctx.writes_memo[id(fn)] = True
    ok = all(w is not None and grad_free(ctx, w, fn, depth - 1, seen) for w in _bindings(ctx, fn)[""])
    ctx.writes_memo[id(fn)] = ok
    return ok


def _name_grad_free(ctx: Context, name: str, fn: ast.AST, depth: int, seen: frozenset) -> bool:
    key = (id(fn), name)
    if key in seen:
        return True  # x = x.flip(-1): what x is comes from its other bindings
    seen = seen | {key}
    if not _writes_grad_free(ctx, fn, depth, seen):
        return False
    values = _bindings(ctx, fn).get(name, [])
    if any(v is None or not grad_free(ctx, v, fn, depth - 1, seen) for v in values):
        return False
    params = [a.arg for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)] \
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) else []
    if name in params and isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
        passed = _passed_in(ctx, fn, name)
        return passed is not None and all(grad_free(ctx, v, where, depth - 1, seen) for v, where in passed)
    if values:
        return True
    if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) and ctx.tree is not None and _top_level(ctx, fn):
        return name in _bindings(ctx, ctx.tree) and _name_grad_free(ctx, name, ctx.tree, depth - 1, seen)
    return False


def _caller_of(ctx: Context, node: ast.Call) -> ast.AST:
    """The innermost function of the module that holds the call `node` (the module itself at top level)."""
    return _named(ctx)[2].get(id(node), ctx.tree) or node


def _passed_in(ctx: Context, fn: ast.FunctionDef | ast.AsyncFunctionDef, param: str) -> list[tuple[ast.expr, ast.AST]] | None:
    """(value, the function it is passed in) for every call in the file that passes `param` of `fn`: a
    module-level function called by its name, or the `forward` of a module class of the file whose
    every instance is bound to a name that is only called or asked for a few attributes. None when
    `fn` is handed on, or any call passes *args or **kwargs; a parameter left out is its default."""
    if ctx.tree is None:
        return None
    args = fn.args
    names = [a.arg for a in (*args.posonlyargs, *args.args)]
    defaults = dict(zip(names[len(names) - len(args.defaults):], args.defaults))
    defaults.update({a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None})
    if _top_level(ctx, fn) and ctx.defs.get(fn.name) is fn:
        calls = [c for c in ctx.all_calls if isinstance(c.func, ast.Name) and c.func.id == fn.name]
        uses = len(_named(ctx)[0].get(fn.name, ()))
        if uses != len(calls):
            return None  # handed on (map(fn, ...), partial(fn)): called where this file does not show
    else:
        cls = next((c for c in ctx.tree.body if isinstance(c, ast.ClassDef) and fn in c.body), None)
        if cls is None or fn.name != "forward" or not names or names[0] != "self":
            return None
        instances = _instance_calls(ctx, cls)
        if instances is None:
            return None
        calls, names = instances, names[1:]
    out = []
    for call in calls:
        if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
            return None
        given = dict(zip(names, call.args))
        given.update({k.arg: k.value for k in call.keywords if k.arg})
        if param in given:
            out.append((given[param], _caller_of(ctx, call)))
        elif param in defaults:
            out.append((defaults[param], ctx.tree))
        else:
            return None
    return out if calls else None


def _named(ctx: Context) -> tuple[dict[str, list[ast.Name]], dict[str, list[ast.Call]], dict[int, ast.AST]]:
    """The module's names by identifier, its calls of a plain name by that name (each in `ast.walk`
    order), and the innermost function that holds each call in a function (a function's decorators and
    defaults count as its own): one breadth-first walk of the module, not one per question."""
    if ctx.name_memo is None:
        names: dict[str, list[ast.Name]] = {}
        calls: dict[str, list[ast.Call]] = {}
        callers: dict[int, ast.AST] = {}
        todo: deque[tuple[Any, ast.AST | None]] = deque([(ctx.tree, None)] if ctx.tree is not None else ())
        take, push, fields, holds = todo.popleft, todo.append, FIELDS, HOLDS
        while todo:
            node, fn = take()
            kind = type(node)
            if kind is ast.Name:
                names.setdefault(node.id, []).append(node)
                continue
            if kind is ast.FunctionDef or kind is ast.AsyncFunctionDef:
                fn = node
            elif kind is ast.Call:
                if fn is not None:
                    callers[id(node)] = fn
                if type(node.func) is ast.Name:
                    calls.setdefault(node.func.id, []).append(node)
            for field in fields[kind]:
                value = getattr(node, field, None)
                if type(value) is list:
                    for child in value:
                        if holds[type(child)]:
                            push((child, fn))
                elif holds[type(value)]:
                    push((value, fn))
        ctx.name_memo = (names, calls, callers)
    return ctx.name_memo


def _instance_calls(ctx: Context, cls: ast.ClassDef) -> list[ast.Call] | None:
    """The calls `m(...)` of every instance of `cls` in the file, where each is made as
    `m = Cls(...)` (or `Cls(...).to(...)`) in a function that uses `m` only to call it or for
    `_MODULE_USES` (`m.parameters()`, `m.train()`): None when an instance is kept or handed on
    in another way, or the class is subclassed here."""
    assert ctx.tree is not None
    names, calls_of, _ = _named(ctx)
    made = calls_of.get(cls.name, [])
    uses = names.get(cls.name, [])
    if not made or len(uses) != len(made):
        return None  # subclassed, or named in another way
    calls: list[ast.Call] = []
    for instance in made:
        where = _caller_of(ctx, instance)
        kept = _kept_as(where, instance)
        if kept is None or len([v for v in _bindings(ctx, where).get(kept, [])]) != 1:
            return None
        parents = {id(child): parent for parent in iwalk(where) for child in ast.iter_child_nodes(parent)}
        for name in (n for n in iwalk(where) if isinstance(n, ast.Name) and n.id == kept and isinstance(n.ctx, ast.Load)):
            parent = parents.get(id(name))
            if isinstance(parent, ast.Call) and parent.func is name:
                calls.append(parent)
            elif not (isinstance(parent, ast.Attribute) and parent.attr in _MODULE_USES):
                return None
    return calls


class _Holds(dict[type, bool]):
    """Type of a value -> whether it is a node that may hold a name or a call (read once per type): the walks
    of _named and of kb/scan/quietfunctions.py push only those."""

    def __missing__(self, cls: type) -> bool:
        found = self[cls] = issubclass(cls, ast.AST) and not issubclass(cls, _NO_NAMES)
        return found


_NO_NAMES = (ast.Constant, ast.expr_context, ast.operator, ast.unaryop, ast.cmpop, ast.boolop)
HOLDS = _Holds()


def reads_a_buffer(ctx: Context, node: ast.Call, op: str, buffers: frozenset[str]) -> bool:
    """The function form of an op (`torch.gather(v, index=t, dim=0)`) whose input is a parameter that every
    call of the enclosing function passes a registered buffer (`buffers`: kb/scan/prepare.py), and whose
    other arguments, the op's indices aside, visibly need no gradient: no gradient flows into a buffer, so
    the backward into the input (a gather's atomic scatter into the gathered-from tensor) never runs, as for
    the method form `v.gather(...)`."""
    first = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "input"), None)
    if not (isinstance(first, ast.Name) and first.id in buffers) or not ctx.fn_nodes:
        return False
    if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
        return False
    name = ctx.index_param.get(op)
    index = ctx.argument(op, node, name) if name else None
    rest = [p for p in (*node.args, *(k.value for k in node.keywords)) if p is not first and p is not index]
    return all(grad_free(ctx, p, ctx.fn_nodes[-1]) for p in rest)


def _kept_as(scope: ast.AST, made: ast.AST) -> str | None:
    """The plain name a construction is assigned to in `scope` (through `.to(device)` / `.cuda()` and the
    other module uses of _MODULE_USES on it), the last such assignment; None if it is not kept so."""
    name = None
    for stmt in statements_in(scope):
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            value = stmt.value
            while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in _MODULE_USES:
                value = value.func.value
            if value is made:
                name = stmt.targets[0].id
    return name


def used_only_without_grad(ctx: Context, node: ast.Call, op: str, no_grad: Callable[[ast.expr], bool]) -> bool:
    """The construction of a module (`criterion = torch.nn.CTCLoss(...).cuda()`) bound to a name of its
    function (or of the module; any other binding of it aside, `if ...: criterion = A() else: criterion = B()`)
    that is read only inside `with torch.no_grad():` blocks
    of that same scope (to call it, or to hand it to what those blocks call): torch records no gradient while
    the block runs, so the module's backward never runs. A read in a nested function or lambda, or outside
    such a block, may run it where a gradient is recorded."""
    scope: ast.AST | None = ctx.fn_nodes[-1] if ctx.fn_nodes else ctx.tree
    if scope is None or not op.rsplit(".", 1)[-1][:1].isupper():
        return False  # a function's call, not a module's construction
    name = _kept_as(scope, node)
    if name is None or any(isinstance(n, (ast.Global, ast.Nonlocal)) and name in n.names for n in iwalk(scope)):
        return False  # what else the name is bound to matters not: every read of it is checked below
    reads = 0
    stack: list[tuple[ast.AST, bool]] = [(child, False) for child in ast.iter_child_nodes(scope)]
    while stack:
        item, quiet = stack.pop()
        if isinstance(item, ast.Name) and item.id == name and isinstance(item.ctx, ast.Load):
            if not quiet:
                return False
            reads += 1
        elif isinstance(item, (ast.With, ast.AsyncWith)):
            inner = quiet or any(no_grad(w.context_expr) for w in item.items)
            stack += [(w, quiet) for w in item.items] + [(s, inner) for s in item.body]
        elif isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            stack += [(child, False) for child in ast.iter_child_nodes(item)]  # runs where it is called
        else:
            stack += [(child, quiet) for child in ast.iter_child_nodes(item)]
    return reads > 0
