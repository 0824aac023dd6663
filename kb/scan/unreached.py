"""Code that no entry point of a script repository runs (RULES L1-1, R4 of the frozen corpora).

A repository that ships no installable package (no setup.py, setup.cfg or pyproject.toml where it is
scanned) runs only as far as its scripts reach: its entry points (kb/scan/scope.py) and what they import;
so does the code a repository's package does not hold (its `tools/` and script folders: the packages a
packaging file names, kb/scan/packaging.py). There, a file that no entry point runs (nothing imports it, and it has no `__main__` block or module-level
code), a class that no code names outside its own body (nothing builds it), a function that nothing names
outside its own body, and a method of a class without bases that no code names as an attribute (or a
string), or names only as `self.m` while no class that finds it is built (kb/scan/dispatch.py), never run: a record there is a note saying why. A library package keeps every finding (its users
run it); a test file is run by its test runner; a module at the top of the code base may be imported by its
users' own scripts and notebooks; a module a package's `__init__.py` (or a module a package holds) star-imports
re-exports every public name, while a plain script's star import re-exports only to scanned files, whose uses are read; a decorated class or function may be registered and called
by the decorator's table, and a class with bases may have its methods called by the base (a framework's
hook), so those keep theirs too (not under a data container's base, a PyTreeNode or a NamedTuple, which
calls none).
"""

from __future__ import annotations

import ast
import functools
import os
import re
from collections.abc import Callable

from kb.scan import configtargets, dispatch, ginconfigs, oldsyntax, packaging, retired, scope, sources
from kb.scan.nodes import iwalk
from kb.scan.syntax import Layout

ClassBases = tuple[str, int, bool, tuple[tuple[str, ...], ...], bool]  # Layout.class_bases: one class

MAX_FILES = 5000  # a larger code base is read once only: its findings keep the answer of reachable code
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ATTRIBUTE = re.compile(r"\.\s*([A-Za-z_][A-Za-z0-9_]*)|[\"']([A-Za-z_][A-Za-z0-9_]*)[\"']")


# A module whose own names are looked up at run time (`globals()[name]`, `sys.modules[...]`, subclasses found
# through `__subclasses__`, `eval`), or that another file reads with `getattr(module, name)`: any of them may
# run; and a code base that imports modules by a computed name may run any file.
_LOOKUP_WORDS = ("globals()", "sys.modules[", "__subclasses__")
# (a call: an unused `import importlib`, as TinyLlama's sft/finetune.py has, imports nothing)
DYNAMIC_IMPORTS = ("__import__", "import_module", "spec_from_file_location", "run_path", "run_module", "load_source",
                   "load_module", "SourceFileLoader")
_DYNAMIC_IMPORT_WORDS = tuple(f"{name}(" for name in DYNAMIC_IMPORTS)


def _called_bare(text: str, word: str) -> bool:
    """Whether `word(` is called as a plain name somewhere (`eval(`, not `model.eval(`): str.find's C speed, then
    one character read per occurrence (a look-behind regex tries every position of every file)."""
    at = text.find(word)
    while at >= 0:
        before = text[at - 1] if at else " "
        if before != "." and not before.isalnum() and before != "_":
            return True
        at = text.find(word, at + 1)
    return False


_APP_RUN = re.compile(r"^[ \t]*(?:tf\.(?:compat\.v1\.)?app|app)\.run\(\s*\)", re.M)


def _runs_main(text: str) -> int:
    """The line of a `tf.app.run()` (or `tf.compat.v1.app.run()`, `app.run()`) given no `main`: TensorFlow 1's and
    absl's runner call the `main` of the `__main__` module, a use of it no name shows; 0 when none."""
    found = _APP_RUN.search(text) if "app.run(" in text else None
    return text.count("\n", 0, found.start()) + 1 if found else 0


def _looks_up(text: str) -> bool:
    return any(word in text for word in _LOOKUP_WORDS) or _called_bare(text, "eval(") or _runs_code(text)


_EXEC_LITERAL = re.compile(r"""\s*[fFrRbB]{0,2}(['"])(.*?)(?<!\\)\1\s*\)""")


def _runs_code(text: str) -> bool:
    """A bare `exec(...)` that may import or define module names: any but one of a one-line string literal (or
    f-string) that names no import (pytorch-segmentation's `exec(f'self.block{i+4} = Block(...)')` sets an attribute)."""
    at = text.find("exec")
    while at >= 0:
        before = text[at - 1] if at else " "
        opened = _OPENS.match(text, at + 4)  # `exec(` or `exec (` (Coder-Yu/QRec's `exec (importStr)`)
        if opened is not None and before != "." and not before.isalnum() and before != "_":
            literal = _EXEC_LITERAL.match(text, opened.end())
            if literal is None or "import" in literal.group(2):
                return True
        at = text.find("exec", at + 1)
    return False


_OPENS = re.compile(r"[ \t]*\(")


def _enumerates(text: str) -> bool:
    """The code lists a module's names at run time (BicycleGAN's `for name, cls in modellib.__dict__.items()`): any
    class of a module imported by a computed name may be taken."""
    return "__dict__" in text or "getmembers" in text or _called_bare(text, "dir(") or _called_bare(text, "vars(")


def _imports_by_name(text: str) -> bool:
    return any(word in text for word in _DYNAMIC_IMPORT_WORDS) or _runs_code(text)
_GETATTR = re.compile(r"getattr\(\s*([A-Za-z_][A-Za-z0-9_.]*)\s*,")


def _looked_up(graph: scope.Graph, modules: dict, texts: dict[str, str]) -> set[str]:
    """The files whose names the code base may look up by a computed name (also every module of a package a program
    imports by a name built at run time, `import_module("pkg." + name)`: its classes are then taken by `getattr`)."""
    out = {path for path, text in texts.items() if _looks_up(text)}
    out.update(sub for path, m in modules.items() for module, level, names in m.layout.imports
               if "**" in names for sub in graph.folder_modules(path, module, level))
    for path, text in texts.items():
        if "getattr(" not in text:
            continue
        read = {name.split(".")[0] for name in _GETATTR.findall(text)}
        for local, module, level, attr in modules[path].layout.bindings:
            if local in read:
                target = graph.resolve(path, f"{module}.{attr}" if attr and module else attr or module, level)
                if target is not None:
                    out.add(target)
    return out


def script_repository(roots: list[str], modules: dict) -> bool:
    """Whether no scanned file lies in an installable package (kb/scan/packaging.py): the code base runs
    only as far as its scripts reach."""
    if not roots:
        return False
    held = packaging.held(roots, modules)
    return held is not None and not held


def script_files(roots: list[str], modules: dict) -> set[str]:
    """The scanned files no installable package holds (kb/scan/packaging.py): a script repository's code,
    or a packaged repository's tools and scripts outside its package; none for a single file, or where a
    packaging file's scope cannot be read."""
    if not roots:
        return set()
    held = packaging.held(roots, modules)
    return set() if held is None else set(modules) - held


def caller_files(roots: list[str], modules: dict, scripts: set[str]) -> set[str]:
    """The files whose functions and classes take the values their callers pass (kb/scan/callers.py): the
    script files, and the modules of a package that exports nothing (kb/scan/packaging.py's unexported) but
    its tests (a test runner calls their functions, with fixtures and parameters no code here shows)."""
    if not roots:
        return scripts
    return scripts | {p for p in packaging.unexported(modules) if p in scripts or not _test_file(p)}


def _test_file(path: str) -> bool:
    name = os.path.basename(path)
    parts = path.replace(os.sep, "/").split("/")
    return name.startswith("test") or name.endswith("_test.py") or name == "conftest.py" \
        or any(p in ("test", "tests", "testing") for p in parts[:-1])


# Framework bases that are data containers or typing markers: they call none of a subclass's own methods (a
# dataclass-like PyTreeNode's `replace` builds a copy; a NamedTuple, an ABC, a Generic or a Protocol runs no
# method of its own), so a method nothing names under them never runs either.
_HOOKLESS_BASES = frozenset({"abc.ABC", "typing.NamedTuple", "typing.Generic", "typing.Protocol",
                             "flax.struct.PyTreeNode"})


class _Ancestry:
    """Whether every ancestor of a class is a class of the code base itself (its bases, as written, resolve
    through the file's imports to module-level classes of scanned files, up to `object`): then no framework
    base can call the class's methods as hooks, and a method nothing names never runs. Read from each file's
    Layout (the survey of the first pass), not from its text parsed again."""

    def __init__(self, graph: scope.Graph, modules: dict) -> None:
        self.graph, self.modules = graph, modules
        self.classes: dict[str, dict[str, ClassBases]] = {}
        self.every: dict[tuple[str, str, int], ClassBases] = {}
        self.memo: dict[tuple[str, str, int], bool] = {}

    def _classes(self, path: str) -> dict[str, ClassBases]:
        if path not in self.classes:
            found = self.modules[path].layout.class_bases if path in self.modules and not path.endswith(".ipynb") \
                else ()
            self.classes[path] = {c[0]: c for c in found if c[4]}
            for c in found:
                self.every.setdefault((path, c[0], c[1]), c)
        return self.classes[path]

    def _hookless(self, path: str, base: tuple[str, ...]) -> bool:
        """Whether a base as written names, through the file's imports, one of _HOOKLESS_BASES."""
        for local, module, level, attr in self.modules[path].layout.bindings if base else ():
            if local == base[0] and not level:
                return ".".join((module, attr, *base[1:]) if attr else (module, *base[1:])) in _HOOKLESS_BASES
        return False

    def base(self, path: str, base: tuple[str, ...]) -> tuple[str, str] | None:
        """(file, class name) of a base as written, where it is a module-level class of a scanned file."""
        if len(base) > 2:
            return None  # `pkg.module.Base`: not read
        if len(base) == 1 and base[0] in self._classes(path):
            return path, base[0]
        head, name = (base[0], None) if len(base) == 1 else (base[0], base[1]) if base else (None, None)
        for local, module, level, attr in self.modules[path].layout.bindings if head else ():
            if local != head:
                continue
            if name is None and attr:  # `from m import Base`
                target, cls = self.graph.resolve(path, module, level) if module else None, attr
            elif name is not None:  # `import m as x` / `from pkg import m as x`, then `x.Base`
                target, cls = self.graph.resolve(path, f"{module}.{attr}" if attr and module else attr or module,
                                                 level), name
            else:
                return None
            return (target, cls) if target is not None and cls in self._classes(target) else None
        return None

    def own(self, path: str, name: str, line: int) -> bool:
        key = (path, name, line)
        if key in self.memo:
            return self.memo[key]
        self.memo[key] = False  # a cycle (or a class met again while it is read) is not known to be own
        self._classes(path)
        found = self.every.get(key)
        if found is None or found[2]:  # a metaclass may call anything
            return False
        for base in found[3]:
            if base == ("object",) or self._hookless(path, base):
                continue
            where = self.base(path, base)
            if where is None:
                return False
            target = self._classes(where[0])[where[1]]
            if not self.own(where[0], target[0], target[1]):
                return False
        self.memo[key] = True
        return True


def _spans(layout: Layout, own: Callable[[str, int], bool]) -> list[tuple[str, str, int, int, bool, str | None, int]]:
    """(kind, name, first line, last line, kept, owner class) of each class and function, outermost first:
    kind "class", "function" (module level or nested in a function) or "method"; kept: decorated (a table
    may call it), or a method of a class with a base outside the code base (the base may call it: a
    framework's hook), and the owner's line; `own(class name, line)`: every ancestor of the class is a class of the code base."""
    return [(kind, name, first, last, decorated or (based and owner is not None and not own(owner, owner_line)), owner,
             owner_line)
            for kind, name, first, last, decorated, owner, owner_line, based in layout.spans]


# One pass over a file's text, in the order Python's tokenizer reads it: a comment, a string literal (its prefix,
# quotes and body; a triple-quoted one across lines), a name (after a "." an attribute), a number.
_Q3S = r"'''[^'\\]*(?:(?:\\.|'(?!''))[^'\\]*)*'''"
_Q3D = r'"""[^"\\]*(?:(?:\\.|"(?!""))[^"\\]*)*"""'
_Q1S = r"'[^'\\\r\n]*(?:\\.[^'\\\r\n]*)*'"
_Q1D = r'"[^"\\\r\n]*(?:\\.[^"\\\r\n]*)*"'
# Groups: a line's end, a string literal with its prefix, the "." before a name, the name; a comment and a
# number match with every group empty. Each match first takes the run of characters no token starts with
# (spaces, operators, brackets) in one character-class loop, rather than re trying every alternative at every
# space of the indentation (twice as fast); the empty alternative last ends a run before a character that starts
# no token either (a lone "."), so the run is never given back and tried again (linear on any text).
_TOKENS = re.compile(rf"([^\w\n#'\".]*)(?:(\n)|#[^\r\n]*|((?<!\w)[rRbBuUfF]{{0,2}}(?:{_Q3S}|{_Q3D}|{_Q1S}|{_Q1D}))"
                     r"|((?<!\.\.)\.\s*)?((?!\d)\w+)([ \t]*=(?!=))?|\d[\w.]*|)", re.S)


_IMPORT = re.compile(r"^[ \t]*(?:from[ \t]+[\w.]+[ \t]+import[ \t]*(?:\([^)]*\)|(?:[^\\\n]|\\(?:.|\n))*)"
                     r"|import[ \t]+[^\n]*)", re.M)


_ALIASED = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s+as\s+[A-Za-z_]")


def _import_lines(text: str) -> dict[int, set[str]]:
    """The lines of a module's import statements (`from .pix2pix import init_net, \\` and its continued line): a
    name they bind is no use of it (ermongroup/ncsn's scorenet.py imports ResnetBlock for a class nothing builds), and
    outside a package's `__init__.py` no re-export either, unless another file takes it from there (a use there).
    Each line maps to the names it imports under another name (`from utils.ppo import train_ppo as train_fn`): the
    uses of the alias are uses of those, so their import stands for them."""
    out: dict[int, set[str]] = {}
    for found in _IMPORT.finditer(text) if "import" in text else ():
        first = text.count("\n", 0, found.start()) + 1
        statement = found.group()
        aliased = set(_ALIASED.findall(statement)) if " as " in statement else set()
        for line in range(first, first + statement.count("\n") + 1):
            out[line] = aliased
    return out


def _names(text: str, wanted: frozenset[str] | set[str]) -> list[tuple[str, int, bool]]:
    """(name, line, as an attribute or string) of every use of a wanted name in the code: its names (`.name` an
    attribute), the identifiers of its string literals with no space in them (a name looked up by a table, a
    dotted path) and every identifier of an f-string (its expressions); not comments, not prose (docstrings,
    messages), nor a name that `=` binds rather than reads: a keyword argument or parameter (`misc.imresize(img,
    size, interp="bicubic")` names no function `interp`) or a plain assignment's target. Read with one regular expression's list of matches rather than Python's tokenizer (a sixth of
    the time on a large code base); a text that would not tokenize (a notebook's magics) is read the same way."""
    out: list[tuple[str, int, bool]] = []
    line = 1
    for before, end, literal, dot, name, binds in _TOKENS.findall(text):
        if name:
            if dot:
                line += dot.count("\n")  # a "." at a line's end, inside brackets
            if name in wanted and not (binds and not dot and before.rstrip(" \t")[-1:] in ("", "(", ",")):
                out.append((name, line, bool(dot)))  # not `f(interp="bicubic")`, `def g(x, interp=1)`, `interp = 2`
        elif end:
            line += 1
        elif literal:
            if "f" in literal[:2].lower() or not any(c.isspace() for c in literal):
                for word in _WORD.finditer(literal):
                    if word.group() in wanted:
                        out.append((word.group(), line + literal.count("\n", 0, word.start()), True))
            line += literal.count("\n")
    return out


def unreached(roots: list[str], modules: dict, runs: list[scope.Run], reach: dict[str, tuple[int, ...]],
              texts: sources.Texts, graph: scope.Graph,
              never: dict[str, list[tuple[int, int, str]]] | None = None) -> dict[str, list[tuple[int, int, str]]]:
    """Path -> (first line, last line, why) of the code no entry point runs, in a script repository;
    {} elsewhere (a package, a single file, a scan with no entry point). `never`: path -> (first, last, why)
    of branches known never to run for other reasons (no value the callers pass takes them: kb/scan/callers.py;
    each module's blocks a constant test never takes, `if False:`): a name used only there is no use either (their own notes are the caller's to give)."""
    if len(modules) > MAX_FILES or not any(r.why != scope.FALLBACK for r in runs):
        return {}
    scripts = script_files(roots, modules)
    if not scripts:
        return {}
    ships = "the code base ships no package" if len(scripts) == len(modules) else \
        "no installable package of the code base holds this file"
    out: dict[str, list[tuple[int, int, str]]] = {}
    read = texts.every(modules)
    if read is None:
        return out  # a file not read again: its names unknown, so nothing is claimed unreached
    # the files another file star-imports, and the submodules a star import of a package imports (the names of
    # its `__all__`, every module of its folder when `__all__` is computed from it): re-exported as the importer's
    star_importers: dict[str, set[str]] = {}
    for path, m in modules.items():
        for module_name, level, names in m.layout.imports:
            if "*" in names:
                for target in (graph.resolve(path, module_name, level), *graph.star_modules(path, module_name, level)):
                    if target is not None:
                        star_importers.setdefault(target, set()).add(path)
    looked_up = _looked_up(graph, modules, read)
    # A star import re-exports every public name, to the importer's own users: an installable package's, who are
    # not scanned; a folder's `__init__.py`, whose names are that folder's API (kuangliu/pytorch-cifar's
    # `from .lenet import *`, a model picked by editing main.py); or code that looks the importer's names up at run
    # time. A plain script or module no package holds re-exports only to the scanned files, whose uses of each name
    # are read below (snap-stanford/GraphRNN's `from model import *` in main.py: a class nothing names never runs).
    starred = {path for path, importers in star_importers.items()
               if any(importer not in scripts or importer in looked_up or os.path.basename(importer) == "__init__.py"
                      for importer in importers)}
    imports_by_name = any(map(_imports_by_name, read.values()))
    enumerates = imports_by_name and any(map(_enumerates, read.values()))
    tops = {os.path.normpath(root) for root in roots}
    spanned: list[str] = []
    # only the files no entry point reaches can be run by a string alone: the others' names are not looked for
    unrun = [path for path in modules if path in scripts and not _test_file(path) and path not in starred
             and path not in looked_up and (ids := reach.get(path, ()))
             and all(runs[k].why == scope.FALLBACK for k in ids)]
    by_string, by_computed = _imported_by_strings(read, {path: _dotted(path, tops) for path in unrun}) \
        if imports_by_name else (set(), set())
    out_of_use: dict[str, str] = {} if imports_by_name else _out_of_use(
        [path for path in unrun if os.path.dirname(path) in tops or not os.path.dirname(path)], modules, runs, reach,
        read, graph)
    for path in modules:
        if path not in scripts or _test_file(path) or path in starred or path in looked_up:
            continue  # a test runner runs it; a star import re-exports every public name; a name looked up at run time
        ids = reach.get(path, ())
        if ids and all(runs[k].why == scope.FALLBACK for k in ids) and path not in by_string:
            top = os.path.dirname(path) in tops or not os.path.dirname(path)
            if top and (imports_by_name or path not in out_of_use):
                continue  # at the top: users' scripts and notebooks import it, and call what they like of it
            if imports_by_name:  # it may be imported by a computed name, and then runs as far as its names are
                if path not in by_computed and not enumerates:  # used (pointnet's `importlib.import_module(FLAGS.model)`:
                    spanned.append(path)  # tf_util's unused helpers); one a string names in part (`"training.misc." +
                continue  # name`) runs any, and so does any where the code base lists a module's names (`__dict__`)
            out[path] = [(1, 10 ** 9, f"no entry point of this code base runs this file (nothing imports it, it has "
                                      f"no __main__ block or module-level code, "
                                      f"{out_of_use[path] + ', ' if path in out_of_use else ''}and {ships})")]
        else:  # its spans (a notebook's too: its cells are one program): with calls of the KB, or naming code that has some
            spanned.append(path)
    ancestry = _Ancestry(graph, modules)
    dead: dict[str, list[tuple[int, int]]] = {path: [(1, 10 ** 9)] for path in out}  # files no entry point runs
    for path, branches in (never or {}).items():  # branches no caller's value takes
        dead.setdefault(path, []).extend((first, last) for first, last, _ in branches)
    for path, module in modules.items():  # blocks a constant test never takes (`if False:`)
        dead.setdefault(path, []).extend((first, last) for first, last, _ in module.never_taken)
    spans = [(path, span) for path in spanned
             for span in _spans(modules[path].layout, functools.partial(ancestry.own, path))
             if not span[1].startswith("__") and not span[4]]
    for path in (p for p in spanned if not p.endswith(".ipynb")):  # a function defined again below (a notebook's cells may run in any order)
        names = [name for kind, name, *_ in modules[path].layout.spans if kind == "function"]
        if len(names) != len(set(names)) and (tree := _tree(read[path])) is not None:
            for first, last, name, again in _shadowed(tree):
                dead.setdefault(path, []).append((first, last))
                out.setdefault(path, []).append((first, last, f"{name} is defined again at line {again} with only "
                                                 f"definitions between: that binding replaces this one before "
                                                 f"any code can call it"))
    wanted = {span[1] for _, span in spans}
    # Who can name a function, class or method of a file no package holds: the files no package holds, the
    # notebooks, and the files that import one of them (an installable package does not reach into its
    # repository's scripts otherwise); the others' names are not read.
    users = {path for path in modules if path in scripts or path.endswith(".ipynb")
             or any(graph.resolve(path, module_name, level) in scripts
                    for module_name, level, _ in modules[path].layout.imports)} if wanted else set()
    if users:  # and a package's file whose class a script subclasses: its methods call the script's overrides
        bases = {written[-1] for path in scripts for *_, bases_of, _ in (modules[path].layout.class_bases or ())
                 for written in bases_of if written}  # (tensorrec's base calls `self.create_layers(...)`)
        users |= {path for path, m in modules.items() if path not in users
                  and any(kind == "class" and name in bases for kind, name, *_ in m.layout.spans)}
    by_name: dict[str, list[tuple[str, int, bool]]] = {}  # name -> (path, line, as an attribute or string)
    for path in users:
        imports = _import_lines(read[path]) if os.path.basename(path) != "__init__.py" else {}
        for name, line, attr in _names(read[path], wanted):
            if line not in imports or name in imports[line]:  # `from .pix2pix import ResnetBlock` binds the name,
                by_name.setdefault(name, []).append((path, line, attr))  # only a use runs it (`X as Y`: Y's uses)
        if "main" in wanted and (line := _runs_main(read[path])):  # tf.app.run(): calls the module's main()
            by_name.setdefault("main", []).append((path, line, False))

    def live(path: str, line: int) -> bool:
        return not any(a <= line <= b for a, b in dead.get(path, ()))

    # Nothing imports a notebook: its names are used by its own cells only (unless a notebook runs another one)
    alone = not any(_runs_notebooks(read[p]) for p in modules if p.endswith(".ipynb"))

    # classes a configuration file builds by their dotted `target:` path (kb/scan/configtargets.py)
    configured = configtargets.built(roots, read, {(path, span[1]) for path, span in spans if span[0] == "class"})
    if any(ginconfigs.imports_gin(m.layout.imports) for m in modules.values()):  # and a gin file (kb/scan/ginconfigs.py)
        configured |= ginconfigs.Gin(roots).built({(path, span[1]) for path, span in spans if span[0] == "class"})
    classes = dispatch.Dispatch(modules, read, ancestry.base, configured)  # methods only `self.m()` names, on classes nothing builds
    changed = True
    while changed:  # a name used only inside code nothing runs is not used: chains of dead helpers, across files
        changed = False
        for path, (kind, name, first, last, _, owner, owner_line) in spans:
            if (first, last) in dead.get(path, ()):
                continue
            refs = by_name.get(name, ())
            if alone and path.endswith(".ipynb"):
                refs = [ref for ref in refs if ref[0] == path]
            unbuilt = None
            if kind == "method":
                used = any(attr and live(p, line) for p, line, attr in refs)
                if used and owner is not None and (unbuilt := classes.never(
                        path, owner, owner_line, name, lambda word: by_name.get(word, ()) if word in wanted else None, live)):
                    used = False
            else:
                used = (kind == "class" and (path, name) in configured) or \
                    any(live(p, line) and not (p == path and first <= line <= last) for p, line, _ in refs)
            if used:
                continue
            dead.setdefault(path, []).append((first, last))
            changed = True
            named = any(not (p == path and first <= line <= last) and (attr or kind != "method") for p, line, attr in refs)
            why = unbuilt or (f"nothing in this code base calls {owner}.{name} (no .{name} anywhere"
                            f"{' that runs' if named else ''})" if kind == "method" else
                            f"nothing in this code base {'builds' if kind == 'class' else 'calls'} {name} (its name "
                            f"appears {'only in code nothing runs' if named else 'nowhere outside it'})")
            out.setdefault(path, []).append((first, last, f"{why}, and {ships}"))
    return out


def _out_of_use(tops: list[str], modules: dict, runs: list[scope.Run], reach: dict[str, tuple[int, ...]],
                texts: dict[str, str], graph: scope.Graph) -> dict[str, str]:
    """Path -> why, of the modules at the top that no entry point runs and that the code base shows out of use
    (kb/scan/retired.py): only its import is commented out, or it is an older copy of a module the programs run.
    A module any scanned file imports, in any spelling its import graph resolves, is left out."""
    stems = {path: name for path in tops if not path.endswith(".ipynb") and (name := retired.stem(path))}
    if not stems:
        return {}
    imported = {graph.resolve(path, module_name, level) for path, m in modules.items()
                for module_name, level, _ in m.layout.imports}
    imported |= {graph.resolve(path, f"{module_name}.{name}" if module_name else name, level)
                 for path, m in modules.items() for module_name, level, names in m.layout.imports for name in names
                 if name in stems.values()}
    stems = {path: name for path, name in stems.items() if path not in imported}
    if not stems:
        return {}
    reached = {path for path, ids in reach.items() if any(runs[k].why != scope.FALLBACK for k in ids)}
    out = {path: "it is an older copy of a module the entry points run (each of its classes is defined again there)"
           for path in retired.superseded(list(stems), modules, reached)}
    out.update((path, "its only import in the code base is commented out")
               for path in retired.commented_out(stems, texts))
    return out


def _dotted(path: str, tops: set[str]) -> str | None:
    """The module name a package-qualified import gives a file below a scanned folder (`training/loss.py` is
    `training.loss`); None for a file at the top, a package's __init__.py, or a folder that is no identifier."""
    for top in tops:
        rel = os.path.relpath(path, top)
        parts = rel[:-3].split(os.sep) if rel.endswith(".py") else []
        if len(parts) >= 2 and parts[-1] != "__init__" and all(p.isidentifier() for p in parts):
            return ".".join(parts)
    return None


def _imported_by_strings(texts: dict[str, str], dotted: dict[str, str | None]) -> tuple[set[str], set[str]]:
    """The files a code base that imports modules by name (importlib) names only by whole dotted strings of one of
    their functions or classes (`"training.loss.D_logistic_simplegp"`, dnnlib's call_func_by_name): the names its
    strings and code hold say which of their definitions run. A file whose name a string holds otherwise (the
    module alone, `"training.loss." + name`, an f-string) may run any of its definitions, so it is left out, and
    returned second."""
    wanted = {name: path for path, name in dotted.items() if name}
    if not wanted:
        return set(), set()
    whole: set[str] = set()
    other: set[str] = set()
    for text in texts.values():
        if not any(name in text for name in wanted):
            continue
        for _, _, literal, _, _, _ in _TOKENS.findall(text):
            if not literal or not any(name in literal for name in wanted):
                continue
            body = literal.lstrip("rRbBuUfF").strip("'\"")
            head, _, last = body.rpartition(".")
            for name in wanted:
                if name not in body:
                    continue
                if head == name and last.isidentifier() and "f" not in literal[:2].lower():
                    whole.add(name)
                else:
                    other.add(name)
    return {wanted[name] for name in whole - other}, {wanted[name] for name in other}


def _shadowed(tree: ast.Module) -> list[tuple[int, int, str, int]]:
    """(first, last, name, line of the later one) of each module-level function defined again further down
    with only definitions, imports and constants between: the later binding replaces it before any code could
    call it (a decorator, a class body, a default or any other statement between may run it, so none is)."""
    out = []
    body = tree.body
    for i, node in enumerate(body):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or node.decorator_list:
            continue
        for later in body[i + 1:]:
            if isinstance(later, (ast.FunctionDef, ast.AsyncFunctionDef)) and not later.decorator_list:
                if later.name == node.name:
                    out.append((node.lineno, node.end_lineno or node.lineno, node.name, later.lineno))
                    break
                if any(isinstance(n, ast.Name) and n.id == node.name for n in iwalk(later.args)):
                    break  # a default that names it is evaluated now
            elif not isinstance(later, (ast.Import, ast.ImportFrom)) and not (
                    isinstance(later, (ast.Expr, ast.Assign)) and isinstance(later.value, ast.Constant)):
                break
    return out


def _tree(text: str) -> ast.Module | None:
    try:
        return oldsyntax.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _runs_notebooks(text: str) -> bool:
    """`%run other.ipynb` (as IPython rewrites it, or as written) or an import hook for notebooks."""
    return "%run" in text or "run_line_magic('run'" in text or "import_ipynb" in text


def why(spans: dict[str, list[tuple[int, int, str]]], path: str, line: int) -> str | None:
    for first, last, reason in spans.get(path, ()):
        if first <= line <= last:
            return reason
    return None
