"""Whether the later calls of a `functools.partial` of an op add only its input (for the visitor's `_partial`).

`functools.partial(F.interpolate, scale_factor=2)` is an op whose other arguments come where the partial is
called: any of them may be given there, so the call's facts are unknown (a `mode=` could come). Where the code
shows every such call, and each passes one positional argument (the input) and no keyword, the op runs with the
partial's arguments and its defaults (the default `mode="nearest"`). Followed, as far as the code shows it:

- a name the partial is assigned to in a function or at module level, called in that scope;
- `self.x = partial(...)`, called as `self.x(...)` in the class's methods;
- a keyword argument of a construction of a class (of this file, or of the code base through
  kb/scan/modelclass.py: BigGAN's `layers.GBlock(..., upsample=partial(F.interpolate, scale_factor=2))`) whose
  `__init__` keeps the parameter as `self.x = upsample`, called as `self.x(h)` in its methods; also as one branch
  of `partial(...) if c else None`.

A holder read in any other way (handed on, stored elsewhere) leaves the call unknown; a test of it (`if
self.upsample:`) is no call.
"""

from __future__ import annotations

import ast
from typing import Any

from kb.scan import modelclass
from kb.scan.nodes import walk
from kb.scan.syntax import self_attribute


def input_only(ctx: Any, node: ast.Call) -> bool:
    """Whether every later call of the partial `node` (in the file `ctx` reads) adds only the op's input."""
    if len(node.args) != 1 or any(k.arg is None for k in node.keywords) or ctx.tree is None:
        return False  # positional arguments bound here shift what a later one means
    parents = {id(child): parent for parent in walk(ctx.tree) for child in ast.iter_child_nodes(parent)}
    here: ast.AST = node
    parent = parents.get(id(here))
    while isinstance(parent, ast.IfExp) and here is not parent.test:
        here, parent = parent, parents.get(id(parent))
    if isinstance(parent, ast.keyword) and parent.arg:
        made = parents.get(id(parent))
        return isinstance(made, ast.Call) and _kept_and_called(ctx, made.func, parent.arg)
    if isinstance(parent, ast.Assign) and len(parent.targets) == 1:
        target = parent.targets[0]
        scope = _enclosing(parents, parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module))
        if isinstance(target, ast.Name) and scope is not None:
            return _called_with_input(scope, lambda n: isinstance(n, ast.Name) and n.id == target.id, target)
        if self_attribute(target):
            cls = _enclosing(parents, parent, (ast.ClassDef,))
            return cls is not None and _called_with_input(cls, lambda n: self_attribute(n, target.attr), target)
    return False


def _kept_and_called(ctx: Any, func: ast.expr, param: str) -> bool:
    """The class `func` builds keeps `param` as `self.x = param` in `__init__` and calls `self.x` with the input."""
    cls = ctx.class_defs().get(func.id) if isinstance(func, ast.Name) else None
    if cls is None:
        found = modelclass.defined(ctx, func)
        cls = found[1] if found is not None else None
    init = next((n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"), None) if cls else None
    if cls is None or init is None or param not in {a.arg for a in (*init.args.args, *init.args.kwonlyargs)}:
        return False
    kept = {t.attr for n in walk(init) if isinstance(n, ast.Assign) and isinstance(n.value, ast.Name)
            and n.value.id == param for t in n.targets if self_attribute(t)}
    return len(kept) == 1 and _called_with_input(cls, lambda n: self_attribute(n, *kept), None)  # BigGAN keeps it twice


def _called_with_input(scope: ast.AST, holder: Any, binding: ast.AST | None) -> bool:
    """Every read of the holder in `scope` is a call with one positional argument and no keyword, or a test of it
    (`if self.upsample:`); at least one call."""
    found = walk(scope)
    tests = {id(n.test) for n in found if isinstance(n, (ast.If, ast.IfExp, ast.While))}
    calls = {id(c.func): c for c in found if isinstance(c, ast.Call)}
    reads = [n for n in found if n is not binding and holder(n) and not isinstance(getattr(n, "ctx", None), ast.Store)
             and id(n) not in tests]
    return bool(reads) and all((call := calls.get(id(n))) is not None and len(call.args) == 1 and not call.keywords
                               and not isinstance(call.args[0], ast.Starred) for n in reads)


def _enclosing(parents: dict[int, ast.AST], node: ast.AST, kinds: tuple[type, ...]) -> ast.AST | None:
    """The nearest node around `node` of one of `kinds` (None: none)."""
    parent = parents.get(id(node))
    while parent is not None and not isinstance(parent, kinds):
        parent = parents.get(id(parent))
    return parent
