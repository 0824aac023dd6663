"""The expressions a statement hands on as values, as opposed to names it only tests or allows: what the
visitor follows to find an op used as a value (a table of functions, `f = jax.jit if c else jax.pmap`)."""

from __future__ import annotations

import ast


def values(node: ast.expr) -> list[ast.expr]:
    """The expressions that `node` hands on as values: itself, the values of a dict (a table of
    functions), the two branches of `a if c else b`. Not the items of a tuple or list: those name
    classes to test or allow (`isinstance(m, (nn.Linear, nn.Embedding))`, `safe_globals([...])`)."""
    if isinstance(node, ast.Dict):
        return list(node.values)
    if isinstance(node, ast.IfExp):
        return [node.body, node.orelse]
    return [node]


def assigned_values(target: ast.expr, value: ast.expr) -> list[ast.expr]:
    """The expressions an assignment hands on as values: `values`, and the items of a tuple or list that is
    unpacked into names (`func, arg = (jax.jit, 1) if c else (jax.pmap, 2)`) or indexed where it is written
    (`fn = (jax.jit, jax.pmap)[i]`): there each item is a value some name ends up holding, not a class to test."""
    if isinstance(value, ast.IfExp):
        return assigned_values(target, value.body) + assigned_values(target, value.orelse)
    if isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, (ast.Tuple, ast.List)):
        return [v for item in value.elts for v in values(item)]
    if isinstance(value, ast.Subscript) and isinstance(value.value, (ast.Tuple, ast.List)):
        return [v for item in value.value.elts for v in values(item)]
    return values(value)
