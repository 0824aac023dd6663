"""What one construction of a class fixes in its attributes, and the branches of its methods that cannot run.

`MelDataset(files, ..., False, False)` sets `self.split = split` to False, so `if self.split:` (the random
crop) never runs in its `__getitem__`; `SpectrogramDataset(...)` without `aug_cfg` hands None on to its base's
`__init__` (`super().__init__(audio_conf, normalize, aug_cfg)`), which sets `self.aug_conf` to it and
`self.noise_injector` to None in the branch that runs; `Seg(args, split="val")` sets `self.split` to "val", so `if
self.split == "train":` (the random augmentation) never runs. `fixed` reads `__init__` (and the base `__init__` it
calls) with the construction's literal arguments and the parameters' literal defaults; an attribute any
other method assigns, or one set in a branch whose test cannot be told, is not fixed. `live` walks a method
without the bodies of `if` statements whose test the fixed attributes decide false (nor the `else` of those
they decide true). Read with `ast` only, for kb/scan/datasets.py.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from kb.scan.nodes import iwalk

_UNKNOWN = object()
_DEPTH = 3


def fixed(cls: ast.ClassDef, methods: dict[str, ast.AST], defs: dict, made: ast.Call | None) -> dict[str, object]:
    """Attribute -> the literal value every instance made by `made` holds after `__init__` (and never
    assigned by another method of the class); empty when nothing can be told."""
    init = methods.get("__init__")
    if made is None or not isinstance(init, ast.FunctionDef):
        return {}
    env = _bind(init, made.args, made.keywords, {})
    if env is None:
        return {}
    attrs: dict[str, object] = {}
    _run(init.body, env, attrs, cls, defs, _DEPTH)
    others = {t.attr for name, fn in methods.items() if name != "__init__" for t in _self_targets(fn)}
    return {k: v for k, v in attrs.items() if v is not _UNKNOWN and k not in others}


def live(fn: ast.AST, attrs: dict[str, object]) -> Iterator[ast.AST]:
    """The nodes of `fn` as ast.walk gives them, less the branches the fixed attributes rule out."""
    todo: list[ast.AST] = [fn]
    while todo:
        node = todo.pop()
        yield node
        if isinstance(node, ast.If) and attrs:
            test = _truth(_value(node.test, {}, attrs))
            if test is not None:
                todo.append(node.test)
                todo.extend(node.body if test else node.orelse)
                continue
        todo.extend(ast.iter_child_nodes(node))


def _bind(init: ast.FunctionDef, args: list[ast.expr], keywords: list[ast.keyword], env: dict) -> dict | None:
    """The `__init__` parameters' values: the call's literal (or known) arguments, else their literal defaults."""
    if any(isinstance(a, ast.Starred) for a in args) or any(k.arg is None for k in keywords):
        return None
    positional = [a.arg for a in (*init.args.posonlyargs, *init.args.args)][1:]
    defaults = dict(zip([a.arg for a in (*init.args.posonlyargs, *init.args.args)][-len(init.args.defaults):],
                        init.args.defaults)) if init.args.defaults else {}
    defaults.update({a.arg: d for a, d in zip(init.args.kwonlyargs, init.args.kw_defaults) if d is not None})
    given = {**dict(zip(positional, args)), **{k.arg: k.value for k in keywords if k.arg}}
    if len(args) > len(positional):
        return None
    out: dict[str, object] = {}
    for name in (*positional, *(a.arg for a in init.args.kwonlyargs)):
        if name in given:
            out[name] = _value(given[name], env, {})
        elif name in defaults:
            out[name] = _value(defaults[name], {}, {})
        else:
            out[name] = _UNKNOWN
    return out


def _run(body: list[ast.stmt], env: dict, attrs: dict, cls: ast.ClassDef, defs: dict, depth: int) -> None:
    """Reads `__init__`'s statements in order: `self.x = value`, a base `__init__` called, `if` branches."""
    for stmt in body:
        if isinstance(stmt, ast.If):
            test = _truth(_value(stmt.test, env, attrs))
            if test is None:
                for sub in (*stmt.body, *stmt.orelse):
                    for target in _self_targets(sub):
                        attrs[target.attr] = _UNKNOWN
            else:
                _run(stmt.body if test else stmt.orelse, env, attrs, cls, defs, depth)
            continue
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and _calls_base_init(stmt.value):
            base = _base_init(cls, defs)
            call = stmt.value
            args = call.args[1:] if isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Name) else call.args
            bound = _bind(base[1], args, call.keywords, env) if base is not None and depth > 0 else None
            if base is not None and bound is not None:
                _run(base[1].body, bound, attrs, base[0], defs, depth - 1)
            elif base is not None:
                for target in _self_targets(base[1]):
                    attrs[target.attr] = _UNKNOWN
            continue
        for target in _self_targets(stmt):
            value = stmt.value if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and stmt.targets[0] is target \
                else None
            attrs[target.attr] = _value(value, env, attrs) if value is not None else _UNKNOWN


def _calls_base_init(call: ast.Call) -> bool:
    """`super().__init__(...)`, `super(C, self).__init__(...)` or `Base.__init__(self, ...)`."""
    func = call.func
    if not (isinstance(func, ast.Attribute) and func.attr == "__init__"):
        return False
    owner = func.value
    if isinstance(owner, ast.Call) and isinstance(owner.func, ast.Name) and owner.func.id == "super":
        return True
    return isinstance(owner, ast.Name) and bool(call.args) and isinstance(call.args[0], ast.Name) and call.args[0].id == "self"


def _base_init(cls: ast.ClassDef, defs: dict) -> tuple[ast.ClassDef, ast.FunctionDef] | None:
    """The first base of the code base (of the same module) that defines `__init__`."""
    for base in cls.bases:
        found = defs.get(base.id) if isinstance(base, ast.Name) else None
        if isinstance(found, ast.ClassDef):
            init = next((n for n in found.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"), None)
            return (found, init) if init is not None else None
    return None


def _self_targets(node: ast.AST) -> list[ast.Attribute]:
    """The `self.x` a statement (or function) assigns, anywhere in it."""
    out = []
    for sub in iwalk(node):
        targets = sub.targets if isinstance(sub, ast.Assign) else [sub.target] \
            if isinstance(sub, (ast.AugAssign, ast.AnnAssign, ast.For)) else []
        for target in targets:
            for part in iwalk(target):
                if isinstance(part, ast.Attribute) and isinstance(part.value, ast.Name) and part.value.id == "self":
                    out.append(part)
    return out


def _value(node: ast.AST, env: dict, attrs: dict) -> object:
    """A literal value of the expression given the parameters (`env`) and fixed attributes (_UNKNOWN: not told)."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        return env.get(node.id, _UNKNOWN)
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        return attrs.get(node.attr, _UNKNOWN)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        inner = _truth(_value(node.operand, env, attrs))
        return _UNKNOWN if inner is None else not inner
    if isinstance(node, ast.BoolOp):
        values = [_value(v, env, attrs) for v in node.values]
        decided = [_truth(v) for v in values]
        stop = False if isinstance(node.op, ast.And) else True
        for value, truth in zip(values, decided):
            if truth is None:
                return _UNKNOWN if stop not in decided else stop  # `x and False`: false whatever x is
            if truth is stop:
                return value
        return values[-1]
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):  # `("train", "trainval")`: a literal collection
        items = [_value(e, env, attrs) for e in node.elts]
        return _UNKNOWN if any(i is _UNKNOWN for i in items) else tuple(items)
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], _COMPARISONS):
        left, right = _value(node.left, env, attrs), _value(node.comparators[0], env, attrs)
        if left is _UNKNOWN or right is _UNKNOWN or not _plain(left) or not _plain(right):
            return _UNKNOWN
        op = node.ops[0]
        if isinstance(op, (ast.Is, ast.IsNot)):
            return (left is right) if isinstance(op, ast.Is) else (left is not right)
        if isinstance(op, (ast.Eq, ast.NotEq)):  # `self.split == "train"` of a dataset built with split="val"
            return (left == right) if isinstance(op, ast.Eq) else (left != right)
        if not isinstance(right, tuple):
            return _UNKNOWN
        return (left in right) if isinstance(op, ast.In) else (left not in right)
    return _UNKNOWN


_COMPARISONS = (ast.Is, ast.IsNot, ast.Eq, ast.NotEq, ast.In, ast.NotIn)


def _plain(value: object) -> bool:
    """A literal that compares as written: a string, a number, a bool, None, or a tuple of them."""
    return value is None or isinstance(value, (str, int, float, bool)) or (isinstance(value, tuple) and all(map(_plain, value)))


def _truth(value: object) -> bool | None:
    return None if value is _UNKNOWN else bool(value)
