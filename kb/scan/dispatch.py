"""Methods that class dispatch never reaches (R4 of the frozen corpora: williamleif/GraphSAGE's models.py).

`self.m()` runs the `m` that the class of `self` finds first: a method of a class of the code base, named only
as `self.m` (never `Base.m(self)`, `super().m()`, `getattr(x, "m")` or `other.m`), runs only on an object of
that class or of a subclass that inherits the method without defining its own. When no code builds any of
those classes (their names appear only as the bases of other classes, in `super(C, self)`, in an explicit
`C.__init__(self)` or in an import), the method never runs: a base class's `build` that every subclass the
code base builds overrides, or that only a subclass nothing builds inherits. Any other use of such a class's
name (a call, a table, a string, an import under another name, an `__init__.py` that exports it for users, a
decorator that may register it) may build it, and a subclass whose base cannot be read may inherit the
method, so the method is kept then. Read by kb/scan/unreached.py, for the code no entry point runs.
"""

from __future__ import annotations

import re
import functools
from collections.abc import Callable, Sequence

Ref = tuple[str, int, bool]  # (path, line, as an attribute or string): a use of a name (kb/scan/unreached.py)
Where = tuple[str, str]  # (file, class name) of a module-level class

_HEADER = re.compile(r"^\s*class\s+\w+\s*\([\w.\s,]*\)\s*:")  # bases that are plain dotted names only
_IMPORT = re.compile(r"^\s*(?:from\s+[\w.]+\s+)?import\s+[\w.\s,()]*$")  # no `as`: the name stays the class's


@functools.lru_cache(maxsize=4096)
def _method_patterns(method: str) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """The method's name as a word, and its spellings that are no other use: `self.method`, `def method(`."""
    name = re.escape(method)
    return re.compile(rf"\b{name}\b"), re.compile(rf"\bself\s*\.\s*{name}\b|\bdef\s+{name}\s*\(")


class Dispatch:
    """The code base's subclasses (each class statement's bases resolved by `resolve_base`, as kb/scan/unreached.py
    resolves them for own ancestry), and which method `self.m()` can never reach. `texts`: the code base's texts."""

    def __init__(self, modules: dict, texts: dict[str, str],
                 resolve_base: Callable[[str, tuple[str, ...]], Where | None],
                 configured: set[Where] | frozenset[Where] = frozenset()) -> None:
        self.modules, self.texts, self.resolve_base = modules, texts, resolve_base
        self.configured = configured  # classes a configuration file builds by dotted path (kb/scan/configtargets.py)
        self._children: dict[Where, list[tuple[str, str, int]]] | None = None
        self._unread: set[str] = set()  # last names of bases not resolved: a subclass of a class of that name may hide there
        self._lines: dict[str, list[str]] = {}
        self._verdicts: dict[tuple[str, int, str], bool] = {}  # (path, line, method): its uses there are `self.method`

    def _tree(self) -> dict[Where, list[tuple[str, str, int]]]:
        if self._children is None:
            self._children = {}
            for path, module in self.modules.items():
                for name, line, _, bases, _ in module.layout.class_bases:
                    for base in bases:
                        where = self.resolve_base(path, base) if base else None
                        if where is None:
                            if base:
                                self._unread.add(base[-1])
                        else:
                            self._children.setdefault(where, []).append((path, name, line))
        return self._children

    def _line(self, path: str, line: int) -> str:
        if path not in self._lines:
            self._lines[path] = self.texts.get(path, "").splitlines()
        lines = self._lines[path]
        return lines[line - 1] if 0 < line <= len(lines) else ""

    def _defines(self, path: str, owner: str, owner_line: int, method: str) -> bool:
        return any(kind == "method" and name == method and o == owner and o_line == owner_line
                   for kind, name, _, _, _, o, o_line, _ in self.modules[path].layout.spans)

    def _only_self(self, refs: Sequence[Ref], method: str, live: Callable[[str, int], bool]) -> bool:
        """Whether every use of `.method` (or string naming it) in code that runs is `self.method`."""
        return all(self._self_line(p, line, method) for p, line, attr in refs if attr and live(p, line))

    def _self_line(self, path: str, line: int, method: str) -> bool:
        key = (path, line, method)
        if key not in self._verdicts:
            word, spelt = _method_patterns(method)
            self._verdicts[key] = not word.search(spelt.sub("", self._line(path, line)))
        return self._verdicts[key]

    def _built(self, path: str, name: str, refs: Sequence[Ref] | None, live: Callable[[str, int], bool]) -> bool:
        """Whether some code may build the class `name` (None refs: its uses were not read)."""
        if refs is None:
            return True
        word = re.compile(rf"\b{re.escape(name)}\b")
        allowed = re.compile(rf"\bsuper\(\s*(?:\w+\.)*{re.escape(name)}\s*,\s*\w+\s*\)"
                             rf"|(?:\w+\.)*{re.escape(name)}\.__init__\s*\(")
        for p, line, _ in refs:
            if not live(p, line):
                continue
            text = self._line(p, line)
            if _HEADER.match(text) or (_IMPORT.match(text) and not p.endswith("__init__.py")):
                text = _HEADER.sub("", text) if _HEADER.match(text) else ""
            if word.search(allowed.sub("", text)):
                return True
        return False

    def never(self, path: str, owner: str, owner_line: int, method: str,
              refs_of: Callable[[str], Sequence[Ref] | None], live: Callable[[str, int], bool]) -> str | None:
        """Why `owner.method` (the method of the module-level class at `owner_line`) never runs, or None."""
        if not any(c[0] == owner and c[1] == owner_line and c[4] for c in self.modules[path].layout.class_bases):
            return None  # a class inside a function: its subclasses are not read
        if not self._only_self(refs_of(method) or (), method, live):
            return None
        children = self._tree()
        inheritors: list[tuple[str, str, int]] = [(path, owner, owner_line)]
        overriding: list[str] = []
        seen = set(inheritors)
        at = 0
        while at < len(inheritors):
            where, name, line = inheritors[at]
            at += 1
            if name in self._unread:
                return None  # a subclass written some other way may inherit it
            for child in children.get((where, name), ()) if line == self._module_line(where, name) else ():
                if child in seen:
                    continue
                seen.add(child)
                if self._defines(*child, method):
                    overriding.append(child[1])
                else:
                    inheritors.append(child)
        if any((where, name) in self.configured or self._built(where, name, refs_of(name), live)
               for where, name, _ in inheritors):
            return None
        inherit = ", ".join(name for _, name, _ in inheritors[1:])
        return (f"{owner}.{method} is called only as self.{method}, and nothing in this code base builds {owner}"
                + (f" or a subclass that inherits it ({inherit})" if inherit else "")
                + (f" (overridden in {', '.join(sorted(set(overriding)))})" if overriding else ""))

    def _module_line(self, path: str, name: str) -> int | None:
        """The line of the one module-level class `name` of a file (None where there are several)."""
        lines = [c[1] for c in self.modules[path].layout.class_bases if c[0] == name and c[4]]
        return lines[0] if len(lines) == 1 else None
