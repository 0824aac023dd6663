"""Whether an `if` test is true exactly where a CUDA GPU is in use (for the visitor's conditions).

A fix set under such a test (`if args.cuda: torch.backends.cudnn.deterministic = True`, with `args.cuda =
torch.cuda.is_available()`) holds in every run that reaches a GPU kernel: where the test fails the program runs on
the CPU, where the GPU records do not apply. So the setting is read as unconditional for them, not as one that
holds only under a condition (jxhe/vae-lagging-encoder's image.py).
"""

from __future__ import annotations

import ast
import weakref
from collections.abc import Callable

from kb.scan import nodes

_AVAILABLE = "torch.cuda.is_available"
_DEPTH = 3
# tree -> target text -> the values assigned to it, for files that call torch.cuda.is_available (else None): one
# walk per file, and none for the files that never ask (kept only as long as the tree)
_ASSIGNED: weakref.WeakKeyDictionary[ast.AST, dict[str, list[ast.expr]] | None] = weakref.WeakKeyDictionary()


def on_gpu(test: ast.expr, dotted: Callable[[ast.AST], str | None], tree: ast.AST | None, lines: list[str]) -> bool:
    """`torch.cuda.is_available()`, or a name or attribute (`args.cuda`, `use_cuda`) every assignment of which in the
    file is an expression that holds it in a conjunction (`not args.no_cuda and torch.cuda.is_available()`)."""
    if tree is None:
        return False
    if tree not in _ASSIGNED:  # a file whose text never says is_available has no such test: no walk of its tree
        _ASSIGNED[tree] = _assignments(tree) if any("is_available" in line for line in lines) else None
    assigned = _ASSIGNED[tree]
    return assigned is not None and _holds(test, dotted, assigned, _DEPTH)


def _assignments(tree: ast.AST) -> dict[str, list[ast.expr]]:
    out: dict[str, list[ast.expr]] = {}
    for n in nodes.statements(tree):  # an assignment is a statement: the expressions need no walk
        if isinstance(n, ast.Assign):
            for t in n.targets:
                if isinstance(t, (ast.Name, ast.Attribute)):
                    out.setdefault(_text(t), []).append(n.value)
    return out


def _text(node: ast.expr) -> str:
    """ast.unparse's text of a target, built by hand for a dotted name (most targets): unparse costs more than the
    rest of the file's walk."""
    parts: list[str] = []
    inner = node
    while isinstance(inner, ast.Attribute):
        parts.append(inner.attr)
        inner = inner.value
    if not isinstance(inner, ast.Name):
        return ast.unparse(node)
    return ".".join([inner.id, *reversed(parts)])


def _holds(node: ast.expr, dotted: Callable[[ast.AST], str | None], assigned: dict[str, list[ast.expr]], depth: int) -> bool:
    if depth <= 0:
        return False
    if isinstance(node, ast.Call):
        return not node.args and dotted(node.func) == _AVAILABLE
    if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And):
        return any(_holds(v, dotted, assigned, depth) for v in node.values)  # false wherever CUDA is not available
    if isinstance(node, (ast.Name, ast.Attribute)):
        values = assigned.get(_text(node), [])
        return bool(values) and all(_holds(v, dotted, assigned, depth - 1) for v in values)
    return False
