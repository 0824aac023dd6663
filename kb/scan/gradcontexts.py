"""A code base's own context managers that turn gradients off (`with _inference_mode():`).

suno-ai/bark runs its models only inside `with _inference_mode():`, a function of the same file written with
`@contextlib.contextmanager` that yields inside `torch.inference_mode()` and `torch.no_grad()`. Read by name, that
`with` is an unknown context, so the model code it reaches was taken to record gradients; read through the
function, it is the same as writing `torch.inference_mode()` there.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from kb.scan.syntax import last_name


def with_own_contexts(tree: ast.Module, no_grad: Callable[[ast.expr], bool]) -> Callable[[ast.expr], bool]:
    """`no_grad` (a test of a `with` item or decorator), widened to calls of the module's own context managers
    that yield only inside a context `no_grad` accepts."""
    own = {node.name for node in tree.body if isinstance(node, ast.FunctionDef)
           and any(last_name(d) == "contextmanager" for d in node.decorator_list) and _yields_without_grad(node, no_grad)}
    if not own:
        return no_grad

    def widened(expr: ast.expr) -> bool:
        if no_grad(expr):
            return True
        return isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id in own

    return widened


def _yields_without_grad(fn: ast.FunctionDef, no_grad: Callable[[ast.expr], bool]) -> bool:
    """Every `yield` of the function (not of functions nested in it) is inside a `with` one of whose items turns
    gradients off; and it yields at all."""
    found = [False]

    def visit(node: ast.AST, quiet: bool) -> bool:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                continue
            if isinstance(child, (ast.Yield, ast.YieldFrom)):
                if not quiet:
                    return False
                found[0] = True
            inner = quiet or (isinstance(child, ast.With) and any(no_grad(item.context_expr) for item in child.items))
            if not visit(child, inner):
                return False
        return True

    return visit(fn, False) and found[0]
