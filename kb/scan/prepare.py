"""Facts about a whole module that the walk needs before it starts: classes that subclass a known
one, what its top level seeds, the literal every call passes for a function's parameter, the
functions whose every call passes a registered buffer, the functions and classes torch.compile
compiles, and the modules of the same code base it imports (read with `ast`, never imported).

Each is computed once per module from the Survey (kb/scan/survey.py), so the walk
(kb/scan/visitor.py) answers from tables instead of searching the tree again at each call.
"""

from __future__ import annotations

import ast
import hashlib
import os
import re
import stat

from kb.scan import filedeps, graphreset, oldsyntax
from kb.scan.nodes import iwalk
from kb.scan.sources import MAX_BYTES
from kb.scan.survey import Survey
from kb.scan.syntax import NOT_LITERAL, Function, called, dotted_name, imported_name, plain_literal, public_name

_LOCAL_MODULES: dict[str, dict | None] = {}
_LOCAL_IMPORTS: dict[str, dict[str, str]] = {}  # path -> its absolute imports (local_imports)


def local_module(filename: str, dotted: str) -> dict | None:
    """Top-level functions and classes by name of the module `dotted` as a file of the same code base
    (next to `filename`, or under one of its parent folders), or None when no such file is there. Read
    with `ast` only, never imported; memoized per path. The tree is untrusted: only a regular file
    (not a symlink, FIFO or device) of at most kb.scan.sources.MAX_BYTES is opened."""
    path = _module_path(filename, dotted)
    if path is None:
        return None
    filedeps.saw("text", path, _digest(path))
    if path not in _LOCAL_MODULES:
        tree = _parsed(path)
        if tree is None:
            _LOCAL_MODULES[path] = None
        else:
            _LOCAL_MODULES[path] = {n.name: n for n in tree.body
                                    if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
            _LOCAL_IMPORTS[path] = _imports_of(tree)
    return _LOCAL_MODULES[path]


def local_imports(filename: str, dotted: str) -> dict[str, str]:
    """The absolute imports of the module `dotted` of the same code base (local name -> the dotted name it
    stands for), so that a base class spelt in that file can be named; empty when it cannot be read."""
    path = _module_path(filename, dotted)
    if path is None or local_module(filename, dotted) is None:
        return {}
    return _LOCAL_IMPORTS.get(path, {})


def sibling_function(tree: ast.Module, filename: str, name: str) -> tuple[ast.AST, dict] | None:
    """The function `name` stands for when the module imports it, at its top level, from a module in its own
    folder (`from .augmentations import apply`, `from helpers import apply`): (its def, that module's
    definitions); None for any other name (a module elsewhere in the package is not looked for)."""
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module and "." not in node.module and node.level <= 1:
            for alias in node.names:
                path = _module_path(filename, node.module) if (alias.asname or alias.name) == name else None
                if path is None or os.path.dirname(path) != os.path.dirname(os.path.abspath(filename)):
                    continue
                found = local_module(filename, node.module)
                if found is not None and isinstance(found.get(alias.name), (ast.FunctionDef, ast.AsyncFunctionDef)):
                    return found[alias.name], found
    return None


def _imports_of(tree: ast.Module) -> dict[str, str]:
    found: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.Import):
            for alias in node.names:
                found[alias.asname or alias.name.split(".")[0]] = alias.name if alias.asname else alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                found[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return found


_NOT_NEAR = ""  # _near_module's answer when no parent folder holds the module (an own-root import may)
_MODULE_PATHS: dict[tuple[str, str], str | None] = {}  # (folder as written, dotted) -> _near_module's answer


def _module_path(filename: str, dotted: str) -> str | None:
    """The file of the module `dotted` next to `filename` or under one of its parent folders, or below the
    importer's own top package (_under_own_root): a regular file small enough to read (None: none there, or a
    link, FIFO or device, never opened). The folder walk is memoized per folder for the scan
    (forget_local_files): the files of a folder import the same modules, and each walk costs up to four
    `lstat`s (NeMo: 10,900 look-ups, 49,000 `lstat`s). The own-root answer depends on the importer's text,
    so it is memoized per importer instead."""
    if not filename or not dotted or not all(part.isidentifier() for part in dotted.split(".")):
        return None
    key = (os.path.dirname(filename), dotted)
    if key not in _MODULE_PATHS:
        _MODULE_PATHS[key] = _near_module(filename, dotted)
    found = _MODULE_PATHS[key]
    answer = _under_own_root(filename, dotted) if found == _NOT_NEAR else found
    filedeps.saw("path", filename, dotted, answer)
    return answer


def _near_module(filename: str, dotted: str) -> str | None:
    folder = os.path.dirname(os.path.abspath(filename))
    for _ in range(4):
        path = os.path.join(folder, *dotted.split(".")) + ".py"
        try:
            info = os.lstat(path)
        except OSError:
            info = None
        if info is not None:
            if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_BYTES:
                return None  # a link, FIFO or device (untrusted tree: never opened), or too big to be read
            return path
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    return _NOT_NEAR


_OWN_ROOT: dict[tuple[str, str], str | None] = {}  # (importer, first name) -> the top package folder it names
_OWN_FILES: dict[str, bool] = {}  # a module file below an own root -> whether it is a regular file small enough to read


def _under_own_root(filename: str, dotted: str) -> str | None:
    """The module file `dotted` names when its first name is the importer's top package called by the name of
    the folder it is cloned to (`from sam.sam_jax.datasets import augmentation` in a checkout named otherwise,
    as kb/scan/scope.py's Graph reads it): the topmost folder above the importer that holds __init__.py, when
    every import of that first name in the importer's text names a module or package below it (`torch` fails
    at `import torch.nn`)."""
    head, _, rest = dotted.partition(".")
    if not rest:
        return None
    key = (filename, head)
    if key not in _OWN_ROOT:
        _OWN_ROOT[key] = _own_root(filename, head)
    top = _OWN_ROOT[key]
    if not top:
        return None
    path = os.path.join(top, *rest.split(".")) + ".py"
    if path not in _OWN_FILES:  # asked once per importer and module: the file is looked at once per scan
        _OWN_FILES[path] = os.path.isfile(path) and not os.path.islink(path) and os.path.getsize(path) <= MAX_BYTES
    return path if _OWN_FILES[path] else None


_TOPS: dict[str, str | None] = {}  # folder -> the topmost package folder above it (None: not a package's)
_IS_MODULE: dict[str, bool] = {}  # a module's path less .py -> whether a module or a package is there


def _own_root(filename: str, head: str) -> str | None:
    """The lookups of the folders and module files are one scan's (a large code base's files import the same
    modules from the same folders: tens of thousands of `stat`s, asked again for every importer)."""
    start = os.path.dirname(os.path.abspath(filename))
    if start not in _TOPS:
        folder, top = start, None
        while os.path.isfile(os.path.join(folder, "__init__.py")):
            top, folder = folder, os.path.dirname(folder)
            if top == folder:
                break
        _TOPS[start] = top
    top = _TOPS[start]
    if top is None:
        return None
    try:
        with open(filename, encoding="utf-8", errors="replace") as handle:
            text = handle.read(MAX_BYTES)
    except OSError:
        return None
    # each match lies on one line that names `head`: the patterns read only those lines (the same matches,
    # in the same order), not every line start of the file (a large code base's scan spent 0.3 s there)
    text = "\n".join(line for line in text.split("\n") if head in line)
    named = re.findall(rf"^[ \t]*(?:from|import)[ \t]+{re.escape(head)}\.([\w.]+)", text, re.MULTILINE)
    for names in re.findall(rf"^[ \t]*from[ \t]+{re.escape(head)}[ \t]+import[ \t]+([\w, \t]+)$", text, re.MULTILINE):
        named += [name.split()[0] for name in names.split(",") if name.strip()]  # from albert import modeling
    below = [os.path.join(top, *name.split(".")) for name in named]
    return top if below and all(map(_is_module, below)) else None


def _is_module(base: str) -> bool:
    """A module `base`.py or a package `base`/ is there (asked once per scan)."""
    if base not in _IS_MODULE:
        _IS_MODULE[base] = os.path.isfile(base + ".py") or os.path.isfile(os.path.join(base, "__init__.py"))
    return _IS_MODULE[base]


_LOCAL_TREES: dict[str, ast.Module | None] = {}
_LOCAL_TEXTS: dict[str, str] = {}  # path -> the text its tree in _LOCAL_TREES was parsed from


def _parsed(path: str) -> ast.Module | None:
    """The tree of a file of the code base that local_module or local_tree found (a regular file small enough
    to read), parsed once for both; None when it cannot be read or parsed."""
    if path not in _LOCAL_TREES:
        text = _text(path)
        try:
            _LOCAL_TREES[path] = oldsyntax.parse(text, filename=path) if text is not None else None
        except (SyntaxError, ValueError, RecursionError):
            _LOCAL_TREES[path] = None
        if _LOCAL_TREES[path] is not None:
            _LOCAL_TEXTS[path] = text  # type: ignore[assignment]
    return _LOCAL_TREES[path]


_READ_TEXTS: dict[str, str | None] = {}  # path -> the text _text read (None: unreadable), for this scan
_DIGESTS: dict[str, str] = {}  # path -> _digest's answer, for this scan


def _text(path: str) -> str | None:
    """The file's text as _parsed reads it (None when it cannot be read), read once per scan."""
    if path not in _READ_TEXTS:
        try:
            with open(path, encoding="utf-8") as handle:
                _READ_TEXTS[path] = handle.read()
        except (OSError, UnicodeDecodeError, ValueError):
            _READ_TEXTS[path] = None
    return _READ_TEXTS[path]


def _digest(path: str) -> str:
    """A digest of the text _parsed reads from `path` (empty when it cannot be read): what a cached reading of
    another file that looked into this one depends on (kb/scan/filedeps.py)."""
    found = _DIGESTS.get(path)
    if found is None:
        text = _text(path)
        found = _DIGESTS[path] = "" if text is None else \
            hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    return found


def still_holds(seen: tuple) -> bool:
    """Whether every look into other files that a cached reading of a file made (filedeps.watch) answers the
    same now: the same module file found for each import, the same text in each file read. Asked again through
    the same look-ups, so the answer is the one a fresh reading would get."""
    for item in seen:
        if not isinstance(item, tuple) or len(item) != (3 if item[:1] == ("text",) else 4) \
                or not all(isinstance(part, str) for part in item[:3]):
            return False  # not what filedeps records: a store written by other code
        kind = item[0]
        if kind == "path":
            if _module_path(item[1], item[2]) != item[3]:
                return False
        elif kind == "tree":
            if _tree_file(item[1], item[2]) != item[3]:
                return False
        elif kind == "text":
            if _digest(item[1]) != item[2]:
                return False
        else:
            return False
    return True


def forget_local_files() -> None:
    """Empty the memos of the code base's files (local_module, local_tree, parsed_before): they are one scan's.
    Kept past it, their trees (hundreds of a large code base's files, most of the objects the scan leaves) would
    answer a later scan with files as they were, and every collection of the cyclic garbage collector after the
    scan would walk them all (kb/scan/run.py's scan calls this when it starts and when it ends)."""
    _MODULE_PATHS.clear()
    _OWN_ROOT.clear()
    _OWN_FILES.clear()
    _TOPS.clear()
    _IS_MODULE.clear()
    _LOCAL_MODULES.clear()
    _LOCAL_IMPORTS.clear()
    _LOCAL_TREES.clear()
    _LOCAL_TEXTS.clear()
    _READ_TEXTS.clear()
    _DIGESTS.clear()


def parsed_before(path: str, text: str) -> ast.Module | None:
    """The tree local_module or local_tree already made of the file at `path`, when it was parsed from exactly
    `text` (the same text makes the same tree: nothing changes a tree once parsed), else None. The scan's own
    reading of that file (kb/scan/resolve.py) and the cross-file pass that reads files again
    (kb/scan/hostcode.py) then parse it once, not twice: a large code base imports hundreds of its own files."""
    key = os.path.abspath(path)
    tree = _LOCAL_TREES.get(key)
    return tree if tree is not None and _LOCAL_TEXTS.get(key) == text else None


def local_tree(filename: str, dotted: str) -> tuple[str, ast.Module] | None:
    """The path and tree of the module `dotted` of the same code base (a file `a/b.py` or a package's
    `a/b/__init__.py`, next to `filename` or under one of its parent folders), found and opened as
    local_module opens its files; None when no such file is there or it cannot be read."""
    path = _tree_file(filename, dotted)
    filedeps.saw("tree", filename, dotted, path)
    if path is None:
        return None
    filedeps.saw("text", path, _digest(path))
    tree = _parsed(path)
    return (path, tree) if tree is not None else None


def _tree_file(filename: str, dotted: str) -> str | None:
    if not filename or not dotted or not all(part.isidentifier() for part in dotted.split(".")):
        return None
    folder = os.path.dirname(os.path.abspath(filename))
    for _ in range(4):
        for path in (os.path.join(folder, *dotted.split(".")) + ".py",
                     os.path.join(folder, *dotted.split("."), "__init__.py")):
            try:
                info = os.lstat(path)
            except OSError:
                continue
            if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_BYTES:
                return None  # a link, FIFO or device (untrusted tree: never opened), or too big to be read
            return path
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    return None


def subclasses(classes: list, aliases: dict[str, str], wanted: frozenset[str]) -> dict[str, str]:
    """Classes of the module that subclass a KB-known class (`class MyConv(nn.Conv1d)`): their
    calls are that class's calls (name -> the KB name)."""
    found: dict[str, str] = {}
    for node in classes:
        for base in node.bases:
            written = called(base)
            if written is None:
                continue
            first, _, rest = written.partition(".")
            root = aliases.get(first) or found.get(first)
            if root is None:
                continue
            name = f"{root}.{rest}" if rest else root
            name = name if name in wanted else public_name(name, wanted)
            if name in wanted:
                found[node.name] = name
                break
    return found


def value_aliases(found: Survey, aliases: dict[str, str], wanted: frozenset[str]) -> dict[str, str]:
    """Plain names bound once in the module, to a recorded function (`loss_fn = F.cross_entropy`), and
    called in it: name -> the KB name. The calls `loss_fn(out, y)` are then read as the function's
    calls with their arguments, as an import alias is. A name also bound otherwise (a parameter,
    another assignment, a def or a class) is left alone: it may hold something else there."""
    candidates: dict[str, str] = {}
    for assign in found.assigns:  # first the few `name = <recorded function>`: most modules have none
        target, value = assign.targets[0], assign.value
        if len(assign.targets) == 1 and isinstance(target, ast.Name) and isinstance(value, (ast.Attribute, ast.Name)):
            full = dotted_name(value, aliases)
            if full is not None:
                full = full if full in wanted else public_name(full, wanted)
                if full in wanted and not full.startswith("torch.backends."):
                    candidates[target.id] = full
    if not candidates:
        return {}
    bound: dict[str, int] = dict.fromkeys(candidates, 0)
    for assign in found.assigns:
        for target in assign.targets:
            for node in (target.elts if isinstance(target, (ast.Tuple, ast.List)) else (target,)):
                if isinstance(node, ast.Name) and node.id in bound:
                    bound[node.id] += 1
    for fn in found.functions:
        arguments = fn.args
        for arg in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs, arguments.vararg, arguments.kwarg):
            if arg is not None and arg.arg in bound:
                bound[arg.arg] += 1
        if fn.name in bound:
            bound[fn.name] += 1
    for cls in found.classes:
        if cls.name in bound:
            bound[cls.name] += 1
    called = {c.func.id for c in found.calls if isinstance(c.func, ast.Name)}
    return {name: full for name, full in candidates.items()
            if bound[name] == 1 and name in called and name not in aliases}


TF_SET_SEED = frozenset({"tf.random.set_seed", "tf.compat.v1.set_random_seed", "tf.set_random_seed"})


def tf_global_seed(tree: ast.Module, aliases: dict[str, str]) -> str:
    """Why TensorFlow's random ops of this module are seeded, when its top level (not under an `if`
    or in a function) calls `tf.random.set_seed(<int>)`: an op without a seed then takes one derived from
    the global seed, so the same sequence every run (tf.random.set_seed's documentation)."""
    for stmt in tree.body:
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and stmt.value.args:
            name = dotted_name(stmt.value.func, aliases)
            value = plain_literal(stmt.value.args[0])
            if name in TF_SET_SEED and isinstance(value, int) and not isinstance(value, bool) \
                    and graphreset.reset_after(tree, aliases, stmt.lineno) is None:  # a later reset drops it
                return f"the module sets tf.random.set_seed({value}) at line {stmt.lineno}: ops without a seed follow it"
    return ""


def _within(node: ast.expr, outer: ast.stmt) -> bool:
    return (outer.lineno, outer.col_offset) <= (node.lineno, node.col_offset) \
        and (node.end_lineno or node.lineno, node.end_col_offset or 0) <= (outer.end_lineno or outer.lineno, outer.end_col_offset or 0)


def _registered_buffers(calls: list[ast.Call]) -> frozenset[str]:
    """Names a class registers with `self.register_buffer("X", ...)` or through a local alias of it
    (`register_buffer = lambda name, val: self.register_buffer(name, ...)`), called with a literal name."""
    return frozenset(sub.args[0].value for sub in calls
                     if sub.args and isinstance(sub.args[0], ast.Constant) and isinstance(sub.args[0].value, str)
                     and ((isinstance(sub.func, ast.Attribute) and sub.func.attr == "register_buffer")
                          or (isinstance(sub.func, ast.Name) and sub.func.id == "register_buffer")))


def buffer_parameters(found: Survey, defs: dict[str, Function],
                      aliases: dict[str, str] | None = None) -> dict[str, frozenset[str]]:
    """Module-level function -> its positional parameters that every call of it in this module passes
    a registered buffer of the calling class (`extract(self.alphas_cumprod, t, x.shape)`), or what torch
    functions, tensor methods and arithmetic make of buffers and constants (`1. / self.coef1`,
    `torch.log(torch.cat([self.var[1:2], self.betas[1:]]))`, through a local name: `_of_buffers`): buffers
    do not require grad, so no backward runs into them. A call from outside a class, with *args, or
    passing anything else for a parameter rules that parameter out; calls from other modules are not
    seen (a function called nowhere here gets nothing). Read from the Survey's calls and classes."""
    if not defs:
        return {}
    seen: dict[str, dict[str, bool]] = {}
    inside: set[int] = set()
    for cls in found.classes:
        calls = [c for c in found.calls if _within(c, cls)]
        buffers = _registered_buffers(calls)
        for sub in calls:
            if not (isinstance(sub.func, ast.Name) and sub.func.id in defs):
                continue
            inside.add(id(sub))
            method = next((m for m in cls.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))
                           and _within(sub, m)), None)
            fn = defs[sub.func.id]
            names = [a.arg for a in (*fn.args.posonlyargs, *fn.args.args)]
            verdict = seen.setdefault(sub.func.id, {n: True for n in names})
            starred = any(isinstance(a, ast.Starred) for a in sub.args) or any(k.arg is None for k in sub.keywords)
            given = dict(zip(names, sub.args))
            given.update({k.arg: k.value for k in sub.keywords if k.arg})
            for n in names:
                value = given.get(n)
                verdict[n] = verdict[n] and not starred and value is not None \
                    and _of_buffers(value, buffers, method, aliases or {}, 8)
    for sub in found.calls:  # a call from module level or a plain function: nothing known there
        if isinstance(sub.func, ast.Name) and sub.func.id in seen and id(sub) not in inside:
            seen[sub.func.id] = {n: False for n in seen[sub.func.id]}
    return {name: frozenset(n for n, ok in v.items() if ok) for name, v in seen.items() if any(v.values())}


def _of_buffers(value: ast.expr, buffers: frozenset[str], method: ast.AST | None, aliases: dict[str, str],
                depth: int) -> bool:
    """Whether `value`, in `method`, is made of registered buffers (`self.X`) and constants only: through
    arithmetic, slices, literal lists, tuples and dicts (`{...}[key]`), torch functions and tensor methods
    (none of which makes a gradient of such inputs unless asked with `requires_grad`), and a local name every
    binding of which (plain assignments only) is such a value."""
    if depth <= 0:
        return False
    if isinstance(value, ast.Constant):
        return True
    if isinstance(value, ast.Attribute):
        return isinstance(value.value, ast.Name) and value.value.id == "self" and value.attr in buffers
    parts: list[ast.expr | None]
    if isinstance(value, ast.BinOp):
        parts = [value.left, value.right]
    elif isinstance(value, ast.UnaryOp):
        parts = [value.operand]
    elif isinstance(value, ast.Subscript):
        parts = [value.value]  # an index picks elements: it carries no gradient into them
    elif isinstance(value, (ast.List, ast.Tuple)):
        parts = list(value.elts)
    elif isinstance(value, ast.Dict):
        parts = list(value.values)
    elif isinstance(value, ast.Call):
        if any(k.arg in (None, "requires_grad") for k in value.keywords) \
                or any(isinstance(a, ast.Starred) for a in value.args):
            return False
        func = value.func
        name = dotted_name(func, aliases)
        if name is not None and name.startswith("torch.") and name.rsplit(".", 1)[-1][:1].islower() \
                and name not in ("torch.nn.Parameter", "torch.autograd.Variable"):
            parts = []
        elif isinstance(func, ast.Attribute) and not func.attr.endswith("_") and not func.attr.startswith("_"):
            parts = [func.value]  # a tensor method of such a tensor
        else:
            return False
        parts += [*value.args, *(k.value for k in value.keywords)]
    elif isinstance(value, ast.Name) and isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)):
        stores = [n for n in iwalk(method) if isinstance(n, ast.Name) and n.id == value.id and isinstance(n.ctx, ast.Store)]
        assigns = [a for a in iwalk(method) if isinstance(a, ast.Assign) and len(a.targets) == 1
                   and isinstance(a.targets[0], ast.Name) and a.targets[0].id == value.id]
        if not assigns or len(assigns) != len(stores):
            return False  # a parameter, a loop or `with` target, a tuple or augmented assignment: not read here
        loops = [n for n in iwalk(method) if isinstance(n, (ast.For, ast.AsyncFor, ast.While))]
        # `x = extract(x, t, ...)` outside a loop: the read is of x's earlier binding, not of this one
        parts = [a.value for a in assigns if not (any(n is value for n in iwalk(a.value))
                                                  and not any(_within(a.value, loop) for loop in loops))]
        if not parts:
            return False
    else:
        return False
    return all(p is not None and _of_buffers(p, buffers, method, aliases, depth - 1) for p in parts)


def literal_parameters(all_calls: list, defs: dict[str, Function]) -> dict[str, dict[str, object]]:
    """Module-level function -> parameter -> its value, where every call of the function in this
    module passes that parameter as the same literal (or leaves it at a literal default) and no
    call passes *args or **kwargs. Calls from other modules are not seen."""
    seen: dict[str, list[ast.Call]] = {}
    for node in all_calls:
        if isinstance(node.func, ast.Name) and node.func.id in defs:
            seen.setdefault(node.func.id, []).append(node)
    out: dict[str, dict[str, object]] = {}
    for name, calls in seen.items():
        fn = defs[name]
        args = fn.args
        if args.vararg or args.kwarg or args.posonlyargs:
            continue
        names = [a.arg for a in args.args]
        defaults = dict(zip(names[len(names) - len(args.defaults):], args.defaults))
        defaults.update({a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None})
        values: dict[str, set] = {}
        blocked: set[str] = set()
        for call in calls:
            if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
                blocked.update(names)
                break
            given = dict(zip(names, call.args))
            given.update({k.arg: k.value for k in call.keywords if k.arg})
            for param in [*names, *(a.arg for a in args.kwonlyargs)]:
                node = given.get(param, defaults.get(param))
                value = plain_literal(node) if node is not None else NOT_LITERAL
                if value is NOT_LITERAL:
                    blocked.add(param)
                else:
                    values.setdefault(param, set()).add((type(value).__name__, value))
        known = {p: next(iter(v))[1] for p, v in values.items() if p not in blocked and len(v) == 1}
        if known:
            out[name] = known
    return out


_COMPILE = frozenset({"torch.compile"})


def compiled_scopes(found_in: Survey, aliases: dict[str, str], text: str) -> frozenset[str]:
    """Functions and classes of the module that run compiled: `@torch.compile` (with or without
    arguments), `torch.compile(f)` of a function defined here, `torch.compile(model)` / `model.compile()`
    where `model = Net(...)` and Net is a class defined here."""
    if "compile" not in text:
        return frozenset()

    defined: set[str] = set()
    classes: set[str] = set()
    made: dict[str, str] = {}  # variable -> class defined here that made it
    found: set[str] = set()
    for fn in found_in.functions:
        defined.add(fn.name)
        for d in fn.decorator_list:
            target = d.func if isinstance(d, ast.Call) else d
            if imported_name(target, aliases) in _COMPILE:
                found.add(fn.name)
    classes.update(cls.name for cls in found_in.classes)
    for assign in found_in.assigns:
        if isinstance(assign.value, ast.Call) and isinstance(assign.value.func, ast.Name) and assign.value.func.id in classes:
            for t in assign.targets:
                key = t.id if isinstance(t, ast.Name) else (t.attr if isinstance(t, ast.Attribute) else None)
                if key:
                    made[key] = assign.value.func.id
    for call in found_in.calls:
        subject = None
        if imported_name(call.func, aliases) in _COMPILE and call.args:
            subject = call.args[0]
        elif isinstance(call.func, ast.Attribute) and call.func.attr == "compile" and not call.args:
            subject = call.func.value  # nn.Module.compile()
        if isinstance(subject, ast.Call) and isinstance(subject.func, ast.Name) and subject.func.id in classes:
            found.add(subject.func.id)  # torch.compile(Net(...))
            continue
        key = subject.id if isinstance(subject, ast.Name) else (subject.attr if isinstance(subject, ast.Attribute) else None)
        if key in defined:
            found.add(key)
        elif key in made:
            found.add(made[key])
    return frozenset(found)
