"""What the code base's gin configuration files import and build (RULES P1-2; google-research/meliad, forty-fourth
corpus: 31 risky entries read as code nothing runs).

A program configured with gin (`gin.parse_config_files_and_bindings(FLAGS.gin_file, ...)`) imports the modules its
`.gin` files name (`from transformer import attention`, `import training_loop`) before it builds anything, and builds
the classes they bind (`flax_module_factory = @decoder_stack.DecoderStack`, a `decoder_stack.DecoderStack:` block,
`DecoderStack.layer_factory = ...`): none of those is named in the Python code. So, where some scanned module
imports gin, the import lines of the `.gin` files under the scanned folders count as imports of each module that
imports gin (kb/scan/scope.py then reaches them from the entry point that reaches it), and a class those files
reference is built (kb/scan/unreached.py, kb/scan/dispatch.py), as a YAML `target:` is (kb/scan/configtargets.py).

The files are read only when some module imports gin, at most MAX_CONFIGS of them, each through kb/untrusted.py (a
regular file inside the scanned folder, at most MAX_BYTES); only import lines and references are read.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable
from pathlib import Path

from kb import untrusted
from kb.scan import sources

MAX_CONFIGS = 2000  # a code base with more gin files is read no further (its first ones still count)
MAX_BYTES = 1_000_000
SUFFIXES = (".gin",)
_IMPORT = re.compile(r"^[ \t]*import[ \t]+([A-Za-z_][\w.]*)[ \t]*(?:#.*)?$", re.M)
_FROM = re.compile(r"^[ \t]*from[ \t]+([A-Za-z_][\w.]*)[ \t]+import[ \t]+([A-Za-z_]\w*(?:[ \t]*,[ \t]*[A-Za-z_]\w*)*)"
                   r"[ \t]*(?:#.*)?$", re.M)
# `@scope/module.Name`, `@Name()`; a binding `scope/module.Name.param = ...`; a block header `module.Name:`
_REFERENCE = re.compile(r"@(?:[\w.]+/)*([A-Za-z_][\w.]*)")
_BINDING = re.compile(r"^(?:[\w.]+/)*([A-Za-z_][\w.]*)\.\w+[ \t]*=", re.M)
_BLOCK = re.compile(r"^(?:[\w.]+/)*([A-Za-z_][\w.]*)[ \t]*:[ \t]*(?:#.*)?$", re.M)


def _configs(roots: list[str]) -> list[tuple[str, str]]:
    return sources.config_files(roots, SUFFIXES, MAX_CONFIGS)


def _texts(roots: list[str]) -> list[str]:
    out = []
    for path, root in _configs(roots):
        try:
            out.append(untrusted.read_bytes(Path(path), MAX_BYTES, within=Path(root)).decode("utf-8", errors="replace"))
        except (OSError, untrusted.Refused):
            continue
    return out


class Gin:
    """The gin files under the scanned folders, read once on the first question (and only if some module imports gin)."""

    def __init__(self, roots: list[str]) -> None:
        self.roots = roots
        self._texts: list[str] | None = None

    def texts(self) -> list[str]:
        if self._texts is None:
            self._texts = _texts(self.roots)
        return self._texts

    def imports(self) -> tuple[tuple[str, int, tuple[str, ...]], ...]:
        """The import lines of every gin file, as a Layout's imports: (module, level 0, names imported from it)."""
        out: list[tuple[str, int, tuple[str, ...]]] = []
        for text in self.texts():
            if "import" not in text:
                continue
            out += [(module, 0, ()) for module in _IMPORT.findall(text)]
            out += [(module, 0, tuple(n.strip() for n in names.split(","))) for module, names in _FROM.findall(text)]
        return tuple(dict.fromkeys(out))

    def built(self, classes: Iterable[tuple[str, str]]) -> set[tuple[str, str]]:
        """The (file, class name) pairs among `classes` that a gin file references (`module.Name` matches a file whose
        stem is `module`; a bare `Name` any file's class of that name)."""
        wanted: dict[str, set[str | None]] = {}
        for text in self.texts():
            for dotted in itertools.chain(_REFERENCE.findall(text), _BINDING.findall(text), _BLOCK.findall(text)):
                module, _, name = dotted.rpartition(".")
                wanted.setdefault(name, set()).add(module.rpartition(".")[2] or None)
        out: set[tuple[str, str]] = set()
        for path, name in classes:
            modules = wanted.get(name)
            if modules and (None in modules or Path(path).stem in modules
                            or (Path(path).name == "__init__.py" and Path(path).parent.name in modules)):
                out.add((path, name))
        return out


def imports_gin(layout_imports: Iterable[tuple[str, int, tuple[str, ...]]]) -> bool:
    """Whether a module's imports (a Layout's) take gin: `import gin`, `import gin.tf`, `from gin import ...`."""
    return any(module == "gin" or module.startswith("gin.") for module, _, _ in layout_imports)


def with_imports(modules: dict, roots: list[str]) -> dict | None:
    """`modules` (path -> kb/scan/resolve.py's Module) with the gin files' imports added to each module that imports
    gin; None where no module imports gin or the gin files import nothing (the modules stand as they are)."""
    takers = [path for path, module in modules.items() if imports_gin(module.layout.imports)]
    if not takers:
        return None
    extra = Gin(roots).imports()
    if not extra:
        return None
    out = dict(modules)
    for path in takers:
        layout = out[path].layout
        out[path] = out[path]._replace(layout=layout._replace(imports=(*layout.imports, *extra)))
    return out
