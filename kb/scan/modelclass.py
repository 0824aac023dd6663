"""The class a construction calls where it is defined in another file of the code base, with a Context
to read that file in (its own imports), for the rank a model's `forward` returns (kb/scan/rank.py).

A training script rarely defines its network: `from models import ResNet18` / `from models import *`
(a package whose `__init__.py` re-exports `from .resnet import *`), `import model as M; M.Net()`, or
`from vit_pytorch.vit import ViT`. The file is found and read with `ast` only, never imported
(kb/scan/prepare.py's local_tree), as far as a few re-exports.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Sequence
from typing import Any

from kb.scan.context import Context
from kb.scan.nodes import iwalk
from kb.scan.prepare import local_tree
from kb.scan.syntax import aliases_of

_DEPTH = 4  # re-exports followed (`models/__init__.py`'s `from .resnet import *`)
_READERS: dict[tuple[str, frozenset[str]], Context] = {}


def defined(ctx: Context, func: ast.AST) -> tuple[Context, ast.ClassDef] | None:
    """The class `func` names (`Net`, `models.Net`) where it is not a class of this file, with a Context of
    the file that defines it; None when no file of the code base visibly defines it."""
    if ctx.tree is None or not ctx.filename:
        return None
    if isinstance(func, ast.Name):
        found = _imported(ctx.filename, ctx.tree, func.id, _DEPTH)
    elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        module = _module_of(ctx.tree, func.value.id)
        tree = local_tree(ctx.filename, module) if module else None
        found = _in_module(tree[0], tree[1], func.attr, _DEPTH) if tree is not None else None
    elif isinstance(func, ast.Subscript):
        return _registered(ctx, func.value)
    else:
        return None
    if found is None:
        return None
    path, tree_, cls = found
    return reader(ctx, path, tree_), cls


def _registered(ctx: Context, table: ast.expr) -> tuple[Context, ast.ClassDef] | None:
    """The class every entry of a registry makes (`KNOWN_MODELS[name](...)` / `models.KNOWN_MODELS[...]`), each
    value the one class or a lambda that makes it."""
    found = registry(ctx, table)
    if found is None or len({ast.dump(m) for m in found[1]}) != 1:
        return None
    reading, made = found[0], found[1]
    if isinstance(made[0], ast.Name) and reading.tree is not None:
        cls = _in_module(reading.filename, reading.tree, made[0].id, _DEPTH)
        return (reader(ctx, cls[0], cls[1]) if cls[0] != reading.filename else reading, cls[2]) if cls else None
    return defined(reading, made[0]) if isinstance(made[0], ast.Attribute) else None


def registry(ctx: Context, table: ast.expr) -> tuple[Context, list[ast.expr]] | None:
    """What each entry of a registry calls (`KNOWN_MODELS` / `models.KNOWN_MODELS`: a module-level dict of this
    file or of an imported module of the code base, `{name: Net}`, `OrderedDict([(name, lambda *a, **kw:
    Net(...)), ...])` or `dict(name=build)`: the value, or the callee of a lambda's call), with a Context of
    the file that defines it; None when the table is not such a dict."""
    if isinstance(table, ast.Name) and ctx.tree is not None:
        where: tuple[str, ast.Module] | None = (ctx.filename, ctx.tree)
        name = table.id
    elif isinstance(table, ast.Attribute) and isinstance(table.value, ast.Name) and ctx.tree is not None:
        module = _module_of(ctx.tree, table.value.id)
        where, name = local_tree(ctx.filename, module) if module else None, table.attr
    else:
        return None
    if where is None:
        return None
    values = [n.value for n in where[1].body if isinstance(n, ast.Assign) and len(n.targets) == 1
              and isinstance(n.targets[0], ast.Name) and n.targets[0].id == name]
    made = [v.body.func if isinstance(v, ast.Lambda) and isinstance(v.body, ast.Call) else v
            for v in (_entries(values[0]) if len(values) == 1 else [])]
    if not made:
        return None
    return (ctx if where[0] == ctx.filename else reader(ctx, where[0], where[1])), made


def _entries(table: ast.expr) -> list[ast.expr]:
    """The values of a dict literal, of `dict(a=x)`, or of `OrderedDict([(key, value), ...])` ([]: other)."""
    if isinstance(table, ast.Dict):
        return [v for k, v in zip(table.keys, table.values) if k is not None]
    if not (isinstance(table, ast.Call) and isinstance(table.func, (ast.Name, ast.Attribute))):
        return []
    called = table.func.id if isinstance(table.func, ast.Name) else table.func.attr
    if called == "dict" and not table.args:
        return [k.value for k in table.keywords if k.arg]
    if called == "OrderedDict" and len(table.args) == 1 and isinstance(table.args[0], (ast.List, ast.Tuple)):
        pairs = table.args[0].elts
        return [p.elts[1] for p in pairs if isinstance(p, ast.Tuple) and len(p.elts) == 2] if all(
            isinstance(p, ast.Tuple) and len(p.elts) == 2 for p in pairs) else []
    return []


def reader(ctx: Context, path: str, tree: ast.Module) -> Context:
    """A Context of another file of the code base: its own imports name what its code calls. Kept per path for
    as long as the file's tree is the one prepare.local_tree parsed in this scan: a later scan in the same process
    (the file edited since) gets a Context of the tree it reads, not of the old one."""
    key = (path, ctx.wanted)
    found = _READERS.get(key)
    if found is None or found.tree is not tree:
        found = Context(aliases_of(tree), ctx.wanted)
        found.tree, found.filename = tree, path
        found.defs = {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        _READERS[key] = found
    return found


def _module_of(tree: ast.Module, local: str) -> str | None:
    """The dotted module a plain `import a.b as local` (or `import local`, `import a.b`) binds to `local`."""
    for node in tree.body:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if (alias.asname or alias.name) == local:
                    return alias.name
    return None


def _imported(filename: str, tree: ast.Module, name: str, depth: int, kinds: tuple[type, ...] = (ast.ClassDef,),
              body: Sequence[ast.stmt] | None = None) -> tuple[str, ast.Module, Any] | None:
    """The class `name` (or definition of `kinds`) that a `from X import name` (or `from X import *`) of the
    file's top level (or of `body`) brings in."""
    if depth <= 0:
        return None
    for node in tree.body if body is None else body:
        if not isinstance(node, ast.ImportFrom) or node.module is None:
            continue
        for alias in node.names:
            if alias.name == "*" or (alias.asname or alias.name) == name:
                source = _relative(filename, node.module, node.level)
                if source is None:
                    continue
                found = _in_module(source[0], source[1], name if alias.name == "*" else alias.name, depth - 1, kinds)
                if found is not None:
                    return found
    return None


def _in_module(path: str, tree: ast.Module, name: str, depth: int,
               kinds: tuple[type, ...] = (ast.ClassDef,)) -> tuple[str, ast.Module, Any] | None:
    """The class (or definition of `kinds`) `name` of a module: at its top level, or re-exported by its imports."""
    for node in tree.body:
        if isinstance(node, kinds) and getattr(node, "name", None) == name:
            return path, tree, node
    return _imported(path, tree, name, depth, kinds)


_DEFINITIONS = (ast.ClassDef, ast.FunctionDef)


def definition(ctx: Context, func: ast.AST, within: ast.AST | None = None) -> tuple[Context, ast.AST] | None:
    """The class or module-level function `func` names (`Net`, `build`, `models.build`), with a Context of the
    file that defines it: of this file, imported at its top level, or imported inside `within` (the function
    around the call: `from models.vgg import vgg16_bn` in a branch); None when no file of the code base shows it."""
    if ctx.tree is None or not ctx.filename:
        return None
    found = None
    if isinstance(func, ast.Name):
        local = [n for n in iwalk(within) if isinstance(n, ast.ImportFrom)] if within is not None else []
        found = (_imported(ctx.filename, ctx.tree, func.id, _DEPTH, _DEFINITIONS, local) if local else None) or \
            _in_module(ctx.filename, ctx.tree, func.id, _DEPTH, _DEFINITIONS)
    elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        module = _module_of(ctx.tree, func.value.id)
        tree = local_tree(ctx.filename, module) if module else None
        found = _in_module(tree[0], tree[1], func.attr, _DEPTH, _DEFINITIONS) if tree is not None else None
    if found is None:
        return None
    return (ctx if found[0] == ctx.filename else reader(ctx, found[0], found[1])), found[2]


def module_definitions(ctx: Context, table: ast.AST) -> list[tuple[Context, ast.AST]] | None:
    """Every public class and function of the top level of the module whose `__dict__` is `table`
    (`models_vit.__dict__`, a module of the code base imported as a name): what `table[name]` can pick."""
    if not (isinstance(table, ast.Attribute) and table.attr == "__dict__") or ctx.tree is None:
        return None
    module = _module_of(ctx.tree, ast.unparse(table.value))  # `models_vit`, `models.zoo`
    tree = local_tree(ctx.filename, module) if module else None
    if tree is None:
        return None
    found = _exported(ctx, tree[0], tree[1], _DEPTH, None)
    return found or None


def _exported(ctx: Context, path: str, tree: ast.Module, depth: int, public: frozenset[str] | None
              ) -> list[tuple[Context, ast.AST]]:
    """The public classes and functions of a module's top level, and those its `from .x import *` lines bring
    in (a package's `__init__.py` that re-exports its models), each star import narrowed to the source's
    `__all__` where it lists its names: what the module's `__dict__` holds. `public`: the names kept (None: all)."""
    reading = reader(ctx, path, tree)
    found: list[tuple[Context, ast.AST]] = [(reading, n) for n in tree.body if isinstance(n, _DEFINITIONS)
                                            and not n.name.startswith("_") and (public is None or n.name in public)]
    if depth <= 0:
        return found
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module is not None and [a.name for a in node.names] == ["*"]:
            source = _relative(path, node.module, node.level)
            if source is not None:
                found += _exported(ctx, source[0], source[1], depth - 1, _all(source[1]))
    return found


def _all(tree: ast.Module) -> frozenset[str] | None:
    """The names a module's literal `__all__` lists (None: no such list, a star import takes every public name)."""
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets) \
                and isinstance(node.value, (ast.List, ast.Tuple)):
            names = [e.value for e in node.value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
            return frozenset(names) if len(names) == len(node.value.elts) else None
    return None


def _relative(filename: str, module: str, level: int) -> tuple[str, ast.Module] | None:
    """The file `from <level dots><module> import ...` in `filename` reads."""
    if not level:
        return local_tree(filename, module)
    base = os.path.dirname(os.path.abspath(filename))
    for _ in range(level - 1):
        base = os.path.dirname(base)
    return local_tree(os.path.join(base, "__here__.py"), module)


def torchvision_by_name(ctx: Context, func: ast.AST) -> bool:
    """`models.__dict__[args.arch]()` / `getattr(models, arch)()` of `torchvision.models`: a model chosen by
    name among those of the package's top level, every one of which is a classifier (detection and
    segmentation models live in its subpackages)."""
    if isinstance(func, ast.Subscript) and isinstance(func.value, ast.Attribute) and func.value.attr == "__dict__":
        return ctx.written(func.value.value) == "torchvision.models"
    if isinstance(func, ast.Call) and isinstance(func.func, ast.Name) and func.func.id == "getattr" and func.args:
        return ctx.written(func.args[0]) == "torchvision.models"
    return False
