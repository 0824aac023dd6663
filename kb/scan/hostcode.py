"""Code that runs only where no gradient is taken, across files: a torch `Dataset`'s `__getitem__` (or
`__iter__`) and a DataLoader's `collate_fn` run in the data loader on the host, a data pipeline's `.map(...)`
(`interleave`, `flat_map`, `filter`) function runs in the pipeline (handed on itself, as a `functools.partial`
of it, directly or through a name read only there, or called in a lambda handed on), and a call under
`torch.no_grad()` records nothing. What only such code
calls, in its own file or in another one (`spectrogram_torch` of mel_processing.py, called only from a
Dataset's `get_audio`), runs there too: records of the backward pass (or of the GPU's kernels) do not apply.
kb/scan/quietfunctions.py's quiet_functions answers nested functions within one file; this module follows
module-level functions and methods through the whole code base, by name (a name any file uses otherwise,
as a value or an unresolved call at module level, keeps its function loud)."""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from kb.scan import heldmodules, oldsyntax
from kb.scan.nodes import iwalk
from kb.scan.prepare import parsed_before
from kb.scan.quietfunctions import PIPELINE_STAGES, maps_and_batches
from kb.scan.survey import FIELDS
from kb.scan.syntax import Graph, Module

_DATASET_BASES = frozenset({"torch.utils.data.Dataset", "torch.utils.data.IterableDataset",
                            "torch.utils.data.dataset.Dataset", "torch.utils.data.dataset.IterableDataset"})
_ROOTS = frozenset({"__getitem__", "__iter__"})  # what a DataLoader runs of a Dataset, in its workers or loop
# methods a framework or Python calls without naming them: their uses are never all visible
_IMPLICIT = frozenset({"forward", "call", "__call__", "build", "step"})
_RUNS = frozenset({"forward", "__call__"})  # what calling a module instance runs
_SUPER = "super()."  # the mark of a call `super().forward(...)`: a subclass's, whose base is named where it is defined
_RUN = -2  # the mark of a use of `_RUNS` by a call of an instance, which settle may read from the calls of held instances
_LEAVES = (ast.Constant, ast.expr_context, ast.operator, ast.unaryop, ast.cmpop, ast.boolop)


class _Holds(dict[type, bool]):
    """Type of a value -> whether it is a node that may hold a name or a call (read once per type)."""

    def __missing__(self, cls: type) -> bool:
        found = self[cls] = issubclass(cls, ast.AST) and not issubclass(cls, _LEAVES)
        return found


_HOLDS = _Holds()
_NAME, _DEF, _LAMBDA, _WITH, _CALL, _ATTRIBUTE, _CONTEXT = 1, 2, 3, 4, 5, 6, 7
# what build's walk does with each class of node (0, the default: walk its fields; a tuple is a context)
_ROLES: dict[type, int] = {tuple: _CONTEXT, ast.Name: _NAME, ast.FunctionDef: _DEF, ast.AsyncFunctionDef: _DEF, ast.Lambda: _LAMBDA,
                           ast.With: _WITH, ast.AsyncWith: _WITH, ast.Call: _CALL, ast.Attribute: _ATTRIBUTE}
# words without which a file has no root of code that takes no gradient (no_grad, a Dataset, a pipeline's map)
ROOT_WORDS = ("no_grad", "inference_mode", "set_grad_enabled", "Dataset", "collate_fn", ".map(", ".interleave(",
              ".flat_map(", ".filter(", "__getitem__", "__iter__", "map_and_batch(")
_PARTIALS = frozenset({"functools.partial"})
_NO_GRAD = "it is called only under torch.no_grad()"
_ITEM = "it runs only in a torch Dataset's item loading, in the data loader on the host, where no gradient is taken"
_COLLATE = "it runs only as a DataLoader's collate_fn, on the host, where no gradient is taken"
_MAPPED = "it runs only as a data pipeline's .map() function, where no gradient is taken"


def _places_on_gpu(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """The function moves tensors to a GPU itself (`.cuda()`, "cuda", `.to(device)` or `device=` with a device
    of the program's, not its input's own `x.device`): not host code. Every node of the def is looked at, as
    ast.walk would, by a loop over each class's fields (several times faster than ast.walk, and this runs for
    each def whose lines name "cuda" or "device")."""
    params = {a.arg for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)} - {"self", "cls"}
    stack: list[Any] = [fn]  # Any: each branch reads its class's fields
    pop, push, fields, walked = stack.pop, stack.append, FIELDS, _WALKED
    while stack:
        node = pop()
        kind = type(node)
        if kind is ast.Constant:
            if isinstance(node.value, str) and node.value.startswith("cuda"):
                return True
            continue
        if kind is ast.Call:
            func = node.func
            if type(func) is ast.Attribute:
                if func.attr == "cuda" or (func.attr == "to" and any(_named_device(w, params) for w in node.args)):
                    return True
        elif kind is ast.keyword and node.arg == "device" and _named_device(node.value, params):
            return True
        for field in fields[kind]:
            value = getattr(node, field, None)
            if type(value) is list:
                for child in value:
                    if walked[type(child)]:
                        push(child)
            elif walked[type(value)]:
                push(value)
    return False


def _named_device(where: ast.expr, params: set[str]) -> bool:
    """A device named by a variable or attribute (`device`, `self.device`), not a parameter's own `x.device`."""
    own = isinstance(where, ast.Attribute) and where.attr == "device" and isinstance(where.value, ast.Name) \
        and where.value.id in params  # device=y.device: wherever its input is
    named = (isinstance(where, ast.Name) and "device" in where.id) or (isinstance(where, ast.Attribute) and "device" in where.attr)
    return named and not own


class _Walked(dict[type, bool]):
    """Type of a value -> whether it is a node that may hold a constant, a call or a keyword (read once per type)."""

    def __missing__(self, cls: type) -> bool:
        found = self[cls] = issubclass(cls, ast.AST) and not issubclass(cls, _LEAVES[1:])
        return found


_WALKED = _Walked()


def build(tree: ast.Module, lines: list[str], no_grad: Callable[[ast.expr], bool],
          dotted: Callable[[ast.AST], str | None]) -> Graph:
    """The file's Graph: every use of each module-level function (a call by its name) and each method of a
    module-level class (a call `self.m(...)`; any other `x.m(...)` is a call of a name it does not define),
    with why it records no gradient, if it does not. `lines`: the file's text, by line (a def whose lines
    name no "cuda" or "device" is not read for a GPU placement)."""
    defs: list[tuple[str, int, int, bool, bool]] = []
    owners: list[str] = []
    nodes: list[ast.FunctionDef | ast.AsyncFunctionDef] = []  # per def: its node
    index: dict[int, int] = {}
    top: dict[str, list[int]] = {}
    methods: dict[str, list[int]] = {}
    datasets: set[str] = set()
    classes = [c for c in tree.body if isinstance(c, ast.ClassDef)]
    grew = True
    while grew:  # a class of the file that subclasses a torch Dataset, directly or through the file's classes
        grew = False
        for cls in classes:
            if cls.name not in datasets and any(dotted(b) in _DATASET_BASES or (isinstance(b, ast.Name) and b.id in datasets)
                                                for b in cls.bases):
                datasets.add(cls.name)
                grew = True
    uses: list[list[tuple[str | None, int]]] = []

    def add(fn: ast.FunctionDef | ast.AsyncFunctionDef, method: bool, into: dict[str, list[int]], cls: str = "") -> int:
        first = min([fn.lineno, *(d.lineno for d in fn.decorator_list)])
        index[id(fn)] = len(defs)
        into.setdefault(fn.name, []).append(len(defs))
        last = fn.end_lineno or fn.lineno
        text = "\n".join(lines[first - 1:last])
        defs.append((fn.name, first, last, method, ("cuda" in text or "device" in text) and _places_on_gpu(fn)))
        owners.append(cls)
        nodes.append(fn)
        opaque = bool(fn.decorator_list) and not all(no_grad(d) for d in fn.decorator_list)
        implicit = method and (fn.name in _IMPLICIT or (fn.name.startswith("__") and fn.name not in _ROOTS))
        # a forward's implicit use is marked apart (-2): a call of a held instance may stand for it (settle)
        uses.append([(None, -1)] if opaque else [(None, _RUN if fn.name in _RUNS else -1)] if implicit else [])
        return len(defs) - 1

    for item in tree.body:
        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
            add(item, False, top)
        elif isinstance(item, ast.ClassDef):
            for fn in item.body:
                if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    k = add(fn, True, methods, item.name)
                    if fn.name in _ROOTS and item.name in datasets:
                        uses[k].append((_ITEM, -1))
    calls: list[tuple[str, str | None, int]] = []
    # id(partial(f, ...)) -> its f, for partials only a stage runs (a file that never says partial, or has no stage, has none)
    staged = any("partial" in line for line in lines) and any(f".{stage}(" in line for line in lines for stage in PIPELINE_STAGES)
    mapped = _mapped_partials(tree, dotted) if staged else {}
    lambdas: dict[int, str] = {}  # id(a lambda handed to a stage or as collate_fn) -> why its body takes no gradient
    mentions: set[str] = set()
    attributes: set[str] = set()
    qualified: set[str] = set()
    handled: set[int] = set()
    # Module instances held in a name or `self.x` (kb/scan/heldmodules.py): the calls of a name the file does not
    # define or of `self.x` (id -> why, owner), its constructions (id, name), and the holders called under no_grad
    # (owner def, name or attribute): only their scopes are read for holders, after the walk.
    pending: dict[int, tuple[str | None, int]] = {}
    made: list[tuple[int, str]] = []
    quiet_names: set[tuple[int, str]] = set()
    quiet_attributes: set[tuple[int, str]] = set()
    class_nodes = {c.name: c for c in classes}

    def targets(func: ast.expr) -> list[int] | None:
        """The defs a call of `func` (or a function handed on as `func`) runs: None for a name not defined here."""
        if isinstance(func, ast.Name):
            return top.get(func.id)
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in ("self", "cls"):
            return methods.get(func.attr)
        return None

    def handed(value: ast.expr, why: str) -> None:
        """A function handed to what runs it only where no gradient is taken (`.map(fn)`, `collate_fn=fn`). A loop,
        not a call of itself, unwraps partials: a closure that calls itself is a reference cycle, which would
        keep the file's whole tree (through `dotted`, the visitor's) alive until the collector runs."""
        while isinstance(value, ast.Call) and dotted(value.func) in _PARTIALS and value.args:
            value = value.args[0]  # .map(functools.partial(fn, size=8)): fn runs there
        if isinstance(value, ast.Lambda):
            lambdas[id(value)] = why  # .map(lambda x: fn(x, 8)): its body runs there
            return
        if isinstance(value, ast.Name) and id(value) in mapped:
            handled.add(id(value))  # fn = functools.partial(...) read only here: its function is handed on below
            return
        found = targets(value)
        if found is not None:
            for k in found:
                uses[k].append((why, -1))
        elif isinstance(value, (ast.Name, ast.Attribute)) and isinstance(getattr(value, "ctx", None), ast.Load):
            calls.append((_name(value), why, -1))  # another file's function
        else:
            return
        handled.add(id(value))

    # The stack holds nodes and, between them, the context (why, owner) the nodes above it are read in: a
    # context is pushed only where a def, a lambda or a with changes it (and again below their bodies, to
    # restore it), not a (node, why, owner) tuple built and unpacked for every node.
    stack: list[Any] = [tree]  # Any: each branch reads its class's fields
    why: str | None = None
    owner = -1
    pop, push, fields, holds, Name, Load, roles = stack.pop, stack.append, FIELDS, _HOLDS, ast.Name, ast.Load, _ROLES
    while stack:
        node = pop()
        kind = type(node)
        role = roles.get(kind, 0)  # one lookup, not a chain of class tests, for the many nodes of no role
        if role:
            if role == _NAME:
                if id(node) not in handled and type(node.ctx) is ast.Load:
                    for k in top.get(node.id, ()):
                        uses[k].append((None, -1))  # handed on as a value: it may run anywhere
                    mentions.add(node.id)
                continue
            if role == _CONTEXT:
                why, owner = node
                continue
            if role == _DEF:
                me = index.get(id(node), owner)  # a nested function's calls are its enclosing def's
                inner = _NO_GRAD if any(no_grad(d) for d in node.decorator_list) else None
                stack += node.decorator_list
                stack += node.args.defaults
                stack += [d for d in node.args.kw_defaults if d is not None]
                _within(stack, node.body, (why, owner), (inner, me))
                continue
            if role == _LAMBDA:
                _within(stack, [node.body], (why, owner), (lambdas.get(id(node)), owner))  # runs where it is called
                continue
            if role == _WITH:
                inner = why or (_NO_GRAD if any(no_grad(i.context_expr) for i in node.items) else None)
                stack += node.items
                _within(stack, node.body, (why, owner), (inner, owner))
                continue
            if role == _CALL:
                func = node.func
                if id(node) in mapped:
                    handed(mapped[id(node)], _MAPPED)  # fn = functools.partial(f, ...), then only .map(fn)
                called = type(func)  # targets() and _name() inlined: this runs for every call of the file
                if called is Name:
                    if func.id == "super" and node.args and type(node.args[0]) is Name:
                        handled.add(id(node.args[0]))  # `super(SineGen, self)`: the class names itself, not a value to run
                    found = top.get(func.id)
                    if found is None:
                        calls.append((func.id, why, owner))
                        made.append((id(node), func.id))
                        pending[id(node)] = (why, owner)
                        if why == _NO_GRAD and owner >= 0:
                            quiet_names.add((owner, func.id))
                elif called is ast.Attribute:
                    target = func.value
                    found = methods.get(func.attr) if type(target) is Name and target.id in ("self", "cls") else None
                    if found is None:
                        supered = type(target) is ast.Call and type(target.func) is Name and target.func.id == "super" \
                            and func.attr in _RUNS
                        calls.append((_SUPER + func.attr if supered else func.attr, why, owner))
                        made.append((id(node), func.attr))
                        if type(target) is Name and target.id == "self":
                            pending[id(node)] = (why, owner)
                            if why == _NO_GRAD and owner >= 0:
                                quiet_attributes.add((owner, func.attr))
                else:
                    found = None
                if found is not None:
                    for k in found:
                        uses[k].append((why, owner))
                if called is Name or called is ast.Attribute:
                    handled.add(id(func))
                if (called is ast.Attribute and func.attr in PIPELINE_STAGES and not (dotted(func) or "").startswith("jax.")
                        or maps_and_batches(func)) and node.args:
                    handed(node.args[0], _MAPPED)
                for kw in node.keywords:
                    if kw.arg == "collate_fn":
                        handed(kw.value, _COLLATE)
            elif role == _ATTRIBUTE:
                if id(node) not in handled and type(node.ctx) is ast.Load:
                    for k in methods.get(node.attr, ()):
                        uses[k].append((None, -1))
                    attributes.add(node.attr)
                    if type(node.value) is ast.Name:
                        qualified.add(f"{node.value.id}.{node.attr}")
                elif type(node.value) is ast.Name and node.value.id in ("self", "cls"):
                    continue  # self.m(...) of the file's own method: counted above
        for field in fields[kind]:  # a name is read here, not pushed: what handled holds of it is known already
            value = getattr(node, field, None)
            if type(value) is list:
                for child in value:
                    if type(child) is Name:
                        if type(child.ctx) is Load and id(child) not in handled:
                            for k in top.get(child.id, ()):
                                uses[k].append((None, -1))  # handed on as a value: it may run anywhere
                            mentions.add(child.id)
                    elif holds[type(child)]:
                        push(child)
            elif type(value) is Name:
                if type(value.ctx) is Load and id(value) not in handled:
                    for k in top.get(value.id, ()):
                        uses[k].append((None, -1))
                    mentions.add(value.id)
            elif holds[type(value)]:
                push(value)
    holders: dict[int, tuple[str, str]] = {}
    held: set[int] = set()
    by_def: dict[int, set[str]] = {}
    for k, name in quiet_names:
        by_def.setdefault(k, set()).add(name)
    for k, names in by_def.items():  # one walk of each def, for all its names called under no_grad
        if (bound := heldmodules.constructed(nodes[k], names, False)):
            heldmodules.scan_scope(nodes[k], holders, held, False, bound)
    by_class: dict[str, set[str]] = {}
    for k, attr in quiet_attributes:
        if owners[k] in class_nodes:
            by_class.setdefault(owners[k], set()).add(attr)
    for name, keys in by_class.items():
        if (bound := heldmodules.constructed(class_nodes[name], keys, True)):
            heldmodules.scan_scope(class_nodes[name], holders, held, True, bound)
    instances = tuple((made_of, *pending[k], key) for k, (made_of, key) in holders.items() if k in pending)
    loose = frozenset(name for k, name in made if k not in held)
    return Graph(tuple(defs), tuple(tuple(u) for u in uses), tuple(calls), frozenset(mentions), frozenset(attributes),
                 frozenset(qualified), tuple(owners), instances, loose)


def _within(stack: list[Any], nodes: list[Any], outer: tuple[str | None, int], inner: tuple[str | None, int]) -> None:
    """Push `nodes` to be read in the context `inner`, then `outer` again for what lies below them on the stack
    (build's walk pops a context before the nodes it governs); nothing more where the two are the same."""
    if inner == outer:
        stack += nodes
    else:
        stack.append(outer)
        stack += nodes
        stack.append(inner)


def _mapped_partials(tree: ast.Module, dotted: Callable[[ast.AST], str | None]) -> dict[int, ast.expr]:
    """`fn = functools.partial(f, ...)`, the only binding of `fn` in the file, whose every read is the function
    argument of a pipeline stage (`ds.map(fn)`): id(that partial) -> f, and id(each such read) -> f (the read
    is no use of a function of its own). A name read in any other way, or bound twice, is left out."""
    bound: dict[str, list[ast.AST]] = {}
    reads: dict[str, list[ast.Name]] = {}
    staged: set[int] = set()
    other: set[str] = set()  # names bound otherwise: a parameter, a def, a class, an import
    for node in iwalk(tree):
        if isinstance(node, ast.arg):
            other.add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            other.add(node.name)
        elif isinstance(node, ast.alias):
            other.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.Name):
            (reads if isinstance(node.ctx, ast.Load) else bound).setdefault(node.id, []).append(node)
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            bound.setdefault(node.targets[0].id, []).append(node.value)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in PIPELINE_STAGES \
                and node.args and isinstance(node.args[0], ast.Name):
            staged.add(id(node.args[0]))
    out: dict[int, ast.expr] = {}
    for name, values in bound.items():
        made = [v for v in values if not isinstance(v, ast.Name)]  # the Assign's value; its Store target aside
        if name in other or len(made) != 1 or len(values) != 2 or not isinstance(made[0], ast.Call) or not made[0].args \
                or dotted(made[0].func) not in _PARTIALS or not isinstance(made[0].args[0], (ast.Name, ast.Attribute)):
            continue
        read = reads.get(name, [])
        if read and all(id(r) in staged for r in read):
            out[id(made[0])] = made[0].args[0]
            out.update((id(r), made[0].args[0]) for r in read)
    return out


def _name(func: ast.Name | ast.Attribute) -> str:
    return func.id if isinstance(func, ast.Name) else func.attr


# The Graphs the scan's first pass built for settle (path -> the text and its Graph, as settle would build it): of
# files with no root that define what calling a module instance runs (forward), which settle reads whenever a held
# module is called under no_grad, or a name an earlier Graph calls where no gradient is taken (_QUIET_CALLS): the
# files settle reads (NeMo: 580, of which 290 were parsed a second time after the first pass; now 65).
_KEPT: dict[str, tuple[str, Graph]] = {}
_KEEPING = [False]
_QUIET_CALLS: set[str] = set()  # names the first pass's Graphs call (or hold instances of) with a reason, as settle keys them


@contextmanager
def keeping() -> Iterator[None]:
    """While the scan's own process reads every file (kb/scan/run.py's _serial: a worker's Graphs would stay in
    the worker), `keep` builds settle's Graphs from the trees the analysis parsed; settle and forget drop them."""
    _KEPT.clear()
    _QUIET_CALLS.clear()
    _KEEPING[0] = True
    try:
        yield
    finally:
        _KEEPING[0] = False
        _QUIET_CALLS.clear()


def heard(graph: Graph, bindings: tuple) -> None:
    """Note the names a file's Graph (one with a root) calls where no gradient is taken: settle reads every file that
    defines one, so a later file that does is kept (`keep`); settle parses an earlier one again."""
    if not _KEEPING[0]:
        return
    rename = {b[0]: b[3] for b in bindings if b[3] is not None and b[0] != b[3]}
    names = [name.removeprefix(_SUPER) for name, why, _ in graph.calls if why is not None]
    names += [name for name, why, _, _ in graph.instances if why is not None]
    _QUIET_CALLS.update(rename.get(name, name) for name in names)


def keep(path: str, tree: ast.Module, text: str, spans: tuple) -> None:
    """Build now the Graph settle would build of this file, whose tree is at hand: a file with no root that defines
    a method `forward` or `__call__` (settle reads it if a held module is called where no gradient is taken), or a
    name an earlier Graph calls there (heard). settle uses it only for the same text; any other file it parses."""
    if not _KEEPING[0] or path.endswith(".ipynb") or not any(span[0] == "method" and span[1] in _RUNS
                                                             or span[1] in _QUIET_CALLS for span in spans) \
            or any(word in text for word in ROOT_WORDS):
        return
    try:
        _KEPT[path] = (text, build(tree, text.split("\n"), lambda _: False, lambda _: None))
    except (ValueError, RecursionError, MemoryError):
        _KEPT.pop(path, None)  # settle parses it and meets the same failure


def forget() -> None:
    """Drop the kept Graphs: they are one scan's."""
    _KEPT.clear()


def settle(modules: dict[str, Module], text_of: Callable[[str], str | None]) -> dict[str, list[tuple[int, int]]]:
    """Path -> (first, last line) of each function or method that runs only where no gradient is taken: every
    use of it, in its file and (by its name) in every other file, is such a root or a call made under
    torch.no_grad() or from a function that itself runs only so, and at least one is. The files with a root
    have their Graph from the scan (kb/scan/resolve.py); a file that defines a name such code calls is read
    here (`text_of`), as often as the chain grows; any other file counts every name it calls or imports as a
    use that may record a gradient."""
    graphs = {path: m.host for path, m in modules.items() if m.host is not None}
    tried: set[str] = set(graphs)
    uses = _Uses(modules, graphs)
    while True:
        loud = uses.loud()
        runs = {name: found for name, found in uses.instances.items() if name not in uses.loose and name not in loud
                and not any(key and (key in loud or len(uses.outside.get(key, ())) > uses.keys[key]) for key in uses.held_as[name])}
        why_of = _quiet(graphs, loud, uses.read, uses.outside, runs, uses.supers)
        wanted = {name for name, found in [*uses.outside.items(), *runs.items()]
                  if any(why is not None or (where, by) in why_of for where, why, by in found)}
        more = [path for path, m in modules.items() if path not in tried and not path.endswith(".ipynb")
                and any(span[1] in wanted for span in m.layout.spans)]
        if not more:
            break
        for path in more:  # files the quiet code calls into: their Graphs, as the scan would have made them
            tried.add(path)
            text = text_of(path)
            kept = _KEPT.pop(path, None)
            if kept is not None and kept[0] == text:
                graphs[path] = kept[1]  # built by the first pass from a tree of this very text (keep)
            else:
                try:
                    tree = (parsed_before(path, text) or oldsyntax.parse(text)) if text is not None else None
                    if tree is not None and text is not None:
                        graphs[path] = build(tree, text.split("\n"), lambda _: False, lambda _: None)
                except (SyntaxError, ValueError, RecursionError, MemoryError):
                    continue
            uses.read_now(path, modules[path], graphs[path])
    _KEPT.clear()  # the Graphs no round asked for
    out: dict[str, list[tuple[int, int]]] = {}
    for (path, k) in why_of:
        _, first, last, _, _ = graphs[path].defs[k]
        out.setdefault(path, []).append((first, last))
    return out


def _quiet(graphs: dict[str, Graph], loud: set[str], read: set[str], outside: dict[str, list[tuple[str, str | None, int]]],
           runs: dict[str, list[tuple[str, str | None, int]]],
           supers: dict[str, list[tuple[str, str | None, int]]]) -> dict[tuple[str, int], str]:
    """(path, def index) -> why, for each def every use of which takes no gradient (settle), to a fixed point.
    `runs`: class name -> the calls of its held instances, where every construction of it is held (forward's
    uses, for its implicit one); `supers`: the calls `super().forward(...)` among `outside`'s, no use of a held
    class's forward (a subclass names its base as a value, which makes the base loud)."""
    why_of: dict[tuple[str, int], str] = {}
    # each def that may be quiet, with its uses, in the order of the files and their defs (the order why_of is filled
    # in): not one with a use that takes a gradient outside any def (`loud_by`: such names, found once, not for each
    # of a name's defs), which no round can make quiet. A def that places tensors on a GPU itself is no host code,
    # but under no_grad it records no gradient either: quiet only where every use is (`pure`) no_grad.
    loud_by = {name for name, found in outside.items() if any(why is None and by < 0 for _, why, by in found)}
    candidates: list[tuple[str, int, list[tuple[str, str | None, int]], bool]] = []
    for path, graph in graphs.items():
        for k, (name, _, _, method, gpu) in enumerate(graph.defs):
            if name in loud or (method and name in read):
                continue
            if method and name in _RUNS and graph.owners[k] in runs:
                found = [(path, why, by) for why, by in graph.uses[k] if by != _RUN] \
                    + _without(outside.get(name, []), supers.get(name, [])) + runs[graph.owners[k]]
                if found and not any(why is None and by < 0 for _, why, by in found):
                    candidates.append((path, k, found, gpu))
            elif name not in loud_by and not any(why is None and by < 0 for why, by in graph.uses[k]) \
                    and (found := [(path, why, by) for why, by in graph.uses[k]] + outside.get(name, [])):
                candidates.append((path, k, found, gpu))
    pure: set[tuple[str, int]] = set()
    changed = True
    while changed:
        changed = False
        for path, k, found, gpu in candidates:
            if (path, k) in why_of:
                continue
            reasons = [why or ("" if (where, by) == (path, k) else why_of.get((where, by)) if by >= 0 else None)
                       for where, why, by in found]
            if not (all(r is not None for r in reasons) and any(reasons)):
                continue
            only = all(why == _NO_GRAD if why else by < 0 or (where, by) == (path, k) or (where, by) in pure
                       for where, why, by in found)
            if gpu and not only:
                continue
            why_of[(path, k)] = sorted(r for r in reasons if r)[0]
            if only:
                pure.add((path, k))
            changed = True
    return why_of


def _without(found: list[tuple[str, str | None, int]], some: list[tuple[str, str | None, int]]) -> list[tuple[str, str | None, int]]:
    """`found` less one entry per entry of `some` (a difference of multisets)."""
    left = Counter(some)
    out = []
    for use in found:
        if left[use] > 0:
            left[use] -= 1
        else:
            out.append(use)
    return out


class _Uses:
    """What every file's uses of names say (settle), kept up to date as files get their Graph rather than read
    again from every file at each round: the names some file uses as a value (or, without a Graph, calls or
    imports at all: counted per file, since such a file's names leave when its Graph comes), the attributes
    some file reads other than to call them (`read`), and name -> (path, why, calling def) of every call by
    that name (`outside`)."""

    def __init__(self, modules: dict[str, Module], graphs: dict[str, Graph]) -> None:
        self.unread: Counter[str] = Counter()  # name -> files without a Graph that call or import it
        self.heard: set[str] = set()  # the names files with a Graph use as a value
        self.read: set[str] = set()
        self.outside: dict[str, list[tuple[str, str | None, int]]] = {}
        self.instances: dict[str, list[tuple[str, str | None, int]]] = {}  # class -> calls of its held instances
        self.loose: set[str] = set()  # names some file with a Graph constructs without holding it so
        self.held_as: dict[str, set[str]] = {}  # class -> the attributes `x` of the holders `self.x` of its instances
        # attribute -> how many calls `self.x(...)` of holders so named there are: a call of another `o.x(...)`
        # anywhere may be a holder's read elsewhere (`evaluator.inception(x)`)
        self.keys: Counter[str] = Counter()
        # name -> the calls `super().forward(...)`: a base's forward, not a held class's, unless it is the base (then
        # the subclass names it as a value, and it is loud)
        self.supers: dict[str, list[tuple[str, str | None, int]]] = {}
        for path, module in modules.items():
            graph = graphs.get(path)
            if graph is None:
                self.unread.update(_called_or_imported(module))
            else:
                self._add(path, module, graph)

    def loud(self) -> set[str]:
        return self.heard | {name for name, files in self.unread.items() if files > 0}

    def read_now(self, path: str, module: Module, graph: Graph) -> None:
        """The file, which had no Graph, has `graph` now."""
        self.unread.subtract(_called_or_imported(module))
        self._add(path, module, graph)

    def _add(self, path: str, module: Module, graph: Graph) -> None:
        layout = module.layout
        rename = {b[0]: b[3] for b in layout.bindings if b[3] is not None and b[0] != b[3]}
        self.heard.update(rename.get(name, name) for name in graph.mentions)
        imported = {b[0] for b in layout.bindings}
        self.heard.update(attr for base, _, attr in (q.partition(".") for q in graph.qualified) if base in imported)
        self.read.update(graph.attributes)
        for name, why, by in graph.calls:
            if name.startswith(_SUPER):
                name = name[len(_SUPER):]
                self.supers.setdefault(name, []).append((path, why, by))
            self.outside.setdefault(rename.get(name, name), []).append((path, why, by))
        for name, why, by, key in graph.instances:
            self.instances.setdefault(rename.get(name, name), []).append((path, why, by))
            self.held_as.setdefault(rename.get(name, name), set()).add(key)
            self.keys[key] += 1
        self.loose.update(rename.get(name, name) for name in graph.loose)


def _called_or_imported(module: Module) -> set[str]:
    """The names a file without a Graph imports or calls (the last part of a dotted call), anywhere in it."""
    layout = module.layout
    names = {b[3] or b[0] for b in layout.bindings}
    names.update(c.rpartition(".")[2] for c in (*layout.top, *layout.in_main, *(n for _, ns in layout.functions for n in ns)))
    return names
