"""Classes a configuration file of the code base builds by their dotted path (RULES P1-2; R4 of the frozen corpora).

A training script that builds its model, data module and the model's parts from a YAML file
(`instantiate_from_config(config.model)`: `get_obj_from_str(config["target"])(**config.get("params", {}))`,
Hydra's `instantiate` of a `_target_`, an `importlib.import_module` of the target string) names those classes
nowhere in its Python code: the file names them (`target: ldm.models.diffusion.ddpm.LatentDiffusion`). So a class
whose dotted path is the value of a `target:` / `_target_:` key in a YAML file under a scanned folder is built
wherever some Python file of the code base instantiates from such a config; kb/scan/unreached.py and
kb/scan/dispatch.py then do not call it built by nothing. Its constructor's `params:` are the config's (open).

The YAML files are read only when some Python file both names a `target` key and has an instantiation pattern
(a cheap text test), at most MAX_CONFIGS of them, each through kb/untrusted.py (a regular file inside the
scanned folder, at most MAX_BYTES); only the lines that hold a target key are read (no YAML parser: a
config is untrusted input, and a key's value is all that is needed).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from kb import untrusted
from kb.scan import sources

MAX_CONFIGS = 2000  # a code base with more configuration files is read no further (its first ones still count)
MAX_BYTES = 1_000_000  # a larger YAML file is data, not a configuration
SUFFIXES = (".yaml", ".yml")
# A Python file that builds objects from a config's target string: the common helper's names, Hydra's
# instantiate, or an import by a computed name.
_INSTANTIATES = re.compile(r"get_obj_from_str|instantiate_from_config|\binstantiate\s*\(|import_module|locate\s*\(")
_TARGET_WORDS = ("'target'", '"target"', "_target_", ".target")
# `target: pkg.module.Class` or `_target_: "pkg.module.Class"` (a list item's `- target:` too), at a line's start.
_TARGET = re.compile(r"""^[ \t]*(?:-[ \t]+)?["']?_?target_?["']?[ \t]*:[ \t]*["']?"""
                     r"""([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)["']?[ \t]*(?:#.*)?$""", re.M)


def instantiates(texts: Iterable[str]) -> bool:
    """Whether some Python text names a `target` key and builds an object from a computed dotted path."""
    return any(any(word in text for word in _TARGET_WORDS) and _INSTANTIATES.search(text) is not None
               for text in texts)


def _configs(roots: list[str]) -> list[tuple[str, str]]:
    return sources.config_files(roots, SUFFIXES, MAX_CONFIGS)


def targets(roots: list[str]) -> set[str]:
    """The dotted paths the YAML files under the scanned folders write as a `target` / `_target_` value."""
    out: set[str] = set()
    for path, root in _configs(roots):
        try:
            text = untrusted.read_bytes(Path(path), MAX_BYTES, within=Path(root)).decode("utf-8", errors="replace")
        except (OSError, untrusted.Refused):
            continue
        if "target" in text:
            out.update(_TARGET.findall(text))
    return out


def built(roots: list[str], texts: dict[str, str], classes: Iterable[tuple[str, str]]) -> set[tuple[str, str]]:
    """The (file, class name) pairs among `classes` (module-level classes of scanned files) that a configuration
    file names by their dotted path, where some Python file instantiates from such a config; none otherwise.
    `module.Class` matches a file whose path ends with `module` as folders (`.py`, or a package's __init__.py)."""
    if not instantiates(texts.values()):
        return set()
    found = targets(roots)
    if not found:
        return set()
    wanted: dict[str, set[str]] = {}  # class name -> the file endings its targets give
    for dotted in found:
        module, _, name = dotted.rpartition(".")
        rel = module.replace(".", "/")
        wanted.setdefault(name, set()).update({rel + ".py", rel + "/__init__.py"})
    out: set[tuple[str, str]] = set()
    for path, name in classes:
        endings = wanted.get(name)
        if not endings:
            continue
        posix = Path(path).as_posix()
        if any(posix == end or posix.endswith("/" + end) for end in endings):
            out.add((path, name))
    return out
