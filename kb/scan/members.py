"""The modules an assignment to `self` makes, and where they are reached: `self.X = nn.Embedding(...)`, and
each module a container holds by name (`self.transformer = nn.ModuleDict(dict(wpe=nn.Embedding(...)))`,
reached as `self.transformer.wpe` or `self.transformer["wpe"]`). The `module` rules of kb/scan/resolvers.py
read each one's uses in its class by its path (`transformer.wpe`), as they read `self.X`'s.
"""

from __future__ import annotations

import ast

from kb.scan.nodes import iwalk, own

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


def returned_to_self(node: ast.Assign, fn: ast.AST | None, cls: ast.ClassDef | None) -> list[tuple[ast.expr, ast.Call]]:
    """(`self.X`, its construction) for a module a method makes in a local name and returns, alone or at one place
    of a tuple, to a statement of its class that keeps it in `self.X` (HKUDS/SSLRec's `init_embedding`, whose
    `user_embedding = nn.Embedding(...)` is returned as `return user_embedding, item_embedding` to `__init__`'s
    `self.user_embedding, self.item_embedding = self.init_embedding()`): what the class does with `self.X` is
    what is done with that module."""
    if not (isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) and cls is not None and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name) and isinstance(node.value, ast.Call)
            and (isinstance(node.value.func, ast.Attribute) and node.value.func.attr[:1].isupper()
                 or isinstance(node.value.func, ast.Name) and node.value.func.id[:1].isupper())):
        return []  # (a module is made by its class: `nn.Embedding(...)`, not `F.relu(...)`)
    name = node.targets[0].id
    places: set[int | None] = set()
    for sub in own(fn):
        if isinstance(sub, ast.Return):
            value = sub.value
            if isinstance(value, ast.Name) and value.id == name:
                places.add(None)
            elif isinstance(value, ast.Tuple):
                places.add(next((k for k, e in enumerate(value.elts) if isinstance(e, ast.Name) and e.id == name), -1))
            else:
                places.add(-1)
    if len(places) != 1 or -1 in places:
        return []
    place = places.pop()
    found: list[tuple[ast.expr, ast.Call]] = []
    for sub in iwalk(cls):
        if not (isinstance(sub, ast.Assign) and len(sub.targets) == 1 and isinstance(sub.value, ast.Call)
                and isinstance(sub.value.func, ast.Attribute) and sub.value.func.attr == fn.name
                and isinstance(sub.value.func.value, ast.Name) and sub.value.func.value.id == "self"):
            continue
        kept: ast.expr | None = sub.targets[0]
        if place is not None:
            kept = kept.elts[place] if isinstance(kept, ast.Tuple) and place < len(kept.elts) else None
        if kept is not None and path(kept) is not None:
            found.append((kept, node.value))
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
