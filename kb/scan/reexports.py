"""Framework names a file takes from another scanned file's imports (for kb/scan/run.py's second reading).

A script repository often imports a framework name through one of its own modules: `from preprocess import
DataLoader` where preprocess.py says `from torch.utils.data import Dataset, DataLoader` (soobinseo/Transformer-TTS),
or `from .basemodel import *`, which binds every public name basemodel.py imports. Python binds the same object
either way, so the name is the framework's: `DataLoader(...)` there constructs torch's DataLoader. Read file by file,
the name would be the local module's, a call of nothing the knowledge base knows.
"""

from __future__ import annotations

import os

from kb.scan import resolve, scope


def may_reexport(modules: dict) -> bool:
    """Whether any file imports a name from a module that may be a scanned one (a relative import, or an absolute
    one whose first part names a scanned file or folder): else no file needs the import graph for it."""
    stems: set[str] = set()
    for path in modules:
        parts = os.path.normpath(path).split(os.sep)
        stems.update(parts[:-1])
        stems.add(os.path.splitext(parts[-1])[0])
    return any(level or source.split(".", 1)[0] in stems
               for m in modules.values() for _, source, level, attr in m.layout.bindings if attr is not None)


def reexported(graph: scope.Graph, path: str, wanted: frozenset[str]) -> dict[str, str]:
    """Local name -> framework name, for each `from <scanned module> import name` of the file whose module binds
    `name` by importing it from outside the code base (through further scanned modules too), when the framework
    name is a wanted op or a module that holds one (`torch.nn.functional`): only those change what the scan reads.
    A name the module defines itself (a def or class) is its own."""
    out: dict[str, str] = {}
    for local, source, level, attr in graph.modules[path].layout.bindings:
        if attr is None or attr == "*":
            continue
        where = graph.resolve(path, source, level)
        if where is None or where == path:
            continue
        name = _imported(graph, where, attr, {path})
        if name is not None and (name in wanted or any(op.startswith(name + ".") for op in wanted)):
            out[local] = name
    return out


def _imported(graph: scope.Graph, where: str, name: str, seen: set[str]) -> str | None:
    """The framework name module `where` binds to `name` by an import (followed through the scanned modules it
    imports it from); None when it defines the name, binds it otherwise, or imports it from nowhere outside."""
    module = graph.modules[where]
    if any(span[1] == name for span in module.layout.spans if span[0] in ("function", "class")):
        return None
    for local, source, level, attr in module.layout.bindings:
        if local != name:
            continue
        inner = graph.resolve(where, source, level)
        if inner is None:
            return None if level else resolve.canonical(f"{source}.{attr}" if attr is not None else source)
        if attr is None or inner in seen:
            return None
        return _imported(graph, inner, attr, seen | {where})
    return None


def starred(graph: scope.Graph, path: str, seen: set[str], wanted: frozenset[str] = frozenset()) -> dict[str, str]:
    """The framework names a file's `from module import *` of scanned files binds: each such module's own
    imports (`import torch.nn as nn` in basemodel.py makes `nn` of `from .basemodel import *` torch.nn), and
    those of the modules it star-imports in turn. Python's star import binds every public module-level name,
    imported modules included; names with a leading underscore stay behind. A module that itself star-imports a
    framework module (bojone/bert4keras's layers.py: `from keras.layers import *`, then models.py's
    `from bert4keras.layers import *`) passes on that module's `wanted` names, less those it defines or binds."""
    found: dict[str, str] = {}
    for module, level, names in graph.modules[path].layout.imports:
        if "*" not in names:
            continue
        where = graph.resolve(path, module, level)
        if where is None or where in seen:
            continue
        seen.add(where)
        layout = graph.modules[where].layout
        for local, source, source_level, attr in layout.bindings:
            if not source_level and not local.startswith("_"):
                found.setdefault(local, resolve.canonical(f"{source}.{attr}" if attr is not None else source))
        for local, name in starred(graph, where, seen, wanted).items():
            found.setdefault(local, name)
        for name, op in passed_through(graph, where, wanted).items() if wanted else ():
            found.setdefault(name, op)
    return found


def passed_through(graph: scope.Graph, where: str, wanted: frozenset[str]) -> dict[str, str]:
    """Name -> framework op, of the `wanted` ops a scanned module offers as its own attributes by star-importing a
    framework module (huggingface/nanotron's `nanotron/distributed.py`: `from torch.distributed import *`, then
    `from nanotron import distributed as dist; dist.all_reduce(...)` elsewhere), less the names it defines or binds
    itself (its own wrappers)."""
    layout = graph.modules[where].layout
    stars = [source for source, level, names in layout.imports
             if "*" in names and not level and graph.resolve(where, source, 0) is None]
    if not stars:
        return {}
    own = {span[1] for span in layout.spans if span[0] in ("function", "class")} | {b[0] for b in layout.bindings}
    found: dict[str, str] = {}
    for source in stars:
        prefix = resolve.canonical(source) + "."
        for op in wanted:
            name = op[len(prefix):]
            if op.startswith(prefix) and "." not in name and name not in own:
                found.setdefault(name, op)
    return found


def framework_class(passed_on: dict[str, str] | None, base: str, wanted: frozenset[str]) -> tuple[str, bool] | None:
    """(the KB class, False) a class's base names through a framework module the file imports from a module of the
    code base (bojone/bert4keras's layers.py: `from bert4keras.backend import keras`, then `class
    Embedding(keras.layers.Embedding)`); None when the base is no such name."""
    root, _, rest = base.partition(".")
    if not passed_on or root not in passed_on:
        return None
    name = resolve.canonical(passed_on[root] + ("." + rest if rest else ""))
    return (name, False) if name in wanted else None


def defined_in(graph: scope.Graph, where: str, name: str, seen: frozenset[str] = frozenset()) -> str:
    """The scanned module that defines the class `name` as module `where` offers it: `where` itself where it defines
    it or the trail ends; else the module it takes it from by `from .m import name`, or by `from .m import *`
    (a package's `__init__.py` that re-exports its modules: kan-bayashi/ParallelWaveGAN's `parallel_wavegan.layers`,
    `from .residual_block import *`, which defines `Conv1d1x1(Conv1d)`), a few steps deep."""
    module = graph.modules.get(where)
    if module is None or where in seen or len(seen) > 4 or _defines(module, name):
        return where
    for local, source, level, attr in module.layout.bindings:
        if local == name and attr is not None:
            inner = graph.resolve(where, source, level)
            return defined_in(graph, inner, attr, seen | {where}) if inner is not None else where
    for source, level, names in module.layout.imports if not name.startswith("_") else ():
        inner = graph.resolve(where, source, level) if "*" in names else None
        found = defined_in(graph, inner, name, seen | {where}) if inner is not None else None
        if found is not None and _defines(graph.modules[found], name):
            return found
    return where


def _defines(module: resolve.Module, name: str) -> bool:
    return any(span[0] == "class" and span[1] == name for span in module.layout.spans)
