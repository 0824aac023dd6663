"""The modules an assignment to `self` makes, and where they are reached: `self.X = nn.Embedding(...)`, and
each module a container holds by name (`self.transformer = nn.ModuleDict(dict(wpe=nn.Embedding(...)))`,
reached as `self.transformer.wpe` or `self.transformer["wpe"]`). The `module` rules of kb/scan/resolvers.py
read each one's uses in its class by its path (`transformer.wpe`), as they read `self.X`'s.
"""

from __future__ import annotations

import ast

from kb.scan.syntax import handed_parts

_DICTS = frozenset({"ModuleDict"})  # containers whose modules are reached by their key


def held(node: ast.Assign) -> list[tuple[ast.expr, ast.Call]]:
    """(the target a module is reached by, its construction): the assignment's own call, and for
    `self.X = ModuleDict(dict(k=M(...)))` or `ModuleDict({"k": M(...)})` each `self.X.k` with its `M(...)`."""
    if len(node.targets) != 1 or not isinstance(node.value, ast.Call):
        return []
    target, value = node.targets[0], node.value
    found: list[tuple[ast.expr, ast.Call]] = [(target, value)]
    name = value.func.attr if isinstance(value.func, ast.Attribute) else value.func.id if isinstance(value.func, ast.Name) else ""
    if name not in _DICTS or path(target) is None or len(value.args) != 1 or value.keywords:
        return found
    given = value.args[0]
    pairs: list[tuple[str | None, ast.expr]] = []
    if isinstance(given, ast.Call) and isinstance(given.func, ast.Name) and given.func.id == "dict" and not given.args:
        pairs = [(k.arg, k.value) for k in given.keywords]
    elif isinstance(given, ast.Dict):
        pairs = [(k.value if isinstance(k, ast.Constant) and isinstance(k.value, str) else None, v)
                 for k, v in zip(given.keys, given.values)]
    for key, made in pairs:
        if key is not None and isinstance(made, ast.Call):
            found.append((ast.Attribute(value=target, attr=key, ctx=ast.Load()), made))
    return found


def path(node: ast.AST | None) -> str | None:
    """`self.a.b` or `self.a["b"]` as "a.b" (None: not reached from `self` by names)."""
    parts: list[str] = []
    while True:
        if isinstance(node, ast.Attribute):
            parts.insert(0, node.attr)
            node = node.value
        elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
            parts.insert(0, node.slice.value)
            node = node.value
        else:
            break
    return ".".join(parts) if parts and isinstance(node, ast.Name) and node.id == "self" else None


def handed_on(node: ast.AST, where: str, made: ast.AST) -> bool:
    """The module at `where` ("a.b"), or a container holding it (`self.a`), handed on as an object
    (`f(self.a)`, `[self.a.b]`, `return self.a`, `y = self.a.b`; not the assignment `made` that creates it)."""
    for part in handed_parts(node, made):
        found = path(part)
        if found is not None and (where == found or where.startswith(found + ".")):
            return True
    return False
