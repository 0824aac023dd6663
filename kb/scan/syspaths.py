"""The folders a module adds to `sys.path`, as written relative to its own folder: xingyizhou/CenterNet's
`_init_paths.py` (`lib_path = osp.join(osp.dirname(__file__), "lib"); sys.path.insert(0, lib_path)`), after which
`from models.model import create_model` in `src/main.py` is `src/lib/models/model.py` (forty-fifth corpus: 29 risky
entries read as code nothing runs). kb/scan/scope.py resolves an absolute import that the importer's own folders do
not hold under these folders too.

Read from the text alone, and only where it names `sys.path`: each `os.path.join(<the file's folder>, "a", "b")` (any
`join` whose first argument's text, or the value a name it holds was assigned from, names `__file__`; each
`dirname(` above the first counts one folder up) and each string literal handed to `sys.path.insert` or
`sys.path.append` (a path relative to the working directory, read as relative to the file's folder: scripts are
started from their own). An absolute path, or one the text computes otherwise, is not read.
"""

from __future__ import annotations

import posixpath
import re

_JOIN = re.compile(r"""\bjoin\(\s*([^,()]*(?:\([^()]*(?:\([^()]*\)[^()]*)*\))?[^,()]*)\s*,\s*((?:['"][^'"\n]+['"]\s*,?\s*)+)\)""")
_LITERAL = re.compile(r"""['"]([^'"\n]+)['"]""")
_SYS_PATH = re.compile(r"""sys\.path\.(?:insert\(\s*\d+\s*,|append\()\s*['"]([^'"\n]+)['"]""")
_ASSIGNED = re.compile(r"^[ \t]*([A-Za-z_]\w*)[ \t]*=[ \t]*([^\n]*__file__[^\n]*)$", re.M)


def added(text: str) -> tuple[str, ...]:
    """The folders, relative to the module's own folder (posix, normalised; "" is the folder itself), that the
    module's text adds to sys.path (module docstring)."""
    if "sys.path" not in text:
        return ()
    held = {name: value for name, value in _ASSIGNED.findall(text)}  # this_dir = osp.dirname(__file__)
    out: list[str] = []
    for first, rest in _JOIN.findall(text):
        first = first.strip()
        source = first if "__file__" in first else held.get(first, "")
        if "__file__" not in source:
            continue
        ups = max(source.count("dirname(") - 1, 0) if "dirname(" in source else 0
        if "abspath(" not in source and "realpath(" not in source and "dirname(" not in source:
            continue  # a join onto the file's own path, not its folder
        parts = [".."] * ups + _LITERAL.findall(rest)
        out.append(posixpath.normpath(posixpath.join(*parts)) if parts else "")
    out += [posixpath.normpath(p) for p in _SYS_PATH.findall(text) if not p.startswith(("/", "~"))]
    return tuple(dict.fromkeys(p for p in out if not p.startswith("/")))
