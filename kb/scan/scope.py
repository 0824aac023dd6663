"""Where a switch holds: in the processes that run it.

A determinism switch is process-wide, but only for the process that executes it. A process
starts at an entry point: a file with an `if __name__ == "__main__":` block, a notebook, a console script
of the project (`[project.scripts]` in pyproject.toml, `console_scripts` in setup.cfg), a
file named on the command line that no other scanned file imports, or a script without a
`__main__` block: a file that no scanned file imports and that calls something at module level
(`python train.py` of research code). It runs its entry file's
module level and `__main__` block, the module level of every scanned file it imports
(transitively, through the repository's own imports), and the functions those call, as far
as plain names resolve (`main()`, `utils.setup()`, `Trainer(...)` runs `Trainer.__init__`,
`self.setup()` inside a method of the same class).

A switch holds for a run when it is set at module level of a file the run imports, in the
entry's `__main__` block, or in a function the run calls. A switch in a function that no run
calls is conditional. A file reached by several runs is covered only by what holds in every
one of them; a file no run reaches is its own run.
"""

from __future__ import annotations

import configparser
import os
import tomllib
from collections import deque
from itertools import repeat
from operator import call
from typing import NamedTuple

from kb.scan.resolve import Layout, Module, Setting


FALLBACK = "imported by no entry point"
SCRIPT = "module-level code, imported by no scanned file"


class Run(NamedTuple):
    """One entry point: its file, why it is one, and the settings that hold in its process."""

    entry: str
    why: str  # "__main__ block" | "console script NAME" | "named on the command line" | SCRIPT | FALLBACK
    files: frozenset[str]
    holds: tuple[tuple[str, Setting], ...]  # (path, setting) that run
    unreached: tuple[tuple[str, Setting], ...]  # (path, setting) in a file it imports, in a function it never calls


def _module_file(base: str, dotted: str, files: frozenset[str]) -> str | None:
    stem = os.path.join(base, *dotted.split(".")) if dotted else base
    for candidate in (stem + ".py", os.path.join(stem, "__init__.py")):
        path = os.path.normpath(candidate)
        if path in files:
            return path
    return None


def _importable(files: frozenset[str]) -> dict[tuple[str, str], str]:
    """(folder, dotted name) -> the file `_module_file(folder, dotted, files)` finds, for every pair
    that finds one: each .py file under each folder above it (`a/b/c.py` is `c` in a/b, `b.c` in a,
    `a.b.c` in the root) and each package's __init__.py likewise, the module file first. One pass
    over the files instead of two joined and normalised candidate paths for every folder and name
    an import asks (most of the import graph's time on a large repository). For normalised paths
    only: a folder named with a dot is no package, and no name above it reaches its files."""
    modules: dict[tuple[str, str], str] = {}
    packages: dict[tuple[str, str], str] = {}
    for path in files:
        if path.endswith(".py"):
            _add_names(modules, path[:-3], path)
            if not os.path.isabs(path):  # and from the folders above the working directory (Graph.resolve)
                _add_names(modules, os.path.abspath(path)[:-3], path)
            if os.path.basename(path) == "__init__.py":
                _add_names(packages, os.path.dirname(path), path)
                if not os.path.isabs(path):
                    _add_names(packages, os.path.dirname(os.path.abspath(path)), path)
    return {**packages, **modules}


def _root_package(files: frozenset[str]) -> str | None:
    """The folder that holds every scanned file, when it is a package (its __init__.py is scanned)."""
    inits = [path for path in files if os.path.basename(path) == "__init__.py"]
    if not inits:
        return None
    root = os.path.dirname(min(inits, key=lambda path: path.count(os.sep)))
    if os.path.join(root, "__init__.py") not in files:
        return None
    if root and not all(path.startswith(root + os.sep) for path in files):
        return None
    if not root and any(os.path.isabs(path) or path.startswith("..") for path in files):
        return None
    return root


def _add_names(table: dict[tuple[str, str], str], stem: str, path: str) -> None:
    parts: list[str] = []
    folder = stem
    while True:
        table[(folder, ".".join(reversed(parts)))] = path
        parent, part = os.path.dirname(folder), os.path.basename(folder)
        if parent == folder or not part or "." in part:
            return
        parts.append(part)
        folder = parent


class Graph:
    """The scanned files' import and call graph (memoized resolution)."""

    def __init__(self, modules: dict[str, Module]) -> None:
        self.modules = modules
        self.files = frozenset(modules)
        self._resolved: dict[tuple[str, str, int], str | None] = {}
        self._imports: dict[str, tuple[str, ...]] = {}
        self._bindings: dict[str, dict[str, tuple[str, int, str | None]]] = {}
        self._functions: dict[str, dict[str, tuple[str, ...]]] = {}
        self._targets: dict[tuple[str, str | None, str], list[tuple[str, str]]] = {}
        self._located: dict[tuple[str, str], str | None] = {}
        if all(path == os.path.normpath(path) for path in self.files):  # as discover() lists them
            self._located.update(_importable(self.files))
            self._complete = True  # a pair not in _located finds no file
        else:
            self._complete = False
        self._folders: dict[str, str] = {}
        self._parents: dict[str, str] = {}
        # every name a module can be imported by: each folder of a scanned path, each file's stem
        self._names = frozenset(part[:-3] if part.endswith(".py") else part for path in self.files
                                for part in os.path.abspath(path).replace(os.sep, "/").split("/"))
        self._closures: dict[str, frozenset[str]] = {}
        self._by_last: dict[str, list[tuple[str, str | None, str]]] | None = None
        self._ancestors: dict[tuple[str, str], frozenset[tuple[str, str | None]]] = {}
        self._tops: dict[tuple[str, str], frozenset[str]] = {}
        self._edges: dict[tuple[str, str | None], list[tuple[str, str]]] = {}
        self._own: frozenset[str] | None = None
        self._root: str | None = None  # the names the code imports its root package by (_own_names)
        self._by_folder: dict[str, list[str]] | None = None  # folder -> its modules (star_modules), once asked
        # the folders some module adds to sys.path (kb/scan/syspaths.py): an absolute import may name a module there
        self._sys_paths = sorted({os.path.normpath(os.path.join(os.path.dirname(path), folder))
                                  for path, module in modules.items() for folder in module.layout.sys_paths})

    def resolve(self, importer: str, dotted: str, level: int) -> str | None:
        """The scanned file a module name means when imported from `importer` (memoized by the
        importer's folder: every file of a folder resolves a name alike)."""
        here = self._folders.get(importer)
        if here is None:
            here = self._folders[importer] = os.path.dirname(importer)
        key = (here, dotted, level)
        if key in self._resolved:
            return self._resolved[key]
        found = None
        if not level and dotted.split(".", 1)[0] not in self._names:
            # no scanned file or folder has that name: another distribution's module, or the root package
            # named as its clone's folder is named (`from sam.autoaugment import policies`)
            head, _, rest = dotted.partition(".")
            if head in self._own_names() and self._root is not None:
                found = self._module_file(self._root, rest)
            self._resolved[key] = found
            return found
        if level:
            base = here
            for _ in range(level - 1):
                base = os.path.dirname(base)
            found = self._module_file(base, dotted)
        else:
            base = here
            while True:  # the script's folder (sys.path[0]), then each folder above it (a package root)
                found = self._module_file(base, dotted)
                parent = self._parents.get(base)
                if parent is None:
                    parent = os.path.dirname(base)
                    if parent == base and not os.path.isabs(base):
                        # a scan of "." names its files from the working directory, whose own name and the
                        # folders above it are still package roots (`from examples.imagenet import dataset`
                        # run from the repository above examples/): the same files as a scan of its full path
                        parent = os.path.dirname(os.path.abspath(base or "."))
                    self._parents[base] = parent
                if found or parent == base:
                    break
                base = parent
            for folder in self._sys_paths if found is None else ():
                found = self._module_file(folder, dotted)
                if found:
                    break
        self._resolved[key] = found
        return found

    def _own_names(self) -> frozenset[str]:
        """The names the code base imports its own root package by, when the folder scanned is a package
        (it holds __init__.py): a repository whose root is a package imports itself by the name of the
        folder it is cloned to (`from sam.autoaugment import policies` in a checkout named otherwise). A
        name no scanned file or folder has counts when every import that goes below it names a module of
        the root (`torch` fails at its first `import torch.nn` or `from torch import nn`); `import sam`
        alone says nothing.
        Computed once, on the first import of a name no scanned file has."""
        if self._own is None:
            self._own = frozenset()
            root = self._root = _root_package(self.files)
            if root is not None:
                verdict: dict[str, bool] = {}
                for path in sorted(self.files):
                    for module, level, names in self.modules[path].layout.imports:
                        head, _, rest = module.partition(".")
                        if level or not module or head in self._names or not verdict.get(head, True):
                            continue
                        if rest:  # a module, or a folder of modules without __init__.py (a namespace package)
                            verdict[head] = self._module_file(root, rest) is not None or self._holds_files(root, rest)
                        elif names:  # from albert import modeling: each name a module of the root
                            verdict[head] = all(self._module_file(root, name) is not None for name in names)
                self._own = frozenset(head for head, ok in verdict.items() if ok)
        return self._own

    def _holds_files(self, base: str, dotted: str) -> bool:  # seed_rl's `seed_rl.common`: a folder, no __init__.py
        return any(path.startswith(f) for f in (os.path.normpath(os.path.join(base, *dotted.split("."))) + os.sep,) for path in self.files)

    def _module_file(self, base: str, dotted: str) -> str | None:
        key = (base, dotted)
        if key in self._located:
            return self._located[key]
        if self._complete:
            return None
        found = self._located[key] = _module_file(base, dotted, self.files)
        return found

    def imports(self, path: str) -> tuple[str, ...]:
        if path not in self._imports:
            out: list[str] = []
            for module, level, names in self.modules[path].layout.imports:
                pieces = module.split(".") if module else []
                for k in range(1, len(pieces) + 1):  # import a.b.c runs a/__init__.py and a/b/__init__.py first
                    target = self.resolve(path, ".".join(pieces[:k]), level)
                    if target:
                        out.append(target)
                if not pieces and level:
                    target = self.resolve(path, "", level)
                    if target:
                        out.append(target)
                for name in names:  # from pkg import submodule
                    if name in ("*", "**"):  # "**": import_module("pkg." + name), any module of pkg
                        out += self.star_modules(path, module, level) if name == "*" else self.folder_modules(path, module, level)
                        continue
                    sub = self.resolve(path, f"{module}.{name}" if module else name, level)
                    if sub:
                        out.append(sub)
            self._imports[path] = tuple(dict.fromkeys(out))
        return self._imports[path]

    def star_modules(self, importer: str, module: str, level: int) -> tuple[str, ...]:
        """The submodules `from module import *` in `importer` imports: when `module` is a package that sets
        `__all__`, Python imports each name of it the package does not bind itself as a submodule, so a literal
        `__all__` imports exactly the submodules it names, and one computed from a listing of the package's
        folder (`glob.glob(join(dirname(__file__), "*.py"))`) every module of that folder (Layout.star)."""
        package = self.resolve(importer, module, level)
        if package is None or os.path.basename(package) != "__init__.py":
            return ()
        layout = self.modules[package].layout
        if layout.star is None:
            return self.folder_modules(importer, module, level)
        if not layout.star:
            return ()
        bound = {local for local, *_ in layout.bindings} | {name for name, _ in layout.functions if "." not in name} \
            | {name for name, *_ in layout.class_bases}
        found = (self.resolve(importer, f"{module}.{name}" if module else name, level)
                 for name in layout.star if name not in bound)
        return tuple(path for path in found if path is not None)

    def folder_modules(self, importer: str, module: str, level: int) -> tuple[str, ...]:
        """Every module of the package `module` names (its folder's .py files but `__init__.py`), a regular package
        or a namespace one (a folder without `__init__.py`), found from the importer's folder and those above it."""
        if self._by_folder is None:
            self._by_folder = {}
            for path in sorted(self.files):
                if path.endswith(".py") and os.path.basename(path) != "__init__.py":
                    self._by_folder.setdefault(os.path.dirname(path), []).append(path)
        package = self.resolve(importer, module, level)
        if package is not None and os.path.basename(package) == "__init__.py":
            return tuple(self._by_folder.get(os.path.dirname(package), ()))
        if level:
            return ()
        base = os.path.dirname(importer)
        while True:
            found = self._by_folder.get(os.path.normpath(os.path.join(base, *module.split("."))))
            if found:
                return tuple(found)
            parent = os.path.dirname(base)
            if parent == base or not base:
                return ()
            base = parent

    def closure(self, start: str) -> frozenset[str]:
        """The files a run of `start` imports, itself included (transitively). Computed once for every
        file, a strongly connected group of files (imports that go round) at a time."""
        if not self._closures:
            self._closures = _closures(sorted(self.files), self.imports)
        return self._closures[start]

    def _funcs(self, path: str) -> dict[str, tuple[str, ...]]:
        if path not in self._functions:
            self._functions[path] = dict(self.modules[path].layout.functions)
        return self._functions[path]

    def _binds(self, path: str) -> dict[str, tuple[str, int, str | None]]:
        if path not in self._bindings:
            self._bindings[path] = {local: (module, level, attr)
                                    for local, module, level, attr in self.modules[path].layout.bindings}
        return self._bindings[path]

    def targets(self, path: str, caller: str | None, name: str) -> list[tuple[str, str]]:
        """(file, function) pairs a called dotted name may run (memoized: every run asks again)."""
        key = (path, caller, name)
        found = self._targets.get(key)
        if found is None:
            self._targets[key] = []  # a re-export that goes round ends here
            found = self._targets[key] = self._find(path, caller, name)
        return found

    def _callees(self, path: str, func: str | None) -> list[tuple[str, str]]:
        """What a function (None: the module's top level) calls, resolved once."""
        key = (path, func)
        found = self._edges.get(key)
        if found is None:
            names = self.modules[path].layout.top if func is None else self._funcs(path).get(func, ())
            found = self._edges[key] = [t for name in dict.fromkeys(names) for t in self.targets(path, func, name)]
        return found

    def _find(self, path: str, caller: str | None, name: str) -> list[tuple[str, str]]:
        funcs = self._funcs(path)
        parts = name.split(".")
        out: list[tuple[str, str]] = []
        if parts[0] == "self" and caller and len(parts) == 2:  # self.setup() in a method of the class
            owner = caller.rsplit(".", 1)[0] if "." in caller else None
            if owner and f"{owner}.{parts[1]}" in funcs:
                out.append((path, f"{owner}.{parts[1]}"))
            return out
        scopes = []
        if caller:
            pieces = caller.split(".")
            scopes = [".".join(pieces[:k]) + "." for k in range(len(pieces), 0, -1)]
        for prefix in [*scopes, ""]:
            qual = prefix + name
            if qual in funcs:
                out.append((path, qual))
                return out
            if qual + ".__init__" in funcs:
                out.append((path, qual + ".__init__"))
                return out
        bound = self._binds(path).get(parts[0])
        if bound is None:
            return out
        module, level, attr = bound
        rest = parts[1:]
        if attr is not None:
            sub = self.resolve(path, f"{module}.{attr}" if module else attr, level)
            if sub is None:
                target = self.resolve(path, module, level)
                if target is None:
                    return out
                rest = [attr, *rest]
            else:
                target = sub
        else:
            target = self.resolve(path, module, level)
            while target is None and rest:  # import a; a.b.f(): module a.b
                module = f"{module}.{rest[0]}"
                rest = rest[1:]
                target = self.resolve(path, module, level)
            if target is None:
                return out
            for k in range(len(rest) - 1, 0, -1):  # a.b.f() where a/b.py
                sub = self.resolve(path, ".".join([module, *rest[:k]]), level)
                if sub:
                    target, rest = sub, rest[k:]
                    break
        if not rest:
            return out
        qual = ".".join(rest)
        funcs = self._funcs(target)
        if qual in funcs:
            out.append((target, qual))
        elif qual + ".__init__" in funcs:
            out.append((target, qual + ".__init__"))
        elif target != path and rest[0] in self._binds(target):
            out += self.targets(target, None, qual)  # re-exported: `from .seed import set_seed` in utils/__init__.py
        return out

    def reaches(self, files: frozenset[str], entry: str, start: tuple[str, ...], node: tuple[str, str]) -> bool:
        """Whether a run that imports `files` and starts at `entry`'s names `start` calls the function
        `node` (path, qualified name): from the module level of a file it imports, or from a start name.
        Answered from the callers of `node` (computed once per node), not by walking every run's calls."""
        callers = self.ancestors(node)
        tops = self._tops.get(node)
        if tops is None:
            tops = self._tops[node] = frozenset(path for path, func in callers if func is None)
        if not tops.isdisjoint(files):
            return True
        return any(t == node or t in callers for name in start for t in self.targets(entry, None, name))

    def ancestors(self, node: tuple[str, str]) -> frozenset[tuple[str, str | None]]:
        """Every (path, function or None for the module level) from which `node` is called, directly or not."""
        found = self._ancestors.get(node)
        if found is None:
            seen: set[tuple[str, str | None]] = set()
            todo = self._callers_of(node)
            while todo:
                item = todo.pop()
                if item not in seen:
                    seen.add(item)
                    if item[1] is not None:
                        todo += self._callers_of(item)  # type: ignore[arg-type]
            found = self._ancestors[node] = frozenset(seen)
        return found

    def _callers_of(self, node: tuple[str, str]) -> list[tuple[str, str | None]]:
        """The module levels and functions that call `node` directly. Only a call whose name ends with the
        function's own name (or, for `__init__`, its class's) can mean it, so only those are resolved."""
        if self._by_last is None:
            index: dict[str, list[tuple[str, str | None, str]]] = {}
            for path in sorted(self.files):
                layout = self.modules[path].layout
                for func, names in ((None, layout.top), *layout.functions):
                    for name in dict.fromkeys(names):
                        index.setdefault(name.rsplit(".", 1)[-1], []).append((path, func, name))
            self._by_last = index
        parts = node[1].rsplit(".", 2)
        keys = {parts[-1]} | ({parts[-2]} if parts[-1] == "__init__" and len(parts) > 1 else set())
        out: list[tuple[str, str | None]] = []
        seen: set[tuple[str, str | None]] = set()  # what `out` holds (a list's `in` made this quadratic in the callers)
        for key in keys:
            for path, func, name in self._by_last.get(key, ()):
                if node in self.targets(path, func, name) and (path, func) not in seen:  # targets first: it memoizes
                    seen.add((path, func))
                    out.append((path, func))
        return out


def _closures(nodes: list[str], edges) -> dict[str, frozenset[str]]:
    """Node -> every node reachable from it, itself included: Tarjan's strongly connected components
    (iteratively), each component's closure built once from the closures of those it points to."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: dict[str, frozenset[str]] = {}
    counter = 0
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(edges(root)))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on.add(root)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on.add(child)
                    work.append((child, iter(edges(child))))
                    advanced = True
                    break
                if child in on:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                members = []
                while True:
                    item = stack.pop()
                    on.discard(item)
                    members.append(item)
                    if item == node:
                        break
                reach = set(members)
                for member in members:
                    for child in edges(member):
                        if child not in reach:
                            reach |= out[child] if child in out else {child}
                closed = frozenset(reach)
                for member in members:
                    out[member] = closed
    return out


PACKAGING_BYTES = 1_000_000


def _small_text(path: str) -> str:
    """A packaging file's text: "" unless it is a regular file (not a FIFO or device) of at most
    PACKAGING_BYTES bytes in UTF-8."""
    try:
        if not os.path.isfile(path) or os.path.getsize(path) > PACKAGING_BYTES:
            return ""
        with open(path, "rb") as handle:
            return handle.read(PACKAGING_BYTES + 1).decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return ""


def console_scripts(roots: list[str], files: frozenset[str]) -> list[tuple[str, str, str]]:
    """(file, function, script name) of the console scripts the scanned folders declare."""
    out = []
    for root in roots:
        if not os.path.isdir(root):
            continue
        scripts: dict[str, str] = {}
        pyproject = _small_text(os.path.join(root, "pyproject.toml"))
        if pyproject:
            try:
                table = tomllib.loads(pyproject).get("project", {}).get("scripts", {})
                if isinstance(table, dict):
                    scripts.update({k: v for k, v in table.items() if isinstance(v, str)})
            except (tomllib.TOMLDecodeError, AttributeError, RecursionError):
                pass
        parser = configparser.ConfigParser(interpolation=None)
        try:
            parser.read_string(_small_text(os.path.join(root, "setup.cfg")))
            text = parser.get("options.entry_points", "console_scripts", fallback="")
        except configparser.Error:
            text = ""
        for line in text.splitlines():
            name, _, target = line.partition("=")
            if target.strip():
                scripts[name.strip()] = target.strip()
        for name, target in scripts.items():
            module, _, func = target.partition(":")
            for base in (root, os.path.join(root, "src")):
                path = _module_file(os.path.normpath(base), module.strip(), files)
                if path:
                    out.append((path, func.strip().split(".")[0], name))
                    break
    return out


def runs(modules: dict[str, Module], named: set[str], roots: list[str],
         graph: Graph | None = None) -> tuple[list[Run], dict[str, tuple[int, ...]]]:
    """Every run and, per file, the indexes of the runs that execute it. `graph`: one already built over
    the same files (their Layouts are what it reads), with what it has resolved so far."""
    if graph is None or graph.files != frozenset(modules):
        graph = Graph(modules)
    entries: dict[str, tuple[str, tuple[str, ...]]] = {}
    for path, module in sorted(modules.items()):
        if module.layout.main:
            entries[path] = ("__main__ block", module.layout.in_main)
        elif path.endswith(".ipynb"):
            entries[path] = ("notebook", ())  # a notebook runs top to bottom
    for path, func, name in console_scripts(roots, graph.files):
        entries.setdefault(path, (f"console script {name}", (func,)))
    imported = {target for path in modules for target in graph.imports(path)}
    for path in sorted(named):
        if path in modules and path not in imported:
            entries.setdefault(path, ("named on the command line", modules[path].layout.in_main))
    for path, module in sorted(modules.items()):  # a script without a __main__ block (`python train.py`)
        if path not in imported and module.layout.scripted and not module.layout.main:
            entries.setdefault(path, (SCRIPT, ()))
    out: list[Run] = []
    reach: dict[str, list[int]] = {path: [] for path in sorted(modules)}  # emptied of unreached files at the end
    adders = {path: ids.append for path, ids in reach.items()}
    setting_files = frozenset(path for path, module in modules.items() if module.settings)

    def add(entry: str, why: str, start: tuple[str, ...], fallback: bool = False) -> None:
        files = graph.closure(entry)
        holds, unreached = [], []
        for path in sorted(files & setting_files):
            for setting in modules[path].settings:
                scope = setting.scope
                if scope is None or (scope == "__main__" and path == entry) \
                        or (scope != "__main__" and graph.reaches(files, entry, start, (path, scope))):
                    holds.append((path, setting))
                elif scope != "__main__":
                    unreached.append((path, setting))
        number = len(out)
        if fallback:  # a stray test file does not undo an entry point's switch
            for path in files:
                if path not in entered:
                    adders[path](number)
        else:
            # every file of every run (a million on a large repository): appended by C loops, not a Python one
            deque(map(call, map(adders.__getitem__, files), repeat(number)), maxlen=0)
        out.append(Run(entry, why, files, tuple(holds), tuple(unreached)))

    entered: set[str] = set()
    for entry, (why, start) in sorted(entries.items()):
        add(entry, why, start)
    entered.update(path for path, ids in reach.items() if ids)
    for path in sorted(modules):
        if not reach[path]:
            add(path, FALLBACK, (), fallback=True)
    return out, {path: tuple(ids) for path, ids in reach.items() if ids}


def single(modules: dict[str, Module]) -> bool:
    """True when no file sets anything: every run is the same, nothing to scope."""
    return not any(m.settings for m in modules.values())


__all__ = ["Run", "Graph", "runs", "console_scripts", "single", "Layout"]
