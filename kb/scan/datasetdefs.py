"""The definitions of the code base that a dataset's construction reaches (for kb/scan/datasets.py).

The class or function a call names (one of the module the call is in, or, in the scanned file, one it imports
from a module of the code base), the imports of the module that defines it, a class's methods with those of
its code-base bases, and the method a call of an instance's attribute runs. Lookups only: whether what they
find draws random numbers is kb/scan/datasets.py's to read.
"""

from __future__ import annotations

import ast

from kb.scan import follow
from kb.scan.context import Context
from kb.scan.prepare import local_imports, local_module

_DATASET_BASES = frozenset({"torch.utils.data.Dataset", "torch.utils.data.IterableDataset",
                            "torch.utils.data.dataset.Dataset", "torch.utils.data.dataset.IterableDataset",
                            "nnmnkwii.datasets.FileDataSource"})  # abstract bases: no method of their own runs
_BASE_NAMES = frozenset(n.rsplit(".", 1)[-1] for n in _DATASET_BASES)


def definition(ctx: Context, func: ast.AST, where: follow.Where) -> tuple[ast.AST, dict, bool] | None:
    """The class or function of the code base a call calls, with its module's top-level definitions and
    whether that module is another file: one of the module the call is in, or (in the scanned file, whose
    imports are read) one imported from a module of the code base."""
    if isinstance(func, ast.Name) and isinstance(where.defs.get(func.id), (ast.ClassDef, ast.FunctionDef)):
        return where.defs[func.id], where.defs, where.foreign
    if where.foreign:
        return None
    if isinstance(func, ast.Name):
        dotted = ctx.aliases.get(func.id)
        if dotted and "." in dotted:
            module, _, name = dotted.rpartition(".")
            found = local_module(ctx.filename, module)
            if found is not None and isinstance(found.get(name), (ast.ClassDef, ast.FunctionDef)):
                return found[name], found, True
        return None
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        found = local_module(ctx.filename, ctx.aliases.get(func.value.id, func.value.id))
        if found is not None and isinstance(found.get(func.attr), (ast.ClassDef, ast.FunctionDef)):
            return found[func.attr], found, True
    return None


def class_of(ctx: Context, func: ast.AST) -> tuple[ast.ClassDef, dict, bool] | None:
    """The class a construction calls, with its module's top-level definitions and whether that module is
    another file (whose imports are not read here): a class of this file, or one imported from a module
    of the code base."""
    if isinstance(func, ast.Name) and ctx.tree is not None:
        here: dict = {n.name: n for n in ctx.tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
        cls = here.get(func.id)
        if isinstance(cls, ast.ClassDef):
            return cls, here, False
        dotted = ctx.aliases.get(func.id)
        if dotted and "." in dotted:
            module, _, name = dotted.rpartition(".")
            found = local_module(ctx.filename, module)
            if found is not None and isinstance(found.get(name), ast.ClassDef):
                return found[name], found, True
        return None
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        found = local_module(ctx.filename, ctx.aliases.get(func.value.id, func.value.id))
        if found is not None and isinstance(found.get(func.attr), ast.ClassDef):
            return found[func.attr], found, True
    return None


def imports_of(ctx: Context, defs: dict, foreign: bool) -> dict[str, str]:
    """The imports of the module whose top-level definitions are `defs`: the scanned file's, or those of the
    module of the code base it imports them from (empty: not found)."""
    if not foreign:
        return ctx.aliases
    for dotted in set(ctx.aliases.values()):
        for module in (dotted, dotted.rpartition(".")[0]):
            if module and local_module(ctx.filename, module) is defs:
                return local_imports(ctx.filename, module)
    return {}


def methods_of(ctx: Context, cls: ast.ClassDef, defs: dict, foreign: bool, depth: int = 4,
               checked: ast.expr | None = None) -> dict[str, ast.AST] | None:
    """The class's methods with those of its code-base bases (None: a base that cannot be read). In another
    file, whose imports are not read here, a base spelt `Dataset` / `data.Dataset` is taken for torch's;
    `checked`, a torchvision dataset base whose transforms the construction shows deterministic
    (kb/scan/datasets.py), is read as torch's `Dataset` too."""
    methods: dict[str, ast.AST] = {}
    for base in cls.bases:
        written = base.attr if isinstance(base, ast.Attribute) else base.id if isinstance(base, ast.Name) else ""
        if isinstance(base, ast.Name) and isinstance(defs.get(base.id), ast.ClassDef) and defs[base.id] is not cls:
            inherited = methods_of(ctx, defs[base.id], defs, foreign, depth - 1) if depth > 0 else None
            if inherited is None:
                return None
            methods.update(inherited)
        elif written == "object" or base is checked or (not foreign and ctx.dotted(base) in _DATASET_BASES) \
                or (foreign and written in _BASE_NAMES):
            continue
        else:
            return None
    for item in cls.body:
        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
            methods[item.name] = item
    return methods


def method_called(ctx: Context, func: ast.AST, where: follow.Where, depth: int) -> tuple[ast.AST, dict, bool] | None:
    """The method `obj.method` calls when every value of the name `obj` is a construction of one class of the
    code base that defines that method itself (`blocks = Blocks(root)`, then `blocks.get_block(q)`), with its
    module's definitions (None: not shown)."""
    if depth <= 0 or not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)):
        return None
    values = follow.values_of(ctx, where, func.value.id)
    classes: list[tuple[ast.ClassDef, dict, bool]] = []
    for value, at, position in values or ():
        found = definition(ctx, value.func, at) if position is None and isinstance(value, ast.Call) else None
        if found is None or not isinstance(found[0], ast.ClassDef):
            return None
        classes.append((found[0], found[1], found[2]))
    if not classes or any(c[0] is not classes[0][0] for c in classes):
        return None
    cls, defs, foreign = classes[0]
    method = next((item for item in cls.body if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))
                   and item.name == func.attr), None)
    return None if method is None else (method, defs, foreign)
