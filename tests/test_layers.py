"""Imports inside kb/ and verifiers/ run one way: base -> load -> compile -> outputs -> commands
(docs/architecture.md).

Read from the source with `ast` (nothing is imported), every `import` counts, including the
ones inside functions: a lazy import still ties the two modules together. Importing `kb.a.b`
also runs the package `kb.a`, so that is an edge too; the root package `kb` (the stdlib-only
public API) is the one exception, since every module loads it. A new module fails
`test_every_module_has_a_layer` until it is given a layer in kb/layers.py.
"""

from __future__ import annotations

import ast
import hashlib
import json
import shutil
from pathlib import Path

import pytest
import shared

from kb.layers import LAYER_NAMES, PACKAGES, PLACED, modules, pattern_layer

ROOT = Path(__file__).resolve().parents[1]

# The table itself is kb/layers.py's LAYERS (docs/architecture.md's module map is generated from it).
# The generated index modules are private to the package that loads them (kb/query/state.py).
PRIVATE_READERS = {"kb._index": ("kb.query.state",), "kb._details": ("kb.query.state",), "kb._seen": ("kb.query.state",)}


def _is_package(path: Path) -> bool:
    return path.name == "__init__.py"


def _known(name: str, mods: dict[str, Path]) -> str | None:
    """The longest prefix of a dotted name that is a module of kb/."""
    while name and name not in mods:
        name = name.rpartition(".")[0]
    return name or None


_FACTS: dict[str, tuple[list, list]] = {}


def _facts(path: Path) -> tuple[list, list]:
    """What the checks read of a file, in `ast.walk` order: its imports, as ("import", line,
    [(name, asname)]) or ("from", line, module, level, [(name, asname)]), and each `x._y` as
    (line, "x", "_y"). Found once per text in a run (tests/shared.py, for every worker): the
    planted tests change one file of a copy of kb/, every other file is a text already read,
    and one of them (the generated kb/_details.py) is 600,000 syntax nodes to walk."""
    text = path.read_text(encoding="utf-8")
    found = _FACTS.get(text)
    if found is None:
        digest = hashlib.sha256(text.encode()).hexdigest()[:32]

        def make(folder: Path) -> None:
            (folder / "facts.json").write_text(json.dumps(_read_facts(text, path)))

        imports_, attributes = json.loads((shared.once(f"layers-{digest}", make) / "facts.json").read_text())
        found = _FACTS[text] = (imports_, attributes)
    return found


def _read_facts(text: str, path: Path) -> tuple[list, list]:
    imports_: list = []
    attributes: list = []
    for node in ast.walk(ast.parse(text, str(path))):
        if isinstance(node, ast.Import):
            imports_.append(("import", node.lineno, [(a.name, a.asname) for a in node.names]))
        elif isinstance(node, ast.ImportFrom):
            imports_.append(("from", node.lineno, node.module, node.level, [(a.name, a.asname) for a in node.names]))
        elif (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                and node.attr.startswith("_") and not node.attr.startswith("__")):
            attributes.append((node.lineno, node.value.id, node.attr))
    return imports_, attributes


def imports(name: str, path: Path, mods: dict[str, Path]) -> list[tuple[int, str, str]]:
    """(line, imported module, the name imported) for every import of a kb module in one file."""
    package = name if _is_package(path) else name.rpartition(".")[0]
    out = []
    for fact in _facts(path)[0]:
        if fact[0] == "import":
            _, lineno, names = fact
            for alias, _as in names:
                if alias.split(".")[0] in PACKAGES:
                    out.append((lineno, _known(alias, mods) or alias, alias))
        else:
            _, lineno, module, level, names = fact
            base = module or ""
            if level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            if base.split(".")[0] not in PACKAGES:
                continue
            for alias, _as in names:
                full = f"{base}.{alias}"
                out.append((lineno, full if full in mods else (_known(base, mods) or base), full))
    return out


def private_uses(name: str, path: Path, mods: dict[str, Path]) -> list[tuple[int, str]]:
    """(line, `kb.x._y`) for each `x._y` where `x` names a kb module imported into this file."""
    package = name if _is_package(path) else name.rpartition(".")[0]
    found_imports, attributes = _facts(path)
    bound: dict[str, str] = {}
    for fact in found_imports:
        if fact[0] == "import":
            for alias, asname in fact[2]:
                if alias in mods and asname:
                    bound[asname] = alias
        elif fact[2] and fact[2].split(".")[0] in PACKAGES:
            for alias, asname in fact[4]:
                if f"{fact[2]}.{alias}" in mods:
                    bound[asname or alias] = f"{fact[2]}.{alias}"
    out = []
    for lineno, value, attr in attributes:
        if value in bound:
            module = bound[value]
            if module.rpartition(".")[0] != package and module != name:
                out.append((lineno, f"{module}.{attr}"))
    return out


def layer_of(name: str, path: Path, mods: dict[str, Path]) -> int | None:
    found = pattern_layer(name)
    if found is not None:
        return found
    if _is_package(path) and not imports(name, path, mods):
        return 0  # a namespace package: loading it loads nothing else
    return None


def graph(root: Path) -> tuple[dict[str, Path], dict[str, dict[str, int]], list[str]]:
    """(modules, {module: {imported module: first line}}, private-name problems)."""
    mods = modules(root)
    edges: dict[str, dict[str, int]] = {}
    private = []
    for name, path in mods.items():
        package = name if _is_package(path) else name.rpartition(".")[0]
        out = edges.setdefault(name, {})
        for line, target, full in imports(name, path, mods):
            parts = full.split(".")
            # Loading kb.a.b runs kb.a first: an edge to every package on the way (not the root).
            # A package the importer is inside of is already loading, so it adds nothing.
            for depth in range(2, len(parts) + 1):
                step = ".".join(parts[:depth])
                if step in mods and step != name and not name.startswith(step + "."):
                    out.setdefault(step, line)
            if target != name:
                out.setdefault(target, line)
            for depth, part in enumerate(parts):
                if part.startswith("_") and not part.startswith("__"):
                    owner = ".".join(parts[:depth])
                    if owner != package and owner != name and name not in PRIVATE_READERS.get(".".join(parts[:depth + 1]), ()):
                        private.append(f"{path.relative_to(root)}:{line}: imports the private name {full}")
                    break
        for line, full in private_uses(name, path, mods):
            private.append(f"{path.relative_to(root)}:{line}: uses the private name {full}")
    return mods, edges, private


def cycles(edges: dict[str, dict[str, int]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on.add(node)
        for nxt in edges.get(node, {}):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                item = stack.pop()
                on.discard(item)
                component.append(item)
                if item == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def problems(root: Path) -> list[str]:
    """Every way the imports under root/kb break the layers; empty when they follow them."""
    mods, edges, out = graph(root)
    layers = {name: layer_of(name, path, mods) for name, path in mods.items()}
    for name, layer in sorted(layers.items()):
        if layer is None:
            out.append(f"{mods[name].relative_to(root)}: {name} has no layer: add it to LAYERS in kb/layers.py")
    for name, targets in sorted(edges.items()):
        for target, line in sorted(targets.items()):
            here, there = layers[name], layers.get(target)
            if here is not None and there is not None and there > here:
                out.append(f"{mods[name].relative_to(root)}:{line}: {name} ({LAYER_NAMES[here]}) imports {target} "
                           f"({LAYER_NAMES[there]}), a higher layer")
    for component in cycles(edges):
        out.append("import cycle among: " + ", ".join(component))
    return out


def test_kb_imports_follow_the_layers() -> None:
    assert problems(ROOT) == []


def test_every_module_has_a_layer() -> None:
    mods = modules(ROOT)
    assert [n for n, p in mods.items() if layer_of(n, p, mods) is None] == []


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    """kb/ and verifiers/ copied, without kb's 13,000-line generated index (a literal: it imports nothing)."""
    shutil.copytree(ROOT / "kb", tmp_path / "kb", ignore=shutil.ignore_patterns("__pycache__", "_index.py", "templates"))
    shutil.copytree(ROOT / "verifiers", tmp_path / "verifiers", ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "kb" / "_index.py").write_text("INDEX = {}\n")
    return tmp_path


def _plant(root: Path, module: str, line: str) -> None:
    path = root / module
    path.write_text(path.read_text(encoding="utf-8") + "\n\ndef _planted() -> None:\n    " + line + "\n")


def test_a_planted_upward_import_fails(copy: Path) -> None:
    assert problems(copy) == []
    _plant(copy, "kb/compile.py", "from kb.site import pages")  # the compiler reaching up into the site
    found = problems(copy)
    assert any("kb.compile (compile) imports kb.site.pages (outputs), a higher layer" in p for p in found), found
    assert any(p.startswith("kb/compile.py:") for p in found)


def test_a_planted_cycle_within_one_layer_fails(copy: Path) -> None:
    _plant(copy, "kb/render.py", "import kb.generated")  # generated -> render -> generated
    found = problems(copy)
    assert [p for p in found if p.startswith("import cycle among: ")] == [
        "import cycle among: kb.generated, kb.render, kb.site.readme"], found
    assert not any("higher layer" in p for p in found)  # all three are outputs: only the cycle is wrong


def test_a_planted_private_import_fails(copy: Path) -> None:
    _plant(copy, "kb/site/pages.py", "from kb.compile import _ranges")
    assert any("imports the private name kb.compile._ranges" in p for p in problems(copy))


def test_a_planted_private_attribute_use_fails(copy: Path) -> None:
    _plant(copy, "kb/site/readme.py", "from kb import compile as c\n    c._ranges([])")
    assert any("uses the private name kb.compile._ranges" in p for p in problems(copy))


def test_a_new_module_without_a_layer_fails(copy: Path) -> None:
    (copy / "kb" / "scanner.py").write_text("from kb import schema\n")
    assert any("kb.scanner has no layer" in p for p in problems(copy))


def test_importing_a_module_of_a_package_runs_the_package(copy: Path) -> None:
    # kb/lint/__init__.py imports every check, so `from kb.lint.ops import X` in a base module
    # is an upward import of the whole lint package, not only of kb.lint.ops.
    _plant(copy, "kb/prefixes.py", "from kb.lint.ops import CODE")
    found = problems(copy)
    assert any("imports kb.lint (load)" in p for p in found), found


def test_verifiers_are_under_the_table() -> None:
    mods = modules(ROOT)
    assert "verifiers.discover" in mods and "verifiers.sweep.torch_worker" in mods
    assert layer_of("verifiers.discover", mods["verifiers.discover"], mods) == LAYER_NAMES.index("base")


def test_a_planted_upward_import_in_verifiers_fails(copy: Path) -> None:
    # a verifier reaching up into the harness that runs it: the arrow the 2026-11-27 review found
    _plant(copy, "verifiers/torch/pad.py", "from kb.verify.runner import KEPT")
    found = problems(copy)
    assert any(p.startswith("verifiers/torch/pad.py:") and "verifiers.torch.pad (base) imports kb.verify.runner (commands)" in p
               for p in found), found


def test_every_placed_module_exists_and_says_why() -> None:
    mods = modules(ROOT)
    for name, (layer, why) in PLACED.items():
        assert name in mods, name
        assert layer in LAYER_NAMES and len(why) > 40, name
