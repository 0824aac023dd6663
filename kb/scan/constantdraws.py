"""Draws that a comparison with a parameter decides: `if tf.random.uniform([]) < keep_prob` (or numpy's / Python's
unit draws) reaches no result where every value the parameter takes is at or above the top of the draw's range.
kb/scan/callers.py asks this with the values its callers pass."""

from __future__ import annotations

import ast
from collections.abc import Callable

from kb.scan.nodes import iwalk
from kb.scan.syntax import NOT_LITERAL, plain_literal


_UNIFORM = frozenset({"uniform", "random_uniform"})
_UNIT = frozenset({"rand", "random"})  # numpy.random.rand(), random.random(): [0, 1)
_FUNCTIONS = {"less": ast.Lt, "less_equal": ast.LtE, "greater": ast.Gt, "greater_equal": ast.GtE}
_CASTS = frozenset({"cast", "float", "float32", "convert_to_tensor", "constant"})


_Known = Callable[[ast.expr], "tuple[tuple, str] | None"]


def constant_draws(fn: ast.AST, bound_values: _Known) -> list[tuple[ast.Call, str]]:
    """(draw, why) for each draw in `fn` compared with a bound it never reaches (RULES Y1-2): `tf.less(
    tf.random.uniform([], 0, 1), p)` where p holds 1.0 at every call is always true, so the drawn number reaches
    no result. Only a draw of known range (`uniform` / `random_uniform` with literal or default bounds, `rand()`,
    `random()`) compared by `<`, `<=`, `>`, `>=` or `less`, `less_equal`, `greater`, `greater_equal` with a bound
    at or above its top; `bound_values(expr)`: the values a bound that is not a literal takes and why, or None."""
    out = []
    for node in iwalk(fn):
        pair = _comparison(node)
        if pair is None:
            continue
        draw, op, bound = pair
        top = _top(draw)
        if top is None:
            continue
        found = _bound(bound, bound_values)
        if found is None:
            continue
        values, because = found
        if not values or not all(isinstance(v, (int, float)) and not isinstance(v, bool) and v >= top for v in values):
            continue
        shown = " or ".join(repr(v) for v in values)
        truth = "true" if op in (ast.Lt, ast.LtE) else "false"
        out.append((draw, f"the number drawn here is only compared with {ast.unparse(bound)} ({shown}), at or above "
                          f"the top of its range ({top!r}): the comparison is always {truth}, so the draw reaches no "
                          f"result{': ' + because if because else ''}"))
    return out


def _comparison(node: ast.AST) -> tuple[ast.Call, type, ast.expr] | None:
    """(the draw, the operator as `draw <op> bound`, the bound) of `draw < bound` or `less(draw, bound)`."""
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.left, ast.Call) \
            and type(node.ops[0]) in _FUNCTIONS.values():
        return node.left, type(node.ops[0]), node.comparators[0]
    if isinstance(node, ast.Call) and len(node.args) == 2 and not node.keywords and isinstance(node.args[0], ast.Call):
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
        if name in _FUNCTIONS:
            return node.args[0], _FUNCTIONS[name], node.args[1]
    return None


def _top(draw: ast.Call) -> float | None:
    """The top of a draw's range ([minval, maxval)), where the call says it in literals."""
    func = draw.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
    if name in _UNIT and not draw.args and not draw.keywords:
        return 1.0
    if name not in _UNIFORM or len(draw.args) > 3:
        return None
    given = dict(zip(("shape", "minval", "maxval"), draw.args))
    given.update({k.arg: k.value for k in draw.keywords if k.arg in ("minval", "maxval")})
    low = plain_literal(given["minval"]) if "minval" in given else 0
    high = plain_literal(given["maxval"]) if "maxval" in given else 1
    if not isinstance(low, (int, float)) or not isinstance(high, (int, float)) or isinstance(low, bool) \
            or isinstance(high, bool) or high <= low:
        return None
    return float(high)


def _bound(node: ast.expr, bound_values: _Known) -> tuple[tuple, str] | None:
    """The values of the bound: a literal, or what `bound_values` says, through `tf.cast(x, ...)` / `float(x)`."""
    while isinstance(node, ast.Call) and node.args and not isinstance(node.args[0], ast.Starred):
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
        if name not in _CASTS:
            return None
        node = node.args[0]
    value = plain_literal(node)
    return ((value,), "") if value is not NOT_LITERAL else bound_values(node)
