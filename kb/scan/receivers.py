"""What a method's receiver visibly is when it is none of the framework's objects.

A method is matched by its name (`x.scatter(...)`, `ds.map(...)`, `model.fit(...)`); where the receiver's
type cannot be seen the call is reported as possible. Some receivers are visibly another thing, and a
method of theirs is no site: `self` (or `super()`) in a class of the code base whose bases are plain
Python, another library's or a torch module's (a `DataParallel` subclass's `self.scatter` splits inputs
across GPUs, not Tensor.scatter); an instance a class of the code base makes (a scikit-learn estimator's
`.fit`, a namedtuple's `.map`); an object of Python's standard library (`multiprocessing.Pool(...).map`) or
of another plain library (`sklearn.svm.LinearSVC().fit`); an attribute of `self` the class only sets to one.
`kind` answers for Context.kind_of with a kind that is no framework owner, or None (not known).
"""

from __future__ import annotations

import ast
import sys
from typing import Protocol

from kb.scan.nodes import iwalk
from kb.scan.prepare import local_imports, local_module
from kb.scan.syntax import NOT_FRAMEWORK, self_attribute


class Context(Protocol):
    """What is read of kb.scan.context.Context (which calls this module, so does not import it here)."""
    class_nodes: list[ast.ClassDef]
    fn_nodes: list
    classes: dict[str, ast.ClassDef]
    tree: ast.Module | None
    aliases: dict[str, str]
    filename: str
    writes_of: dict[int, tuple[dict[str, int], bool]]

    def dotted(self, node: ast.AST) -> str | None: ...

    def self_assignments(self, cls: ast.ClassDef) -> dict[str, list[tuple[ast.expr | None, dict]]]: ...

    def assigned_in(self, ctx: ast.AST) -> dict[str, list[ast.expr]]: ...

# Libraries whose classes are no framework's tensor, dataset, model or optimizer: Python's own, and the
# data libraries the scan already reads as another library's objects.
_PLAIN = frozenset(sys.stdlib_module_names) | NOT_FRAMEWORK | {"sklearn", "six"}
_NAMEDTUPLES = frozenset({"collections.namedtuple", "typing.NamedTuple"})
# torch classes that hold tensors but are none: modules (DataParallel among them) and datasets.
_TORCH_HOLDERS = ("torch.nn.", "torch.utils.data.")
_TORCH_TENSORS = frozenset({"torch.nn.Parameter", "torch.nn.parameter.Parameter", "torch.nn.parameter.Buffer",
                            "torch.nn.Buffer", "torch.nn.parameter.UninitializedParameter"})
PLAIN_OBJECT = "object"  # the kind of an instance of a code-base class with no framework base
_DEPTH = 4


def plain_library(found: str | None) -> bool:
    """A kind that `kind` gives an instance of Python's own or a plain library's class (not a code-base class's
    `object`, nor a torch module's class)."""
    return found is not None and found in _PLAIN


def kind(ctx: Context, node: ast.AST) -> str | None:
    """The receiver's kind when it is visibly no framework object (`object`, a standard library's name,
    or a torch module's class); None when it is not known."""
    if isinstance(node, ast.Name) and node.id == "self" and ctx.class_nodes and ctx.fn_nodes:
        return _class_kind(ctx, ctx.class_nodes[-1], _here(ctx), None, _DEPTH)
    if self_attribute(node) and ctx.class_nodes and ctx.fn_nodes:
        return _attribute_kind(ctx, ctx.class_nodes[-1], node.attr)
    if not isinstance(node, ast.Call):
        return None
    if isinstance(node.func, ast.Name) and node.func.id == "super" and ctx.class_nodes and ctx.fn_nodes:
        return _class_kind(ctx, ctx.class_nodes[-1], _here(ctx), None, _DEPTH)
    name = ctx.dotted(node.func)
    if name is not None and name.split(".")[0] in _PLAIN and name.rsplit(".", 1)[-1][:1].isupper():
        # an instance of Python's own class (multiprocessing.Pool(...), random.Random(seed)) or of a plain
        # library's (sklearn.svm.LinearSVC()): its `.fit` / `.map` / `.shuffle` are that library's
        return name.split(".")[0]
    found = _class_made(ctx, node.func)
    if found is None:
        return None
    cls, defs, imports = found
    return _class_kind(ctx, cls, defs, imports, _DEPTH)


def own_method(ctx: Context, func: ast.Attribute) -> bool:
    """`self.m(...)` in a class of this file that defines `m` itself, or `x.m(...)` where every assignment of `x`
    in the function builds a class of this file that defines `m`: Python calls that class's own method (it comes
    before its bases'), code of the code base, not the framework's op of that name (snap-stanford/pretrain-gnns's
    `batch.cumsum(key, item)` of its `Batch(Data)` class)."""
    receiver = func.value
    if not isinstance(receiver, ast.Name) or not ctx.fn_nodes:
        return False
    if receiver.id == "self":
        return bool(ctx.class_nodes) and _defines(ctx.class_nodes[-1], func.attr)
    values = ctx.assigned_in(ctx.fn_nodes[-1]).get(receiver.id, [])
    classes = {n.name: n for n in (ctx.tree.body if ctx.tree is not None else ()) if isinstance(n, ast.ClassDef)}
    made = [classes.get(v.func.id) for v in values if isinstance(v, ast.Call) and isinstance(v.func, ast.Name)]
    return bool(values) and len(made) == len(values) and all(isinstance(c, ast.ClassDef) and _defines(c, func.attr)
                                                             for c in made)


def _defines(cls: ast.ClassDef, name: str) -> bool:
    return any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == name for n in cls.body)


def _attribute_kind(ctx: Context, cls: ast.ClassDef, attr: str) -> str | None:
    """The one kind of every object the class's methods assign to `self.<attr>` (`self._random =
    random.Random(seed)`: its `.shuffle` is Python's), when each is a construction of this module's kind
    (above) and the class writes the attribute no other way (an unpacking, `setattr`); None otherwise."""
    assigned = ctx.self_assignments(cls).get(attr, [])
    if not assigned:
        return None
    kinds = {kind(ctx, value) if isinstance(value, ast.Call) else None for value, _ in assigned}
    if len(kinds) != 1 or None in kinds:
        return None
    stores, sets = _writes(ctx, cls)  # the class's walk, only where the assignments agree on a kind
    return None if stores.get(attr, 0) != len(assigned) or sets else kinds.pop()


def _writes(ctx: Context, cls: ast.ClassDef) -> tuple[dict[str, int], bool]:
    """(attribute name -> how many `<x>.<name> =` stores the class holds, whether it calls `setattr`): one walk
    of the class, kept for the file, since a class's methods read many of its attributes and each read asked
    for two walks of the whole class (a large code base's scan spent a tenth of its time there)."""
    found = ctx.writes_of.get(id(cls))
    if found is None:
        stores: dict[str, int] = {}
        sets = False
        for n in iwalk(cls):
            if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store):
                stores[n.attr] = stores.get(n.attr, 0) + 1
            elif isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "setattr":
                sets = True
        found = ctx.writes_of[id(cls)] = (stores, sets)
    return found


def _here(ctx: Context) -> dict:
    return ctx.classes  # the module's classes by name


def _class_made(ctx: Context, func: ast.AST) -> tuple[ast.ClassDef, dict, dict[str, str] | None] | None:
    """The class of the code base a call constructs, with its module's definitions and, for another file,
    that file's imports (None: this file, whose imports Context reads)."""
    if isinstance(func, ast.Name):
        here = _here(ctx)
        if isinstance(here.get(func.id), ast.ClassDef):
            return here[func.id], here, None
        dotted = ctx.aliases.get(func.id)
        module, name = dotted.rpartition(".")[::2] if dotted and "." in dotted else ("", "")
    elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in ctx.aliases:
        module, name = ctx.aliases[func.value.id], func.attr  # graphs.GraphsTuple(...) of an imported module
    else:
        return None
    found = local_module(ctx.filename, module) if module else None
    if found is None or not isinstance(found.get(name), ast.ClassDef):
        return None
    return found[name], found, local_imports(ctx.filename, module)


def _class_kind(ctx: Context, cls: ast.ClassDef, defs: dict, imports: dict[str, str] | None, depth: int) -> str | None:
    """`object` when every base is plain (object, a namedtuple, a plain library's class, or a class of the
    module of which this holds), a torch module's class name when one base is one and the others are
    plain; None when a base is another framework's class or cannot be named."""
    found = PLAIN_OBJECT
    for base in cls.bases:
        if isinstance(base, ast.Name) and base.id == "object":
            continue
        if isinstance(base, ast.Name) and isinstance(defs.get(base.id), ast.ClassDef) and defs[base.id] is not cls:
            inherited = _class_kind(ctx, defs[base.id], defs, imports, depth - 1) if depth > 0 else None
            if inherited is None:
                return None
            found = inherited if inherited != PLAIN_OBJECT else found
            continue
        target = base.func if isinstance(base, ast.Call) else base
        name = _named(ctx, target, imports)
        if name is None:
            return None
        if isinstance(base, ast.Call):
            if name not in _NAMEDTUPLES:
                return None
        elif name.startswith(_TORCH_HOLDERS) and name not in _TORCH_TENSORS:
            found = name
        elif name not in _NAMEDTUPLES and name.split(".")[0] not in _PLAIN:
            return None
    return found


def _named(ctx: Context, node: ast.AST, imports: dict[str, str] | None) -> str | None:
    """A base's dotted name through the imports of its module."""
    if imports is None:
        return ctx.dotted(node)
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.insert(0, node.attr)
        node = node.value
    if not isinstance(node, ast.Name) or node.id not in imports:
        return None
    return ".".join([imports[node.id], *parts])
