"""The calls of a method of the code base's own classes, whatever their receiver (lpips's
`self.model.initialize(model=..., spatial=...)` of DistModel.initialize(..., is_train=False)).

kb/scan/callers.py takes a method called only as `self.m(...)` in its own class; a method called on another
object (`obj.m(...)`, `Base.m(self, ...)`, `super().m(...)`) was no target there, so a keyword that no call
passes was not known to hold its default. Here every call spelled `<anything>.m(...)` in the code base counts
as a call of every method of that name (a receiver's class is not told apart: their values are merged, which
only widens them). That holds only where the name appears nowhere else: not called bare (`m(...)`), not handed
on (`f = obj.m`, `getattr(obj, "m")`, a string), except as an argument of an `inspect` function, which reads a
function and never calls it (`inspect.getfile(self.initialize)`). The classes are the code base's own (no
framework base calls their methods: kb/scan/methodtargets.py's _own_classes) and the caller gives the script files
only (a library's users may call anything). A call `Cls.m(self, ...)` on a class of the code base passes
`self` first: that argument is dropped; any other call through a class name gives up the name.
"""

from __future__ import annotations

import ast
import re

from kb.scan import oldsyntax, resolve, sources
from kb.scan.nodes import walk

_Def = ast.FunctionDef | ast.AsyncFunctionDef
Found = tuple[str, ast.ClassDef, _Def]


def calls(name: str, found: list[Found], modules: dict[str, resolve.Module], texts: sources.Texts,
          never: dict[str, list[tuple[int, int, str]]], trees: dict[str, ast.Module | None],
          memo: dict[str, ast.Module | None] | None) -> dict[Found, list[tuple[str, ast.Call]]]:
    """Each method of `found` (all named `name`) -> every call of that name in the code base (those in code
    that never runs left out), where the name's every use is a call, a definition or an `inspect` argument;
    {} where one is not, or where no call is seen."""
    escaped = re.escape(name)
    word = re.compile(rf"\b{escaped}\b")
    spelled = re.compile(rf"\.\s*{escaped}\s*\(|\bdef\s+{escaped}\s*\(|\binspect\.\w+\(\s*[\w.]*\.{escaped}\s*[,)]")
    texts_of: list[str] = []
    for path in modules:
        text = texts.get(path) or ""
        if name in text:
            if len(word.findall(text)) != len(spelled.findall(text)):
                return {}
            texts_of.append(path)
    classes: set[str] = set()
    parsed: list[tuple[str, ast.Module]] = []
    for path in texts_of:
        tree = trees.get(path) if path in trees else memo.get(path) if memo is not None and path in memo else None
        if tree is None and path not in trees and (memo is None or path not in memo):
            tree = _parse(texts.get(path))
            if memo is not None:
                memo[path] = tree
        if tree is None:
            return {}  # a file that does not parse may call it with anything
        parsed.append((path, tree))
        classes.update(n.name for n in tree.body if isinstance(n, ast.ClassDef))
    seen: list[tuple[str, ast.Call]] = []
    for path, tree in parsed:
        for node in walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == name):
                continue
            if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
                return {}
            receiver = node.func.value
            if isinstance(receiver, ast.Name) and receiver.id in classes:  # `Base.m(self, ...)`: unbound
                if not node.args or not (isinstance(node.args[0], ast.Name) and node.args[0].id == "self"):
                    return {}
                node = ast.Call(node.func, node.args[1:], node.keywords, lineno=node.lineno,
                                col_offset=node.col_offset)
            elif isinstance(receiver, ast.Name) and receiver.id[:1].isupper():
                return {}  # a class this code base does not define: its own method, or ours called unbound
            if not any(first <= node.lineno <= last for first, last, _ in never.get(path, ())):
                seen.append((path, node))
    return {one: seen for one in found} if seen else {}


def _parse(text: str | None) -> ast.Module | None:
    try:
        return oldsyntax.parse(text) if text is not None else None
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
