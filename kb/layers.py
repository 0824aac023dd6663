"""The layers of kb/ and verifiers/, lowest first: the one table that tests/test_layers.py checks
every import against and that `kb build` turns into the module map of docs/architecture.md.

A module may import from its own layer or any lower one, never a higher one. The first
matching pattern wins; a package whose __init__ imports nothing from kb (a namespace with a
docstring) needs no entry. A new module fails tests/test_layers.py until it matches a pattern
here, and `kb build --check` fails until docs/architecture.md lists it.

verifiers/ (the code that runs in the measuring processes: verifiers, the sweep workers, the
child of one mode) is in the base layer: `kb` loads its registry, its outcome words and its
case reader (kb/lint/verifiers.py, kb/verify/merge.py), so what it imports must be as low. A
module placed elsewhere is named in PLACED with the reason.

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
        "kb.errors", "kb.atomic", "kb.untrusted", "kb.apinames", "kb.yamlio", "kb.jsonio", "kb.versions", "kb.findings",
        "kb.schema", "kb.model", "kb.root", "kb.prefixes", "kb.links.resolve", "kb.known", "kb.signatures",
        "kb.calls", "kb.reductions", "kb.case", "kb.protocol", "kb.bounds", "kb.shapes", "kb.links.answers", "kb.memo", "kb.unchanged", "kb.aside", "kb.entries", "kb.layers",
        "verifiers", "verifiers.*",
    )),
    Layer("load", "read and check what people and machines wrote: data/, run files, link state", (
        "kb.catalog", "kb.canonical", "kb.lint", "kb.lint.*", "kb.links.state", "kb.verify.runfile", "kb.verify.cases",
        "kb.verify.sweepfile", "kb.verify.seen", "kb.verify.extend",
        "kb.verify.merge", "kb.nightly.report",
        "kb.verify.static", "kb.verify.static.load", "kb.verify.static.merge", "kb.verify.static.evidence",
    )),
    Layer("compile", "catalog + merged evidence -> the index", ("kb.compile", "kb._index", "kb._details", "kb._seen")),
    Layer("outputs", "everything read from the index: query, generated files, site, plans, probes, scan", (
        "kb", "kb.query", "kb.query.*", "kb.render", "kb.generated", "kb.site", "kb.site.api", "kb.site.build",
        "kb.site.model", "kb.site.nightly", "kb.site.pages", "kb.site.readme", "kb.site.matrix", "kb.site.recipes",
        "kb.site.words", "kb.verify.plan", "kb.verify.coverage",
        "kb.probe", "kb.probe.diff", "kb.probe.nest", "kb.probe.recorder", "kb.probe._*",
        "kb.probe.blame", "kb.probe.kbask", "kb.probe.fingerprint", "kb.probe.calls",
        "kb.check", "kb.check.boot", "kb.check.inside", "kb.check.jitted", "kb.check.inventory_*", "kb.check.switches",
        "kb.check.predict", "kb.check.report", "kb.check.outcome",
        "kb.scan.cells", "kb.scan.sources", "kb.scan.tfcompat_names", "kb.scan.tfprivate_names", "kb.scan.tfcompat", "kb.scan.nodes", "kb.scan.injected", "kb.scan.syntax", "kb.scan.syspaths", "kb.scan.fixedflags", "kb.scan.survey",
        "kb.scan.filedeps", "kb.scan.oldsyntax", "kb.scan.keptrees", "kb.scan.prepare", "kb.scan.receivers", "kb.scan.jaxarrays", "kb.scan.counts", "kb.scan.unique", "kb.scan.context", "kb.scan.hostrandom", "kb.scan.handedon", "kb.scan.follow", "kb.scan.flags", "kb.scan.handed", "kb.scan.transforms", "kb.scan.datasetdefs", "kb.scan.plainargs", "kb.scan.datasets", "kb.scan.tfdata", "kb.scan.tfvariables", "kb.scan.seeds", "kb.scan.graphreset", "kb.scan.values", "kb.scan.kernels", "kb.scan.uniform", "kb.scan.slices", "kb.scan.mapped", "kb.scan.constants",
        "kb.scan.factories", "kb.scan.reaching", "kb.scan.gradient", "kb.scan.inputgrads", "kb.scan.firstlayer", "kb.scan.gradcontexts", "kb.scan.quietfunctions", "kb.scan.heldmodules", "kb.scan.hostcode", "kb.scan.members", "kb.scan.resolvers", "kb.scan.onewindow", "kb.scan.pooling", "kb.scan.modelclass", "kb.scan.partials", "kb.scan.builders", "kb.scan.modulelist", "kb.scan.instances", "kb.scan.rank", "kb.scan.lossrank", "kb.scan.classparams", "kb.scan.cudaguard", "kb.scan.visitor", "kb.scan.rules", "kb.scan.ruledoc",
        "kb.scan.resolve", "kb.scan.scope", "kb.scan.unreached", "kb.scan.retired", "kb.scan.configtargets", "kb.scan.ginconfigs", "kb.scan.dispatch", "kb.scan.differentiates", "kb.scan.packaging", "kb.scan.holders", "kb.scan.unfetched", "kb.scan.loaded", "kb.scan.convfree", "kb.scan.placement", "kb.scan.methodcalls", "kb.scan.calltargets", "kb.scan.methodtargets", "kb.scan.constantdraws", "kb.scan.spreads", "kb.scan.callers", "kb.scan.versiongate", "kb.scan.environ", "kb.scan.pins", "kb.scan.switches", "kb.scan.seedorder", "kb.scan.keras2", "kb.scan.kerasbackend",
        "kb.scan.lookup", "kb.scan.recipe", "kb.scan.fixcover", "kb.scan.filecache", "kb.scan.reexports", "kb.scan.run", "kb.scan.report_*", "kb.scan.torchvision_models",
        "kb.scan.pyints", "kb.scan.seededinit", "kb.scan.dummyinputs", "kb.scan.quantized", "kb.scan.inference", "kb.scan.jitbody", "kb.scan.options", "kb.scan.placeholders",
    )),
    Layer("commands", "argument parsing, processes, network: what a person runs", (
        "kb.cli", "kb.__main__", "kb.*.cli", "kb.check.runner", "kb.links.refresh", "kb.nightly.*", "kb.verify.*", "kb.sweep", "kb.sweep.*",
    )),
)
LAYER_NAMES = tuple(layer.name for layer in LAYERS)

PLACED: dict[str, tuple[str, str]] = {
    "verifiers.torch.allreduce": ("commands", "its main() is a launcher: it starts torchrun on several GPUs and writes a "
                                  "run file with the harness's own mode entries (kb.verify.runner) and machine "
                                  "description (kb.verify.env); its verifier function imports nothing from kb"),
    "verifiers.collectives.__main__": ("commands", "`python -m verifiers.collectives`: a launcher that describes the "
                                       "machine (kb.verify.env) and writes a run file (kb.verify.runfile)"),
}
"""Modules whose layer is not their folder's (first in pattern_layer), each with why."""


PACKAGES = ("kb", "verifiers")
"""The top-level packages the table covers."""


def modules(root: Path) -> dict[str, Path]:
    """Dotted module name -> file, for every .py under root/kb and root/verifiers (not the
    stand-in modules of verifiers/sweep/_shim, which are put on sys.path as top-level modules)."""
    out = {}
    paths = [p for package in PACKAGES if (root / package).is_dir() for p in sorted((root / package).rglob("*.py"))]
    for path in paths:
        if "_shim" in path.parts:
            continue
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def pattern_layer(name: str) -> int | None:
    """The index in LAYERS of the layer PLACED names, else of the first layer with a pattern
    matching `name`, or None."""
    if name in PLACED:
        return LAYER_NAMES.index(PLACED[name][0])
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
    """Markdown: every module of kb/ and verifiers/ under its layer (highest first), each with its docstring's
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
            why = f" (placed here: {PLACED[name][1]})" if name in PLACED else ""
            lines.append(f"- `{shown}`" + (f": {text}" if text else "") + why)
        lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"
