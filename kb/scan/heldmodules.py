"""Module instances held in one place and only called or looked into there: `self.inception = InceptionV3()` of a
class (or `net = Net().cuda()` in a function), read only as `self.inception(batch)`, as `self.inception.eval()`,
`.to(device)`, `.load_state_dict(...)` or any other attribute but `forward`. Calling such a holder runs the class's
forward; nothing else does. kb/scan/hostcode.py records where each such call is made (under torch.no_grad() or
not) and which constructions are held otherwise (`loose`); its settle then treats the class's forward as a function
whose every use is one of those calls, across files: a metric network (FID's Inception, an LPIPS net) built by an
evaluator of another file and called only under no_grad never records a gradient, so the backward records of its
forward (and of the methods only forward calls) do not apply. Only what the holder's own scope reads is seen: a
holder that escapes (handed on, returned, stored again) keeps its class loud.
"""

from __future__ import annotations

import ast

from kb.scan.nodes import iwalk
from kb.scan.syntax import statements_in

# what may be done to an instance other than call it, on its way to its holder (`Net().cuda().eval()`)
_CHAIN = frozenset({"to", "cuda", "cpu", "train", "eval", "float", "double", "half", "requires_grad_"})
# the attributes whose read may run the forward itself
_RUNS_FORWARD = frozenset({"forward", "__call__"})


def _made(value: ast.expr) -> ast.Call | None:
    """The construction `C(...)` (or `m.C(...)`) that `value` is, through a chain of `.to()`/`.eval()` on it."""
    while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in _CHAIN:
        value = value.func.value
    if isinstance(value, ast.Call) and isinstance(value.func, (ast.Name, ast.Attribute)) \
            and not any(isinstance(a, ast.Starred) for a in value.args):
        return value
    return None


def _class_name(made: ast.Call) -> str:
    func = made.func
    if isinstance(func, ast.Name):
        return func.id
    return func.attr if isinstance(func, ast.Attribute) else ""


def constructed(scope: ast.AST, keys: set[str], attribute: bool) -> set[str]:
    """The keys some statement of the scope binds to a construction (`self.x = C(...)`, `x = C(...)`): a cheap
    look at its statements alone, before scan_scope walks every node of it."""
    found: set[str] = set()
    for stmt in statements_in(scope):
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and _made(stmt.value) is not None:
            key = _key(stmt.targets[0], attribute)
            if key in keys:
                found.add(key)
    return found


def _key(node: ast.AST, attribute: bool) -> str | None:
    """The holder a node names: `self.x` in a class, a plain name in a function."""
    if attribute:
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
            return node.attr
        return None
    return node.id if isinstance(node, ast.Name) else None


def scan_scope(scope: ast.AST, calls: dict[int, tuple[str, str]], made_ids: set[int], attribute: bool,
               keys: set[str] | None = None) -> None:
    """Adds to `calls` and `made_ids` (held's answer) the holders of one class (`attribute`: `self.x`) or function
    (a local name), of `keys` only where given (the holders kb/scan/hostcode.py saw called under no_grad)."""
    parents: dict[int, ast.AST] = {}
    made: dict[str, list[ast.Call]] = {}
    bad: set[str] = set()
    reads: dict[str, list[ast.AST]] = {}
    for parent in iwalk(scope):
        for child in ast.iter_child_nodes(parent):
            parents[id(child)] = parent
        if not attribute and isinstance(parent, ast.arg):
            bad.add(parent.arg)  # a parameter: bound by the caller
        if not attribute and isinstance(parent, (ast.Global, ast.Nonlocal)):
            bad.update(parent.names)
        key = _key(parent, attribute)
        if key is None or (keys is not None and key not in keys):
            continue
        ctx = getattr(parent, "ctx", None)
        if isinstance(ctx, ast.Load):
            reads.setdefault(key, []).append(parent)
        elif isinstance(ctx, ast.Store):
            assign = parents.get(id(parent))
            value = _made(assign.value) if isinstance(assign, ast.Assign) and assign.targets == [parent] else None
            if value is None or not _class_name(value)[:1].isupper():
                bad.add(key)
            else:
                made.setdefault(key, []).append(value)
        else:
            bad.add(key)  # del
    for key, values in made.items():
        names = {_class_name(v) for v in values}
        if key in bad or len(names) != 1 or (not attribute and len(values) != 1):
            continue
        found: list[int] = []
        for read in reads.get(key, []):
            up = parents.get(id(read))
            if isinstance(up, ast.Call) and up.func is read:
                found.append(id(up))
            elif not (isinstance(up, ast.Attribute) and up.attr not in _RUNS_FORWARD):
                break  # handed on, returned, compared: it may be called anywhere
        else:
            name = names.pop()
            calls.update((k, (name, key if attribute else "")) for k in found)
            made_ids.update(id(v) for v in values)
