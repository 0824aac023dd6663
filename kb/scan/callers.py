"""The values every caller passes: a module-level function's or class constructor's parameter whose every
call in the code base, across files through the imports, passes a literal (or leaves it at a literal
default) holds one of those values only. Then a recorded call whose argument is that parameter (or
`self.<attr>` the constructor sets from it) is asked once with each of those values, and a statement under
`if param == LIT` / `if param:` / `if not param` that no value takes never runs; a draw only compared with a
parameter whose every value is at or above the top of its range reaches no result. A notebook's cells are one
program; `functools.partial(f, k=v)` is a call of f that binds k; a call in code that never runs passes nothing.

Only where every call is visible: no call passes *args or **kwargs, the function or class is named nowhere
else (handed on as a value, subclassed, in a notebook), and it is in no installable package (a library's
users may pass anything: RULES L4-3, kb/scan/packaging.py; the caller gives the script files) or in one that
exports nothing (every `__init__.py` empty: RULES P4-2). A class with no constructor of its own is built as its
base (a construction of the heir is one of the base). Read with
`ast` from the texts kb/scan/run.py keeps, after the first pass (the import graph of kb/scan/scope.py).
"""

from __future__ import annotations

import ast
import itertools
import math
import os
import re
from collections.abc import Callable
from typing import NamedTuple

from kb.scan import constantdraws, methodtargets, reexports, resolve, scope, sources, spreads
from kb.scan.calltargets import ROUNDS, Target, parse, signature
from kb.scan.nodes import BLOCK_FIELDS, iwalk, walk
from kb.scan.syntax import NOT_LITERAL, plain_literal

_COMBINATIONS = 8  # a call asked once per combination of its arguments' values: at most this many


class Passed(NamedTuple):
    """What kb/scan/run.py applies: per (path, line, col) of a recorded call, the argument (position or
    keyword) -> the values its parameter takes and why; per path, (first, last, why) of never-run blocks."""

    args: dict[tuple[str, int, int], dict[int | str, tuple[tuple, str]]]
    dead: dict[str, list[tuple[int, int, str]]]

    def narrow(self, path: str, call: resolve.Call) -> list[resolve.Call]:
        """The call once per combination of the values its arguments that are parameters of known values take
        (each read as that literal, so each asks the records exactly); the call itself where none is, or where
        the combinations are more than _COMBINATIONS."""
        given = self.args.get((path, call.line, call.col))
        if not given:
            return [call]
        places: list[tuple[int | str, tuple]] = []
        for key, (values, _) in given.items():
            if isinstance(key, int) and key < len(call.args) and isinstance(call.args[key], resolve.Unknown) \
                    or any(name == key and isinstance(v, resolve.Unknown) for name, v in call.kwargs):
                places.append((key, values))
        if not places or math.prod(len(v) for _, v in places) > _COMBINATIONS:
            return [call]
        out = []
        for chosen in itertools.product(*(v for _, v in places)):
            args, kwargs = list(call.args), list(call.kwargs)
            for (key, _), value in zip(places, chosen):
                if isinstance(key, int):
                    args[key] = value
                kwargs = [(name, value if name == key else v) for name, v in kwargs]
            out.append(call._replace(args=tuple(args), kwargs=tuple(kwargs)))
        return out

    def never_runs(self, path: str, line: int) -> str | None:
        return next((why for first, last, why in self.dead.get(path, ()) if first <= line <= last), None)


NONE = Passed({}, {})


def passed(modules: dict[str, resolve.Module], texts: sources.Texts, only: set[str], graph: scope.Graph,
           never: dict[str, list[tuple[int, int, str]]] | None = None,
           parsed: dict[str, ast.Module | None] | None = None,
           found: dict[str, dict[tuple[str, str], Target]] | None = None) -> Passed:
    """The Passed of the code base: targets in `only` (the script files) with a recorded call inside them.
    `never`: path -> (first, last, why) of code that never runs (kb/scan/unreached.py): a call there passes
    nothing. `parsed`: path -> tree, the files an earlier call of the same scan parsed, filled in here (the
    scan asks twice when the first answer finds dead code: a file is then parsed once, not once per call), and
    `found`: path -> its targets, read from that tree by the earlier call (the same tree and calls: the same ones)."""
    memo: dict[str, ast.Module | None] = {} if parsed is None else parsed
    read_of: dict[str, dict[tuple[str, str], Target]] = {} if found is None else found
    trees: dict[str, ast.Module | None] = {}
    targets: dict[tuple[str, str], Target] = {}
    for path in sorted(only):
        module = modules.get(path)
        if module is None or not module.calls:
            continue  # a notebook's cells are one program: its later cells call what an earlier one defines
        tree = memo[path] if path in memo else parse(texts.get(path))
        trees[path] = memo[path] = tree
        if tree is not None:
            if path not in read_of:
                read_of[path] = _targets(path, tree, module.calls)
            targets.update(read_of[path])
    if targets:
        _add_relays(targets, modules, texts, only, graph, trees, memo)
    methods = methodtargets.method_targets(trees, modules, texts, never or {}, memo, only)
    if not targets and not methods:
        return NONE
    values = _values(targets, modules, texts, trees, graph, never or {}, memo, methods)
    args: dict[tuple[str, int, int], dict[int | str, tuple[tuple, str]]] = {}
    dead: dict[str, list[tuple[int, int, str]]] = {}
    for key, known in values.items():
        target = targets[key]
        names = _names(target, known, texts, modules, memo)
        if not names:
            continue
        recorded = {(c.line, c.col) for c in modules[target.path].calls}
        for node in walk(target.node):
            if isinstance(node, ast.Call) and (node.lineno, node.col_offset + 1) in recorded:
                given: list[tuple[int | str, ast.expr]] = [*enumerate(node.args)]
                given += [(kw.arg, kw.value) for kw in node.keywords if kw.arg]
                for k, arg in given:
                    param = _read(arg, names, node.lineno, target)
                    if param is not None:
                        args.setdefault((target.path, node.lineno, node.col_offset + 1), {})[k] = known[param]
            for block in (getattr(node, field, None) for field in BLOCK_FIELDS):
                if not isinstance(block, list):
                    continue
                for i, stmt in enumerate(block):
                    if isinstance(stmt, ast.If):  # the statements after it in its block: a guard's return
                        dead.setdefault(target.path, []).extend(_dead(stmt, names, known, target, block[i + 1:]))
        for draw, why in constantdraws.constant_draws(target.node, lambda arg: _known(arg, names, target, known)):
            if (draw.lineno, draw.col_offset + 1) in recorded:  # a note on the draw's line: its value reaches nothing
                dead.setdefault(target.path, []).append((draw.lineno, draw.lineno, why))
    return Passed(args, {p: d for p, d in dead.items() if d})


def _known(arg: ast.expr, names: dict[tuple[str, str], str], target: Target,
           known: dict[str, tuple[tuple, str]]) -> tuple[tuple, str] | None:
    """The values a parameter read as `arg` takes and why, else None."""
    param = _read(arg, names, getattr(arg, "lineno", target.node.lineno), target)
    return known[param] if param is not None else None


def _add_relays(targets: dict[tuple[str, str], Target], modules: dict[str, resolve.Module], texts: sources.Texts,
                only: set[str], graph: scope.Graph, trees: dict[str, ast.Module | None],
                memo: dict[str, ast.Module | None]) -> None:
    """Add to `targets` the functions and classes of the script files that call a target of another file by
    an imported name (cm/unet.py's Downsample handing its own `dims` on to cm/nn.py's `conv_nd`): they may
    pass a parameter of their own on, whose values their callers give, though they hold no recorded call. A
    file is parsed only where its imports bind a target's name and its text names it; notebooks are left out
    (their cells are one program, read as the caller only)."""
    for _ in range(ROUNDS):
        index = _Index.of(targets)
        grown = False
        for path in sorted(only):
            module = modules.get(path)
            if module is None or path.endswith(".ipynb"):
                continue
            mine, aliases = _bindings(path, module, graph, index)
            text = texts.get(path) or ""
            calling = frozenset([*(local for local, key in mine.items() if key[0] != path and local in text),
                                 *(f"{alias}.{name}" for alias, where in aliases.items() if alias in text
                                   for name in index.by_path.get(where, ()) if name in text)])
            if not calling:
                continue
            tree = trees[path] if path in trees else memo[path] if path in memo else parse(text)
            trees[path] = memo[path] = tree
            if tree is None:
                continue
            for key, target in _targets(path, tree, module.calls, calling).items():
                if key not in targets:
                    targets[key] = target
                    grown = True
        if not grown:
            return


def _targets(path: str, tree: ast.Module, calls: tuple,
             calling: frozenset[str] = frozenset()) -> dict[tuple[str, str], Target]:
    """The module-level functions and classes (with their own `__init__`) that hold a recorded call or call
    a name of `calling` (a target of another file), and those of the file that call them (which may pass a
    parameter of their own on)."""
    lines = [c.line for c in calls]
    defs = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    keep = {n.name for n in defs if any(n.lineno <= line <= (n.end_lineno or n.lineno) for line in lines)}
    callees = {n.name: {name for c in map(_partial_or_call, walk(n)) if c is not None and (name := _called(c.func))}
               for n in defs}
    keep |= {name for name, called in callees.items() if called & calling}
    count: dict[str, int] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            count[node.name] = count.get(node.name, 0) + 1
    heirs = _heirs(tree, count)
    for _ in range(ROUNDS):
        keep |= {name for name, called in callees.items() if called & keep}
        keep |= {heir for heir, base in heirs.items() if base.name in keep}
        keep |= {base.name for heir, base in heirs.items() if heir in keep}
    out = {}
    for node in tree.body:
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) or count[node.name] > 1:
            continue  # defined twice: which one a call reaches depends on the order
        if node.decorator_list or node.name not in keep:
            continue  # a decorator may wrap it (its calls then reach another signature)
        if isinstance(node, ast.ClassDef):
            init = next((s for s in node.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))
                         and s.name == "__init__"), None)
            if init is None or init.decorator_list or node.keywords or any(
                    isinstance(c, ast.Call) and _self_made(c.func) for c in iwalk(node)):
                continue  # `cls(...)`, `type(self)(...)`: constructions its own methods make, not by its name
            out[(path, node.name)] = Target(path, node.name, node, *signature(init, 1))
        else:
            out[(path, node.name)] = Target(path, node.name, node, *signature(node, 0))
    for heir, base in heirs.items():  # a construction of the heir is one of its base: the base's target
        if heir in keep and (path, base.name) in out:
            out[(path, heir)] = out[(path, base.name)]._replace(name=heir)
    return out


def _heirs(tree: ast.Module, count: dict[str, int]) -> dict[str, ast.ClassDef]:
    """Module-level class -> the module-level class of the same file whose `__init__` it runs: a class with
    no `__init__` of its own, one base (a class of the file, named plainly), no decorator, no keywords and no
    `cls(...)` builds its base's way (emergent_in_context_learning's CausalSelfAttention and SelfAttention
    are Attention's constructor). Followed up a chain of such classes."""
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef) and count.get(n.name) == 1}

    def own_init(node: ast.ClassDef) -> bool:
        return any(isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name == "__init__" for s in node.body)

    def plain(node: ast.ClassDef) -> bool:
        return not node.decorator_list and not node.keywords and len(node.bases) == 1 \
            and isinstance(node.bases[0], ast.Name) and not any(
                isinstance(c, ast.Call) and _self_made(c.func) for c in iwalk(node))

    out = {}
    for name, node in classes.items():
        step, seen = node, {name}
        while not own_init(step) and plain(step):
            base = classes.get(step.bases[0].id)  # type: ignore[attr-defined]
            if base is None or base.name in seen:
                break
            seen.add(base.name)
            step = base
        if step is not node and own_init(step):
            out[name] = step
    return out


def _values(targets: dict[tuple[str, str], Target], modules: dict[str, resolve.Module], texts: sources.Texts,
            trees: dict[str, ast.Module | None], graph: scope.Graph,
            never: dict[str, list[tuple[int, int, str]]],
            memo: dict[str, ast.Module | None],
            methods: dict[tuple[str, str], tuple[Target, list[tuple[str, ast.Call]]]] | None = None,
            ) -> dict[tuple[str, str], dict[str, tuple[tuple, str]]]:
    """Target -> parameter -> (its values, why), for the parameters every call of the target passes as a
    literal or leaves at a literal default; a target named otherwise anywhere (or in a notebook, or in a file
    that does not parse) has none. `methods`: the methods whose every call is a `self.m(...)` of their own
    class (kb/scan/methodtargets.py), with those calls; they join the targets here (no import names them)."""
    index = _Index.of(targets)
    calls: dict[tuple[str, str], list[tuple[str, ast.Call]]] = {key: [] for key in targets}
    blocked: set[tuple[str, str]] = set()
    partials: set[int] = set()  # the calls that are a partial's binding: what they leave out is given later
    for path, module in modules.items():
        mine, aliases = _bindings(path, module, graph, index)
        if not mine and not aliases:
            continue  # it names no target: it neither calls one nor hands one on (read from its imports alone)
        text = texts.get(path) or ""
        named = {key for local, key in mine.items() if local in text}
        named.update(key for key in targets if key[0] in aliases.values() and key[1] in text)
        if not named:
            continue
        if path in trees:
            tree = trees[path]
        else:
            tree = memo[path] = memo[path] if path in memo else parse(text)
        if tree is None:
            blocked.update(named)
            continue
        funcs: set[int] = set()
        allowed: set[int] = set()
        spread: dict[str, ast.Dict] | None = None  # the file's dicts that a `**name` may stand for, read once
        for node in walk(tree):
            if isinstance(node, ast.Call):
                bound = _partial(node)
                if bound is not None:  # `functools.partial(f, k=v)`: a call of f passing k, its other parameters open
                    node = bound
                    partials.add(id(bound))
                func = node.func
                key = mine.get(func.id) if isinstance(func, ast.Name) else None
                if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in aliases:
                    key = (aliases[func.value.id], func.attr)
                    funcs.add(id(func.value))
                if key in calls:
                    if any(k.arg is None and isinstance(k.value, ast.Name) for k in node.keywords):
                        spread = spreads.spreads(tree) if spread is None else spread
                        node = spreads.spread(node, spread)
                    if not any(first <= node.lineno <= last for first, last, _ in never.get(path, ())):
                        calls[key].append((path, node))  # a call in code that never runs passes nothing
                    funcs.add(id(func))
                if isinstance(func, ast.Name) and func.id in ("super", "isinstance", "issubclass"):
                    allowed.update(id(a) for a in node.args)  # super(Cls, self), isinstance(x, Cls): no call of it
            elif isinstance(node, ast.ClassDef) and (heir := targets.get((path, node.name))) is not None \
                    and heir.node is not node:
                allowed.update(id(b) for b in node.bases)  # an heir names its base: its constructions are the base's
            elif isinstance(node, ast.Name) and id(node) not in funcs and id(node) not in allowed and node.id in mine:
                blocked.add(mine[node.id])  # handed on as a value, subclassed, rebound
            elif isinstance(node, ast.Attribute) and id(node) not in funcs and isinstance(node.value, ast.Name) \
                    and node.value.id in aliases and (aliases[node.value.id], node.attr) in targets:
                blocked.add((aliases[node.value.id], node.attr))
    for key, target in list(targets.items()):
        if isinstance(target.node, ast.ClassDef) and target.node.name != key[1]:  # an heir: its base's calls
            base = (key[0], target.node.name)
            calls[base] = calls.get(base, []) + calls.pop(key, [])
            if key in blocked:
                blocked.add(base)
    for key, (target, seen) in (methods or {}).items():
        targets[key] = target
        calls[key] = seen
    out: dict[tuple[str, str], dict[str, tuple[tuple, str]]] = {}
    for _ in range(ROUNDS):  # a caller's own parameter passed on (`f(k=k)`) holds what its callers pass
        names = {key: _names(targets[key], known, texts, modules, memo) for key, known in out.items()}

        def relay(path: str, line: int, node: ast.expr) -> tuple | None:
            key = max((k for k in names if k[0] == path and targets[k].node.lineno <= line
                       <= (targets[k].node.end_lineno or line)), key=lambda k: targets[k].node.lineno, default=None)
            param = _read(node, names[key], line, targets[key]) if key is not None else None
            return out[key][param][0] if key is not None and param is not None else None

        grown = {key: found for key, seen in calls.items() if key not in blocked and seen
                 and (found := _passed(targets[key], seen, relay, partials))}
        if grown == out:
            break
        out = grown
    return out


class _Index(NamedTuple):
    """The targets by file, and the defining files by stem: built once, asked for each file's bindings."""

    by_path: dict[str, list[str]]
    by_stem: dict[str, list[str]]

    @classmethod
    def of(cls, targets: dict[tuple[str, str], Target]) -> _Index:
        by_path: dict[str, list[str]] = {}
        for p, name in targets:
            by_path.setdefault(p, []).append(name)
        by_stem: dict[str, list[str]] = {}
        for p in sorted(by_path):
            by_stem.setdefault(_stem(p), []).append(p)
        return cls(by_path, by_stem)


def _bindings(path: str, module: resolve.Module, graph: scope.Graph,
              index: _Index) -> tuple[dict[str, tuple[str, str]], dict[str, str]]:
    """In `path`: local name -> the target it names (its own, imported, star-imported, re-exported: THUDM/GCC's
    `from gcc.models import GraphEncoder`), and local name -> a file it names as a module (`from util import misc`)."""
    mine = {name: (path, name) for name in index.by_path.get(path, ())}
    aliases: dict[str, str] = {}
    for local, source, level, attr in module.layout.bindings:
        where = graph.resolve(path, source, level) if source or level else None
        if attr is not None and where is not None and attr not in index.by_path.get(where, ()):  # re-exported
            where = reexports.defined_in(graph, where, attr)
        if attr is not None and where is not None and attr in index.by_path.get(where, ()):
            mine[local] = (where, attr)
        elif attr is not None and where is None and source:  # `from misc import f` found no file from here: a
            for p in index.by_stem.get(source.rsplit(".", 1)[-1], ()):  # sys.path set at run time may make it one
                if attr in index.by_path[p]:
                    mine[local] = (p, attr)
        named = f"{source}.{attr}" if source and attr else (attr or source)
        whole = graph.resolve(path, named, level) if named else None
        if whole is None and named:  # `import vdm.utils as utils` where the checkout's folder is not named vdm
            whole = next(iter(index.by_stem.get(named.rsplit(".", 1)[-1], ())), None)
        if whole in index.by_path:
            aliases[local] = whole
    for source, level, imported in module.layout.imports:
        where = graph.resolve(path, source, level) if "*" in imported else None
        if where is not None:
            mine.update({name: (where, name) for name in index.by_path.get(where, ()) if not name.startswith("_")})
    return mine, aliases


def _partial(call: ast.Call) -> ast.Call | None:
    """`functools.partial(f, *args, **kw)` (or `partial(...)`) as the call of f it binds, else None."""
    func = call.func
    named = func.id if isinstance(func, ast.Name) else func.attr \
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "functools" else None
    if named != "partial" or not call.args or isinstance(call.args[0], ast.Starred):
        return None
    return ast.Call(call.args[0], call.args[1:], call.keywords, lineno=call.lineno, col_offset=call.col_offset)


def _partial_or_call(node: ast.AST) -> ast.Call | None:
    return (_partial(node) or node) if isinstance(node, ast.Call) else None


def _called(func: ast.expr) -> str | None:
    """The name a call is spelled with: `f`, or `module.f` (another file's target: mipnerf's `math.matmul`), else None."""
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        return f"{func.value.id}.{func.attr}"
    return None


def _self_made(func: ast.expr) -> bool:
    if isinstance(func, ast.Name):
        return func.id == "cls"
    if isinstance(func, ast.Attribute):
        return func.attr == "__class__"
    return isinstance(func, ast.Call) and isinstance(func.func, ast.Name) and func.func.id == "type"


def _stem(path: str) -> str:
    return os.path.splitext(os.path.basename(path))[0]


def _passed(target: Target, seen: list[tuple[str, ast.Call]], relay: Callable[[str, int, ast.expr], tuple | None],
            partials: set[int] = frozenset()) -> dict[str, tuple[tuple, str]]:  # type: ignore[assignment]
    """Parameter -> (the values every call gives it, why): a literal, the literal default, or a parameter of
    the calling target whose values are known (`relay`). A call in `partials` is a partial's binding: a
    parameter it does not bind is given where the partial is called, unknown here."""
    values: dict[str, list] = {}
    every = [*target.params, *target.keywords]
    for path, call in seen:
        if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
            return {}
        given = dict(zip(target.params, call.args))
        given.update({k.arg: k.value for k in call.keywords if k.arg})
        for param in every:
            node = given.get(param, target.defaults.get(param) if id(call) not in partials else None)
            value = plain_literal(node) if node is not None else NOT_LITERAL
            passed_on = relay(path, call.lineno, given[param]) if value is NOT_LITERAL and param in given else None
            for one in passed_on if passed_on is not None else (value,):
                if one is NOT_LITERAL:
                    values[param] = [NOT_LITERAL]
                elif NOT_LITERAL not in values.get(param, ()) and (type(one), one) not in values.setdefault(param, []):
                    values[param].append((type(one), one))
    out = {}
    places = sorted({f"{os.path.basename(p)}:{c.lineno}" for p, c in seen})
    where = ", ".join(places) if len(places) <= 2 else f"{len(seen)} calls in {len({p for p, _ in seen})} files"
    for param, found in values.items():
        if found and NOT_LITERAL not in found:
            shown = " or ".join(repr(v) for _, v in found)
            out[param] = (tuple(v for _, v in found),
                          f"every call of {target.name} in the code base ({where}) passes {param} as {shown} "
                          f"(or leaves it at that default, or passes on a parameter of its own that its callers give so)")
    return out


def _names(target: Target, known: dict[str, tuple[tuple, str]], texts: sources.Texts,
           modules: dict[str, resolve.Module], trees: dict[str, ast.Module | None] | None = None,
           ) -> dict[tuple[str, str], str]:
    """("name", param) for each parameter of known values read as itself in a function (never rebound in it);
    ("self", attr) -> param for a class's `self.<attr> = param`, set once in `__init__` and nowhere else in
    the code base."""
    out: dict[tuple[str, str], str] = {}
    node = target.node
    fn = node if not isinstance(node, ast.ClassDef) else next(
        s for s in node.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name == "__init__")
    stored = {n.id for n in walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del))}
    stored.update(a.arg for inner in walk(fn) if inner is not fn and isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
                  for a in iwalk(inner.args) if isinstance(a, ast.arg))  # a nested function's own parameter
    for param in known:
        if param not in stored:
            out[("name", param)] = param
    if isinstance(node, ast.ClassDef) or "." in target.name:  # a method's `self.x = param` (set nowhere else)
        for stmt in fn.body:  # top level of __init__ (or the method): run on every construction (call)
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.value, ast.Name) \
                    and stmt.value.id in known and stmt.value.id not in stored:
                attr = stmt.targets[0]
                if isinstance(attr, ast.Attribute) and isinstance(attr.value, ast.Name) and attr.value.id == "self" \
                        and _set_once(attr.attr, texts, modules, target, (trees or {}).get(target.path)):
                    out[("self", attr.attr)] = stmt.value.id
    return out


def _set_once(attr: str, texts: sources.Texts, modules: dict[str, resolve.Module], own: Target | None = None,
              tree: ast.Module | None = None) -> bool:
    """`.<attr> =` (or `setattr`) appears once in the code base: only the constructor sets it. In the class's
    own file (`own`'s, parsed as `tree`), `self.<attr> =` in another class that descends from no class of that file
    sets another object's attribute (emergent_in_context_learning's blocks each keep their own
    `self._relative_pos_emb`): not counted, since a subclass of the target would have to name it, which makes
    the target no target."""
    pattern = re.compile(rf"\.{re.escape(attr)}\s*(?:[-+*/|&]?=(?!=)|,[^=\n()]*=[^=])")
    count = 0
    for path in modules:
        text = texts.get(path) or ""
        if attr in text:
            found = len(pattern.findall(text))
            if own is not None and path == own.path and tree is not None and found > 1:
                found = _sets_in(tree, attr, own.node.name if isinstance(own.node, ast.ClassDef) else own.name.split(".")[0])
            count += found + (2 if "setattr(" in text and repr(attr) in text else 0)
            if count > 1:
                return False
    return count == 1


def _sets_in(tree: ast.Module, attr: str, mine: str) -> int:
    """The stores to `.<attr>` in a file, less `self.<attr>` in the methods of a class other than `mine` none
    of whose bases is a class of the file (another family's own attribute)."""
    local = {n.name for n in iwalk(tree) if isinstance(n, ast.ClassDef)}
    count = 0
    stack: list[tuple[ast.AST, ast.ClassDef | None]] = [(tree, None)]
    while stack:
        node, cls = stack.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Attribute) and child.attr == attr and isinstance(child.ctx, (ast.Store, ast.Del)):
                foreign = cls is not None and cls.name != mine and isinstance(child.value, ast.Name) and child.value.id == "self" \
                    and not any(isinstance(b, ast.Name) and b.id in local for b in cls.bases)
                count += 0 if foreign else 1
            stack.append((child, child if isinstance(child, ast.ClassDef) else cls))
    return count


def _read(arg: ast.expr, names: dict[tuple[str, str], str], line: int, target: Target) -> str | None:
    """The parameter an argument is: the name itself (inside the function or `__init__`), or `self.<attr>`."""
    if isinstance(arg, ast.Name):
        if isinstance(target.node, ast.ClassDef):
            init = next(s for s in target.node.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))
                        and s.name == "__init__")
            if not (init.lineno <= line <= (init.end_lineno or init.lineno)):
                return None
        return names.get(("name", arg.id))
    if isinstance(arg, ast.Attribute) and isinstance(arg.value, ast.Name) and arg.value.id == "self":
        return names.get(("self", arg.attr))
    return None


def _dead(node: ast.If, names: dict[tuple[str, str], str], known: dict[str, tuple[tuple, str]],
          target: Target, after: list[ast.stmt] | None = None) -> list[tuple[int, int, str]]:
    """(first, last, why) of the branch of an `if` on parameters that no value of them takes; and, where the
    branch every value takes ends in `return` or `raise` (a guard: `if not training or keep_prob is None:
    return x`), of the statements `after` it in its block, which only a fall through the `if` reaches."""
    found = _truth(node.test, names, known, target, node.lineno)
    if found is None:
        return []
    truth, why = found
    text = ast.unparse(node.test)
    out = []
    branch = node.body if not truth else node.orelse
    if branch:
        which = "this branch" if branch is node.body else "the else branch"
        out.append((branch[0].lineno, branch[-1].end_lineno or branch[-1].lineno,
                    f"{which} of `if {text}` (line {node.lineno}) never runs: {why}"))
    taken = node.body if truth else node.orelse
    if after and taken and isinstance(taken[-1], (ast.Return, ast.Raise)):
        first = min([after[0].lineno, *(d.lineno for d in getattr(after[0], "decorator_list", ()))])
        exit_ = "returns" if isinstance(taken[-1], ast.Return) else "raises"
        out.append((first, after[-1].end_lineno or after[-1].lineno,
                    f"the code after `if {text}` (line {node.lineno}) never runs: the test is {truth} at every "
                    f"call and that branch {exit_}: {why}"))
    return out


def _truth(test: ast.expr, names: dict[tuple[str, str], str], known: dict[str, tuple[tuple, str]],
           target: Target, line: int) -> tuple[bool, str] | None:
    """(the truth of a test at every call, why), where every value of its parameters gives the same: a
    comparison of a parameter with a literal, the parameter itself, `not` of one, and `and` / `or` of them (an
    operand that decides alone: a false one of `and`, a true one of `or`; else every operand known); None where
    a value of a parameter gives another answer, or an operand is not a parameter of known values."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _truth(test.operand, names, known, target, line)
        return (not inner[0], inner[1]) if inner is not None else None
    if isinstance(test, ast.BoolOp):
        decides = isinstance(test.op, ast.Or)  # the truth of an operand that decides the whole alone
        parts = [_truth(v, names, known, target, line) for v in test.values]
        alone = next((p for p in parts if p is not None and p[0] == decides), None)
        if alone is not None:
            return alone
        if any(p is None for p in parts):
            return None
        whys = list(dict.fromkeys(p[1] for p in parts if p is not None))
        return not decides, "; ".join(whys)
    subject, op, other = test, None, None
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        subject, op, other = test.left, test.ops[0], plain_literal(test.comparators[0])
        if other is NOT_LITERAL or not isinstance(op, (ast.Eq, ast.NotEq, ast.Is, ast.IsNot, *_ORDER)):
            return None
    param = _read(subject, names, line, target)
    if param is None:
        return None
    values, why = known[param]
    held = {_holds(op, v, other) for v in values}
    if None in held or len(held) != 1:
        return None
    return bool(held.pop()), why


_ORDER = (ast.Gt, ast.GtE, ast.Lt, ast.LtE)


def _holds(op: ast.cmpop | None, value: object, other: object) -> bool | None:
    """`value <op> other` (None: the value's truth), True never equal to 1; None if untold (an order of non-numbers)."""
    if op is None:
        return bool(value)
    if isinstance(op, _ORDER):
        if not isinstance(value, (int, float)) or not isinstance(other, (int, float)) \
                or isinstance(value, bool) or isinstance(other, bool):
            return None
        a, b = float(value), float(other)
        return a > b if isinstance(op, ast.Gt) else a >= b if isinstance(op, ast.GtE) else a < b if isinstance(op, ast.Lt) else a <= b
    same = value == other and isinstance(value, bool) == isinstance(other, bool)
    if isinstance(op, (ast.Is, ast.IsNot)):
        same = value is None and other is None or (same and isinstance(value, bool))
    return same if isinstance(op, (ast.Eq, ast.Is)) else not same


