"""Methods whose calls give their parameters' values (kb/scan/callers.py follows them like functions): a method
of the code base's own classes called only as `self.method(...)` in its own class, or (kb/scan/methodcalls.py)
by any receiver where the name is used nowhere else, and the classes that a method builds. Kept apart from the
function and constructor targets because which calls reach a method depends on class dispatch, not imports."""

from __future__ import annotations

import ast
import re

from kb.scan import methodcalls, resolve, sources
from kb.scan.calltargets import ROUNDS, Target, parse, signature
from kb.scan.nodes import walk


def method_targets(trees: dict[str, ast.Module | None], modules: dict[str, resolve.Module], texts: sources.Texts,
                    never: dict[str, list[tuple[int, int, str]]], memo: dict[str, ast.Module | None] | None = None,
                    only: set[str] | None = None) -> dict[tuple[str, str], tuple[Target, list[tuple[str, ast.Call]]]]:
    """(path, "Class.method") -> (its Target, its calls) for a method of a module-level class of the script
    files that holds a recorded call and is called only as `self.method(...)` in the methods of classes that
    define a method of that name themselves (xDeepFM's `self._build_extreme_FM(..., bias=False)`): such a call
    in its own class reaches it or an override in a subclass, and one in another class reaches that class's own
    method, so the calls in its class are all that give it values. Any other spelling of the name in the code
    base (`super().m`, `Base.m(self)`, `obj.m`, a string, a subclass that inherits it and calls it) may pass
    other values: the method is then no target. Not a dunder, a decorated method, or one defined twice in
    its class. A method that builds a class (or calls a function) of the script files holding a recorded call
    is one too (lpips's DistModel.initialize builds BCERankingLoss only `if self.is_train:`): its dead branch
    then leaves that class unbuilt (kb/scan/unreached.py); the script files (`only`) that name such a class are
    read for it, the others not."""
    candidates: dict[str, list[tuple[str, ast.ClassDef, ast.FunctionDef | ast.AsyncFunctionDef]]] = {}
    builders = _builders(trees, modules)
    read = {**trees, **_building_files(trees, builders, only or set(), texts, memo)}
    own = _own_classes({**read, **_base_files(read, modules, texts, memo)})
    for path, tree in read.items():
        module = modules.get(path)
        if tree is None or module is None or path.endswith(".ipynb"):
            continue
        lines = [c.line for c in module.calls]
        for cls in tree.body:
            if not isinstance(cls, ast.ClassDef) or cls.decorator_list or cls.name not in own:
                continue  # a framework's base may call its methods itself (`forward`, `call`, sonnet's `_build`)
            defs = [s for s in cls.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))]
            names = [d.name for d in defs]
            for fn in defs:
                if fn.name.startswith("__") or fn.decorator_list or names.count(fn.name) > 1 or not fn.args.args \
                        or fn.args.args[0].arg != "self" or fn.args.vararg or fn.args.kwarg:
                    continue
                if any(fn.lineno <= line <= (fn.end_lineno or fn.lineno) for line in lines) or (
                        builders and _builds(fn, builders)):
                    candidates.setdefault(fn.name, []).append((path, cls, fn))
    if not candidates:
        return {}
    out: dict[tuple[str, str], tuple[Target, list[tuple[str, ast.Call]]]] = {}
    for name, found in candidates.items():
        word = re.compile(rf"\b{re.escape(name)}\b")
        spelled = re.compile(rf"\bself\.{re.escape(name)}\(|\bdef\s+{re.escape(name)}\s*\(")
        uses = 0
        for path in modules:
            text = texts.get(path) or ""
            if name in text:
                every = len(word.findall(text))
                plain = len(spelled.findall(text))
                if every != plain:
                    uses = -1
                    break
                uses += plain
        if uses < 0:
            for (path, cls, fn), seen in methodcalls.calls(name, found, modules, texts, never, trees, memo).items():
                key = (path, f"{cls.name}.{name}")
                out[key] = (Target(path, key[1], fn, *signature(fn, 1)), seen)
            continue
        seen_calls: dict[tuple[str, str], list[tuple[str, ast.Call]]] = {(p, c.name): [] for p, c, _ in found}
        counted, outside = 0, False
        for path, tree in trees.items():
            if tree is None or name not in (texts.get(path) or ""):
                continue
            for cls in tree.body:
                if not isinstance(cls, ast.ClassDef):
                    continue
                defines = any(isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name == name
                              for s in cls.body)
                for node in walk(cls):
                    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
                        counted += 1
                    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                            and node.func.attr == name and isinstance(node.func.value, ast.Name) \
                            and node.func.value.id == "self":
                        counted += 1
                        outside = outside or not defines  # a class that inherits it and calls it
                        if (path, cls.name) in seen_calls and not any(
                                first <= node.lineno <= last for first, last, _ in never.get(path, ())):
                            seen_calls[(path, cls.name)].append((path, node))
        if outside or counted != uses:
            continue  # a use outside the classes that define it, or in a file not parsed here
        for path, cls, fn in found:
            if seen_calls[(path, cls.name)]:
                key = (path, f"{cls.name}.{name}")
                out[key] = (Target(path, key[1], fn, *signature(fn, 1)), seen_calls[(path, cls.name)])
    return out


def _builders(trees: dict[str, ast.Module | None], modules: dict[str, resolve.Module]) -> frozenset[str]:
    """The names of the module-level classes and functions of `trees` that hold a recorded call, or call one
    that does (lpips's BCERankingLoss builds Dist2LogitLayer, whose convolutions are recorded)."""
    out: set[str] = set()
    rest: list[ast.AST] = []
    for path, tree in trees.items():
        module = modules.get(path)
        if tree is None or module is None:
            continue
        lines = sorted({c.line for c in module.calls})
        for node in tree.body:
            if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                if any(node.lineno <= line <= (node.end_lineno or node.lineno) for line in lines):
                    out.add(node.name)
                else:
                    rest.append(node)
    called = {id(node): _called_names(node) for node in rest}  # each walked once, not once per round
    for _ in range(ROUNDS):
        more = [node for node in rest if getattr(node, "name", "") not in out and not called[id(node)].isdisjoint(out)]
        if not more:
            break
        out.update(getattr(node, "name", "") for node in more)
    return frozenset(out)


_WORDS = re.compile(r"\w+")


def _building_files(trees: dict[str, ast.Module | None], builders: frozenset[str], only: set[str],
                    texts: sources.Texts, memo: dict[str, ast.Module | None] | None) -> dict[str, ast.Module | None]:
    """The script files outside `trees` that define a class and name a builder (read as words: cheap)."""
    out: dict[str, ast.Module | None] = {}
    if not builders:
        return out
    for path in sorted(only):
        if path in trees or path.endswith(".ipynb"):
            continue
        text = texts.get(path) or ""
        if "class " not in text or "self" not in text or builders.isdisjoint(_WORDS.findall(text)):
            continue
        tree = memo[path] if memo is not None and path in memo else parse(text)
        if memo is not None:
            memo[path] = tree
        out[path] = tree
    return out


def _called_names(fn: ast.AST) -> set[str]:
    """The names `fn` calls (`Cls(...)`, `module.Cls(...)`): _builds is whether one of them is a builder."""
    return {func.id if isinstance(func, ast.Name) else func.attr for node in walk(fn) if isinstance(node, ast.Call)
            and isinstance(func := node.func, (ast.Name, ast.Attribute))}


def _builds(fn: ast.AST, builders: frozenset[str]) -> bool:
    """Whether `fn` calls a builder by its name (`Cls(...)`, `module.Cls(...)`)."""
    for node in walk(fn):
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name) and func.id in builders or isinstance(func, ast.Attribute) \
                    and func.attr in builders:
                return True
    return False


def _base_files(trees: dict[str, ast.Module | None], modules: dict[str, resolve.Module], texts: sources.Texts,
                memo: dict[str, ast.Module | None] | None) -> dict[str, ast.Module | None]:
    """The other files that define a base (a plain name) of a class of `trees` that `trees` do not define
    (lpips's BaseModel, in a file of no recorded call): parsed so _own_classes can tell it is the code base's."""
    defined = {n.name for t in trees.values() if t is not None for n in t.body if isinstance(n, ast.ClassDef)}
    wanted = {b.id for t in trees.values() if t is not None for n in t.body if isinstance(n, ast.ClassDef)
              for b in n.bases if isinstance(b, ast.Name) and b.id not in defined and b.id != "object"}
    out: dict[str, ast.Module | None] = {}
    # `class <name>` for any of them, as text: one search per file that re skips through to each "class " at C
    # speed, not a scan of the whole text per name (a large code base's thousands of files, each name's own pass)
    named = re.compile("class (?:" + "|".join(map(re.escape, sorted(wanted))) + ")") if wanted else None
    for path in modules:
        if path in trees or path.endswith(".ipynb"):
            continue
        text = texts.get(path) or ""
        if named is not None and named.search(text):
            tree = memo[path] if memo is not None and path in memo else parse(text)
            if memo is not None:
                memo[path] = tree
            out[path] = tree
    return out


def _own_classes(trees: dict[str, ast.Module | None]) -> set[str]:
    """The names of the module-level classes of the parsed files whose ancestors are all such classes (or
    `object`), every class of that name alike: no base of a framework or a library can call their methods."""
    bases: dict[str, list[list[ast.expr]]] = {}
    for tree in trees.values():
        for node in tree.body if tree is not None else ():
            if isinstance(node, ast.ClassDef):
                bases.setdefault(node.name, []).append([*node.bases, *(k.value for k in node.keywords)])
    own: set[str] = set()
    grown = True
    while grown:
        grown = False
        for name, each in bases.items():
            if name not in own and all(isinstance(b, ast.Name) and (b.id == "object" or b.id in own)
                                       for listed in each for b in listed):
                own.add(name)
                grown = True
    return own
