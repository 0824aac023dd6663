"""The arguments of a dataset's construction that visibly hold plain data (for kb/scan/datasets.py).

Numbers, strings, paths, tuples of such: an attribute a dataset's `__init__` sets from such an argument is the
class's own, not an object the caller chose (a dataset it wraps, a transform it passed), so reading the class
can vouch for it.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from kb.scan import follow
from kb.scan.context import Context
from kb.scan.datasetdefs import definition, imports_of, method_called
from kb.scan.nodes import iwalk
from kb.scan.syntax import imported_name

_PLAIN_MAKERS = frozenset({"pathlib.Path", "os.path.join", "os.path.expanduser", "os.path.abspath"})
_PLAIN_TYPES = frozenset({"int", "float", "str", "bool", "Path"})


def plain_argument(ctx: Context, node: ast.AST, where: follow.Where, depth: int, index: int | None = None) -> bool:
    """An argument that visibly holds plain data, no object that could be a dataset: a literal, a path (what
    `os.path.join` / `pathlib.Path` make, whatever they are given: a str or a Path), a list comprehension of
    such, a parameter annotated `int` / `float` / `str` / `bool` / `Path`, a name every value of which is one
    (`dir_img = Path("./data/imgs/")`; `img_scale: float = 0.5`), or what a function of the code base returns,
    every return being one (`train, valid = filelists(a)`, each a list of joined paths: `index` is the
    position taken from the tuple returned)."""
    if index is None and plain_data(node):
        return True
    if depth <= 0:
        return False
    if isinstance(node, ast.Tuple):
        return index is not None and index < len(node.elts) and plain_argument(ctx, node.elts[index], where, depth - 1)
    if isinstance(node, ast.ListComp):
        return index is None and plain_argument(ctx, node.elt, where, depth - 1)
    if isinstance(node, ast.Call):
        if index is None and imported_name(node.func, imports_of(ctx, where.defs, where.foreign)) in _PLAIN_MAKERS:
            return not node.keywords and not any(isinstance(a, ast.Starred) for a in node.args)
        found = definition(ctx, node.func, where) or method_called(ctx, node.func, where, depth - 1)
        if found is None or not isinstance(found[0], (ast.FunctionDef, ast.AsyncFunctionDef)):
            return False
        inner = follow.Where(found[0], found[1], found[2])
        returns = follow.returns(found[0])
        return bool(returns) and all(plain_argument(ctx, r, inner, depth - 1, index) for r in returns)
    if not isinstance(node, ast.Name):
        return False
    scope = where.scope
    if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
        for arg in (*scope.args.posonlyargs, *scope.args.args, *scope.args.kwonlyargs):
            if arg.arg == node.id and index is None and isinstance(arg.annotation, ast.Name) \
                    and arg.annotation.id in _PLAIN_TYPES:
                return True  # else what each caller of the scanned file gives (follow.values_of)
    values = follow.values_of(ctx, where, node.id)
    return bool(values) and all((i is None or index is None) and plain_argument(ctx, v, w, depth - 1, index if i is None else i)
                                for v, w, i in values or ())


def plain_data(node: ast.AST) -> bool:
    """A literal, a formatted string, arithmetic, or a tuple or list of such or of names: plain data."""
    if isinstance(node, (ast.Constant, ast.JoinedStr, ast.BinOp, ast.UnaryOp)):
        return True
    return isinstance(node, (ast.Tuple, ast.List)) and all(
        plain_data(e) or isinstance(e, (ast.Name, ast.Attribute)) for e in node.elts)


def passed_in(methods: dict[str, ast.AST], made: ast.Call | None = None,
              plain: Callable[[ast.AST], bool] | None = None) -> frozenset[str]:
    """The attributes `__init__` sets to one of its parameters as given (`self.dataset = dataset`): objects
    the caller chose, which the class cannot vouch for. Where the one construction is known (`made`: a
    transform object a collate function makes itself), a parameter it leaves at its default, or gives plain
    data (a number, a string, arithmetic, a tuple of such or of names: a size; `plain`: a name that visibly
    holds such), is the class's own."""
    init = methods.get("__init__")
    if not isinstance(init, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return frozenset()
    params = {a.arg for a in (*init.args.posonlyargs, *init.args.args, *init.args.kwonlyargs)} - {"self"}
    if made is not None and not any(isinstance(a, ast.Starred) for a in made.args) \
            and not any(k.arg is None for k in made.keywords):
        positional = [a.arg for a in (*init.args.posonlyargs, *init.args.args)][1:]
        given = {**dict(zip(positional, made.args)), **{k.arg: k.value for k in made.keywords if k.arg}}
        params = {p for p in params if p in given and not plain_data(given[p]) and not (plain and plain(given[p]))}
    found = set()
    for sub in iwalk(init):
        if isinstance(sub, ast.Assign) and isinstance(sub.value, ast.Name) and sub.value.id in params:
            for target in sub.targets:
                if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
                    found.add(target.attr)
    return frozenset(found)
