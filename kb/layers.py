"""The layers of kb/, lowest first: the one table that tests/test_layers.py checks every import
against and that `kb build` turns into the module map of docs/architecture.md.

A module may import from its own layer or any lower one, never a higher one. The first
matching pattern wins; a package whose __init__ imports nothing from kb (a namespace with a
docstring) needs no entry. A new module fails tests/test_layers.py until it matches a pattern
here, and `kb build --check` fails until docs/architecture.md lists it.

Standard library only; nothing here imports the modules it describes (their docstrings are
read as text).
"""

from __future__ import annotations

from fnmatch import fnmatchcase
from pathlib import Path
from typing import NamedTuple


class Layer(NamedTuple):
    name: str
    what: str  # what belongs there, as docs/architecture.md says it
    patterns: tuple[str, ...]  # fnmatch patterns of dotted module names


LAYERS: tuple[Layer, ...] = (
    Layer("base", "formats and primitives: no knowledge of the catalog", (
        "kb.errors", "kb.atomic", "kb.untrusted", "kb.yamlio", "kb.jsonio", "kb.versions", "kb.findings",
        "kb.schema", "kb.model", "kb.root", "kb.prefixes", "kb.links.resolve", "kb.known", "kb.signatures",
        "kb.calls", "kb.bounds", "kb.shapes", "kb.links.answers", "kb.memo", "kb.unchanged", "kb.aside", "kb.entries", "kb.layers",
    )),
    Layer("load", "read and check what people and machines wrote: data/, run files, link state", (
        "kb.catalog", "kb.canonical", "kb.lint", "kb.lint.*", "kb.links.state", "kb.verify.runfile", "kb.verify.cases",
        "kb.verify.sweepfile", "kb.verify.seen", "kb.verify.extend",
        "kb.verify.merge", "kb.nightly.report",
        "kb.verify.static", "kb.verify.static.load", "kb.verify.static.merge", "kb.verify.static.evidence",
    )),
    Layer("compile", "catalog + merged evidence -> the index", ("kb.compile", "kb._index", "kb._details")),
    Layer("outputs", "everything read from the index: query, generated files, site, plans, probes, scan", (
        "kb", "kb.query", "kb.query.*", "kb.render", "kb.generated", "kb.site", "kb.site.api", "kb.site.build",
        "kb.site.model", "kb.site.nightly", "kb.site.pages", "kb.site.readme", "kb.site.matrix", "kb.site.recipes",
        "kb.site.words", "kb.verify.plan", "kb.verify.coverage",
        "kb.probe", "kb.probe.diff", "kb.probe.nest", "kb.probe.recorder", "kb.probe._*",
        "kb.probe.blame", "kb.probe.kbask", "kb.probe.fingerprint", "kb.probe.calls",
        "kb.check", "kb.check.boot", "kb.check.inside", "kb.check.jitted", "kb.check.inventory_*", "kb.check.switches",
        "kb.check.predict", "kb.check.report", "kb.check.outcome",
        "kb.scan.cells", "kb.scan.sources", "kb.scan.syntax", "kb.scan.survey", "kb.scan.prepare", "kb.scan.context",
        "kb.scan.resolvers", "kb.scan.rank", "kb.scan.visitor", "kb.scan.rules", "kb.scan.ruledoc", "kb.scan.resolve", "kb.scan.scope",
        "kb.scan.pins", "kb.scan.switches", "kb.scan.keras2", "kb.scan.lookup",
        "kb.scan.recipe", "kb.scan.run", "kb.scan.report_*",
    )),
    Layer("commands", "argument parsing, processes, network: what a person runs", (
        "kb.cli", "kb.__main__", "kb.*.cli", "kb.check.runner", "kb.links.refresh", "kb.nightly.*", "kb.verify.*", "kb.sweep", "kb.sweep.*",
    )),
)
LAYER_NAMES = tuple(layer.name for layer in LAYERS)


def modules(root: Path) -> dict[str, Path]:
    """Dotted module name -> file, for every .py under root/kb."""
    out = {}
    for path in sorted((root / "kb").rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def pattern_layer(name: str) -> int | None:
    """The index in LAYERS of the first layer with a pattern matching `name`, or None."""
    for index, layer in enumerate(LAYERS):
        if any(fnmatchcase(name, p) for p in layer.patterns):
            return index
    return None


def summary(path: Path) -> str:
    """The first sentence of a module's docstring (read as text: nothing is imported)."""
    with open(path, encoding="utf-8") as handle:
        head = handle.read(4000)
    if not head.startswith('"""'):
        return ""
    text = head[3:].split('"""', 1)[0]
    first = " ".join(text.split("\n\n", 1)[0].split())
    if ". " in first:
        first = first[: first.index(". ") + 1]
    if len(first) > 200:
        first = first[:200].rsplit(" ", 1)[0] + " …"
    return first


def module_map(root: Path) -> str:
    """Markdown: every module of kb/ under its layer (highest first), each with its docstring's
    first sentence; a module with no layer is listed under "no layer" (tests/test_layers.py fails)."""
    mods = modules(root)
    by_layer: dict[int | None, list[str]] = {}
    for name, path in mods.items():
        layer = pattern_layer(name)
        if layer is None and path.name == "__init__.py":
            layer = 0  # a namespace package (tests/test_layers.py checks that it imports nothing)
        by_layer.setdefault(layer, []).append(name)
    lines = []
    order: list[int | None] = [*reversed(range(len(LAYERS)))] + ([None] if None in by_layer else [])
    for layer in order:
        title = "no layer (add it to kb/layers.py)" if layer is None else f"{LAYERS[layer].name}: {LAYERS[layer].what}"
        lines.append(f"**{title}**\n")
        for name in by_layer.get(layer, ()):
            shown = mods[name].relative_to(root).as_posix()
            text = summary(mods[name])
            lines.append(f"- `{shown}`" + (f": {text}" if text else ""))
        lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"
