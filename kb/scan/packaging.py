"""Which scanned files an installable package of the code base holds (RULES R4, L1-1, F2-1 and F3-1 of
the frozen corpora).

A packaging file (setup.py, setup.cfg, pyproject.toml) installs only the packages it names: setup.py's
`packages=` (a list, or `find_packages(where, exclude, include)`), `py_modules=` and `package_dir=`;
setup.cfg's `[options] packages` (a list, `find:` or `find_namespace:` with `[options.packages.find]`),
`package_dir` and `py_modules`; pyproject.toml's `[tool.setuptools] packages`, `packages.find`,
`package-dir` and `py-modules`. A setup.py that names none of them but builds an extension
(`ext_modules`, a Cython helper beside a model's code) installs no Python package. The code outside those
packages (a repository's `tools/`, `scripts/`, `examples/`, run as scripts) is a script repository's code:
it runs only as far as the entry points reach it, while the package's own code is run by its users.

Where a packaging file's scope cannot be read (a setup.py that computes its arguments, setuptools'
automatic discovery, another build backend), every file counts as held: the package's users may run
any of it, as before this module read scopes.
"""

from __future__ import annotations

import ast
import configparser
import fnmatch
import os
import tomllib
from collections.abc import Iterable

from kb.scan import oldsyntax, scope
from kb.scan.nodes import iwalk

PACKAGING = ("setup.py", "setup.cfg", "pyproject.toml")
SETUPTOOLS_KEYS = ("packages", "py_modules", "package_dir")


class Unknown(Exception):
    """The packaging file's scope cannot be read statically."""


def _literal(node: ast.expr, names: dict[str, ast.expr]) -> object:
    if isinstance(node, ast.Name) and node.id in names:
        node = names[node.id]
    if isinstance(node, ast.Call):
        func = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        if func in ("find_packages", "find_namespace_packages") and not any(k.arg is None for k in node.keywords):
            kwargs = {k.arg: _literal(k.value, names) for k in node.keywords if k.arg}
            for key, arg in zip(("where", "exclude", "include"), node.args):
                kwargs[key] = _literal(arg, names)
            return ("find", func == "find_namespace_packages", kwargs)
        raise Unknown
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
        raise Unknown from None


def _from_setup_py(text: str) -> tuple[dict[str, object], bool] | None:
    """setup()'s packages, py_modules and package_dir as read, and whether it builds an extension; None when
    it has no setup() call."""
    try:
        tree = oldsyntax.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        raise Unknown from None
    names: dict[str, ast.expr] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            names[node.targets[0].id] = node.value
    calls = [n for n in iwalk(tree) if isinstance(n, ast.Call)
             and (getattr(n.func, "id", None) == "setup" or getattr(n.func, "attr", None) == "setup")]
    if not calls:
        return None
    if len(calls) > 1 or any(k.arg is None for k in calls[0].keywords) or calls[0].args:
        raise Unknown  # several setups or a computed **kwargs
    kwargs = {k.arg: k.value for k in calls[0].keywords if k.arg}
    return {key: _literal(kwargs[key], names) for key in SETUPTOOLS_KEYS if key in kwargs}, \
        "ext_modules" in kwargs or "cmdclass" in kwargs


def _from_setup_cfg(text: str) -> dict[str, object]:
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text)
    except configparser.Error:
        raise Unknown from None
    out: dict[str, object] = {}
    if parser.has_option("options", "packages"):
        value = parser.get("options", "packages").strip()
        if value in ("find:", "find_namespace:"):
            find = {key: [v.strip() for v in parser.get("options.packages.find", key, fallback="").replace(",", "\n")
                          .splitlines() if v.strip()] for key in ("exclude", "include")}
            kwargs: dict[str, object] = {k: v for k, v in find.items() if v}
            kwargs["where"] = parser.get("options.packages.find", "where", fallback=".").strip() or "."
            out["packages"] = ("find", value == "find_namespace:", kwargs)
        elif value.startswith(("find", "attr:", "file:")):
            raise Unknown
        else:
            out["packages"] = [v.strip() for v in value.replace(",", "\n").splitlines() if v.strip()]
    if parser.has_option("options", "py_modules"):
        out["py_modules"] = [v.strip() for v in parser.get("options", "py_modules").replace(",", "\n").splitlines()
                             if v.strip()]
    if parser.has_option("options", "package_dir"):
        mapping: dict[str, str] = {}
        for line in parser.get("options", "package_dir").splitlines():
            key, sep, value = line.partition("=")
            if sep:
                mapping[key.strip()] = value.strip()
        out["package_dir"] = mapping
    return out


def _from_pyproject(text: str) -> tuple[dict[str, object], bool]:
    """[tool.setuptools]'s packages, py-modules and package-dir, and whether the file builds a package at all
    (a [project] or [build-system] table, or a build tool's own table)."""
    try:
        doc = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError):
        raise Unknown from None
    tool = doc.get("tool", {}) if isinstance(doc.get("tool"), dict) else {}
    builds = "project" in doc or "build-system" in doc or any(k in tool for k in ("poetry", "flit", "hatch", "pdm"))
    table = tool.get("setuptools", {})
    if not isinstance(table, dict):
        raise Unknown
    out: dict[str, object] = {}
    packages = table.get("packages")
    if isinstance(packages, dict) and isinstance(packages.get("find"), dict):
        find = packages["find"]
        where = find.get("where", ["."])
        kwargs = {"where": where[0] if isinstance(where, list) and len(where) == 1 else where,
                  "exclude": find.get("exclude", []), "include": find.get("include", ["*"])}
        out["packages"] = ("find", bool(find.get("namespaces", True)), kwargs)
    elif packages is not None:
        out["packages"] = packages
    for key, name in (("py_modules", "py-modules"), ("package_dir", "package-dir")):
        if name in table:
            out[key] = table[name]
    return out, builds


def _found(base: str, namespace: bool, kwargs: dict, folders: set[str]) -> set[str]:
    """The package folders find_packages (or find_namespace_packages) returns under base."""
    where, exclude, include = kwargs.get("where", "."), kwargs.get("exclude", ()), kwargs.get("include", ("*",))
    if not isinstance(where, str) or not all(isinstance(p, str) for p in (*exclude, *include)):
        raise Unknown
    top = os.path.normpath(os.path.join(base, where))
    out = set()
    for folder in folders:
        rel = os.path.relpath(folder, top)
        if rel == "." or rel.startswith(".."):
            continue
        chain = [os.path.join(top, *rel.split(os.sep)[:k]) for k in range(1, rel.count(os.sep) + 2)]
        if not namespace and not all(os.path.isfile(os.path.join(c, "__init__.py")) for c in chain):
            continue
        name = rel.replace(os.sep, ".")
        if any(fnmatch.fnmatchcase(name, p) for p in include) and not any(fnmatch.fnmatchcase(name, p) for p in exclude):
            out.add(folder)
    return out


def _held(base: str, spec: dict[str, object], folders: set[str]) -> tuple[set[str], set[str]]:
    """The folders and .py files (py_modules) a setup at base installs, and the folders it names in a list
    (they hold their subfolders too: setuptools wants subpackages listed, but a list that omits them is
    read as before scopes were read, held)."""
    mapping = spec.get("package_dir") or {}
    if not isinstance(mapping, dict) or not all(isinstance(v, str) for v in mapping.values()):
        raise Unknown
    root = os.path.normpath(os.path.join(base, mapping.get("", ".")))

    def folder_of(package: str) -> str:
        for key in sorted(mapping, key=len, reverse=True):
            if key and (package == key or package.startswith(key + ".")):
                rest = package[len(key) + 1:].split(".") if package != key else []
                return os.path.normpath(os.path.join(base, mapping[key], *rest))
        return os.path.normpath(os.path.join(root, *package.split(".")))

    out: set[str] = set()
    listed: set[str] = set()
    packages = spec.get("packages") or []
    if isinstance(packages, tuple) and packages and packages[0] == "find":
        _, namespace, kwargs = packages
        if not isinstance(kwargs, dict):
            raise Unknown
        out |= _found(base, bool(namespace), kwargs, folders)  # `where` is relative to the setup's folder
    elif isinstance(packages, list) and all(isinstance(p, str) for p in packages):
        listed |= {folder_of(p) for p in packages}
    else:
        raise Unknown
    modules = spec.get("py_modules") or []
    if not isinstance(modules, list) or not all(isinstance(m, str) for m in modules):
        raise Unknown
    out |= {folder_of(m) + ".py" for m in modules}
    return out, listed


def _scope_at(base: str, folders: set[str]) -> tuple[set[str], set[str]]:
    """What the packaging files of one folder install; Unknown when it cannot be read."""
    spec: dict[str, object] = {}
    builds, extension, setup_py = False, False, False
    pyproject = _text(os.path.join(base, "pyproject.toml"))
    if pyproject:
        found, builds = _from_pyproject(pyproject)
        spec.update(found)
    cfg = _text(os.path.join(base, "setup.cfg"))
    if cfg:
        spec.update(_from_setup_cfg(cfg))
    if os.path.isfile(os.path.join(base, "setup.py")):
        read = _from_setup_py(_text(os.path.join(base, "setup.py")))
        if read is None:
            raise Unknown
        setup_py, (found, extension) = True, read
        spec.update(found)
    if "packages" in spec or "py_modules" in spec:
        if "packages" in spec and spec["packages"] is None:
            raise Unknown
        return _held(base, spec, folders)
    if setup_py and extension:
        return set(), set()  # it builds an extension (a Cython helper) and installs no Python package
    if setup_py or builds or cfg:
        raise Unknown  # setuptools' automatic discovery, or another build backend: not read here
    return set(), set()  # a pyproject.toml of tool settings only (a formatter's): no package


def held(roots: Iterable[str], paths: Iterable[str]) -> set[str] | None:
    """The scanned paths that an installable package of the code base holds; None when a packaging file's
    scope cannot be read (every file then counts as held)."""
    paths = list(paths)
    absolute = {p: os.path.abspath(p) for p in paths}
    folders = {os.path.dirname(a) for a in absolute.values()}
    bases: set[str] = {os.path.dirname(a) for a in absolute.values() if os.path.basename(a) == "setup.py"}
    for root in roots:
        folder = os.path.abspath(root)
        while True:  # the folder and those above it, up to its repository's top: a subfolder of a package
            if any(os.path.isfile(os.path.join(folder, name)) for name in PACKAGING):
                bases.add(folder)
            parent = os.path.dirname(folder)
            if parent == folder or os.path.exists(os.path.join(folder, ".git")):
                break
            folder = parent
    installed: set[str] = set()
    listed: set[str] = set()
    try:
        for base in bases:
            exact, named = _scope_at(base, folders)
            installed |= exact
            listed |= named
    except Unknown:
        return None
    return {p for p, a in absolute.items() if a in installed or os.path.dirname(a) in installed
            or any(a.startswith(f + os.sep) for f in listed)}


def _text(path: str) -> str:
    """A packaging file's text: "" unless it is a regular file of at most scope.PACKAGING_BYTES bytes in UTF-8."""
    try:
        if not os.path.isfile(path) or os.path.getsize(path) > scope.PACKAGING_BYTES:
            return ""
        with open(path, "rb") as handle:
            return handle.read(scope.PACKAGING_BYTES + 1).decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return ""


def unexported(paths: Iterable[str]) -> set[str]:
    """The scanned modules of a package that exports nothing: every `__init__.py` from the module's folder up
    to the top of its package holds no import, definition or other statement beyond a docstring, `from
    __future__` and literal assignments (`__version__ = "1.0"`). Its classes and functions are no API the
    package offers (RULES L4-3, P4-2: the attributes of a class such a package reaches keep the values the
    package and its programs pass), so what its callers pass holds there even where a packaging file installs
    it (eriklindernoren/PyTorch-YOLOv3's `pytorchyolo/`, poetry-built, with empty `__init__.py` files)."""
    empty: dict[str, bool] = {}

    def quiet(folder: str) -> bool:
        """The folder and each package folder above it have an `__init__.py` that exports nothing."""
        if folder not in empty:
            init = os.path.join(folder, "__init__.py")
            text = _text(init) if os.path.isfile(init) else None
            if text is None or not text and os.path.getsize(init) > 0:  # none, or too big or unreadable
                empty[folder] = False
            else:
                empty[folder] = _exports_nothing(text)
                parent = os.path.dirname(folder)
                if empty[folder] and parent != folder and os.path.isfile(os.path.join(parent, "__init__.py")):
                    empty[folder] = quiet(parent)
        return empty[folder]

    return {p for p in paths if p.endswith(".py") and os.path.basename(p) != "__init__.py"
            and quiet(os.path.dirname(os.path.abspath(p)))}


def _exports_nothing(text: str) -> bool:
    if not text.strip():
        return True
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    for stmt in tree.body:
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            continue
        if isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__":
            continue
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None \
                and all(isinstance(n, (ast.Constant, ast.Tuple, ast.List, ast.Load)) for n in iwalk(stmt.value)):
            continue
        return False
    return True
