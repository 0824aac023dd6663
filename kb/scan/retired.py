"""Modules at the top of a script repository that the code base itself shows to be out of use (RULES P2-1, P2-2).

A module at the top of a repository that ships no package, that no scanned file imports and no entry point
runs, may still be imported by its users' own scripts and notebooks (yang-song/score_sde's
controllable_generation.py, used by a demo notebook): kb/scan/unreached.py keeps its findings. Two signs in the
code base itself say that no program runs it: the only import of it is commented out (`# from patchconvnet_models
import *` in a hubconf: the author took it out, P2-2), or it is an older copy of a module the programs do run
(every class it defines is defined again, under the same name, by a module an entry point reaches: waveglow's
glow_old.py beside glow.py, P2-1), so a user's code builds the live one. Either makes the module code no program
runs; nothing else about a top module does.
"""

from __future__ import annotations

import os
import re

# a commented-out import: `# import a, b as c` / `# from .pkg.mod import x, y` (its names read up to the line's end)
_COMMENTED = re.compile(r"^[ \t]*#+[ \t]*(?:import[ \t]+([\w., \t]+)|from[ \t]+(\.*[\w.]*)[ \t]+import[ \t]+([^\n]*))",
                        re.M)


def commented_out(stems: dict[str, str], texts: dict[str, str]) -> set[str]:
    """The paths (of `stems`: path -> module name at the top) that some other file imports only in a comment,
    as a top module is imported (`# import m`, `# from m import x`, `# from . import m`). A text that holds no
    `#` before the name is not read further."""
    out: set[str] = set()
    for path, text in texts.items():
        if "#" not in text or not any(stem in text for stem in stems.values()):
            continue
        for plain, module, names in _COMMENTED.findall(text):
            named: set[str] = set()
            if plain:
                named = {part.split()[0].split(".")[0] for part in plain.split(",") if part.split()}
            elif module.strip("."):
                named = {module.lstrip(".").split(".")[0]}
            else:  # `from . import m, n`
                named = {word for word in re.findall(r"\w+", names)}
            for target, stem in stems.items():
                if stem in named and target != path:
                    out.add(target)
    return out


def superseded(paths: list[str], modules: dict, reached: set[str]) -> set[str]:
    """The paths whose module-level classes (one at least) are each defined again by one other module that an
    entry point reaches: an older copy of a live module, whose classes the programs build from the live one."""
    live: dict[str, set[str]] = {}
    for path in reached:
        for name, _, _, _, top in modules[path].layout.class_bases if path in modules else ():
            if top:
                live.setdefault(name, set()).add(path)
    out: set[str] = set()
    for path in paths:
        names = {c[0] for c in modules[path].layout.class_bases if c[4]}
        if not names:
            continue
        homes = set.intersection(*(live.get(name, set()) for name in names)) - {path}
        if homes:
            out.add(path)
    return out


def stem(path: str) -> str | None:
    """The module name a top-level `.py` file is imported by; None for a notebook or a name no import can spell."""
    name = os.path.basename(path)
    return name[:-3] if name.endswith(".py") and name[:-3].isidentifier() and name != "__init__.py" else None
