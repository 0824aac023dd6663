"""A draw only compared with a bound it never crosses (RULES Y1-2): `tf.less(tf.random.uniform([], 0, 1), p)`
where p holds 1.0 at every call (simclr's `random_apply(func, p, x)` with p=1.0) is always true, so the drawn
number reaches no result: the comparison, not the draw, picks the branch, and it is constant.

Read with `ast` for kb/scan/callers.py, which knows the values a parameter takes; a bound given as a literal
is read too. Only a draw of known range: `uniform` / `random_uniform` with literal `minval` / `maxval` (0 and
1 when left out) and `rand()` / `random()` of [0, 1), compared by `<`, `<=`, `>`, `>=` or their TensorFlow and
NumPy functions (`less`, `less_equal`, `greater`, `greater_equal`) with a bound at or above its top.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from kb.scan.syntax import NOT_LITERAL, plain_literal

_UNIFORM = frozenset({"uniform", "random_uniform"})
_UNIT = frozenset({"rand", "random"})  # numpy.random.rand(), random.random(): [0, 1)
_FUNCTIONS = {"less": ast.Lt, "less_equal": ast.LtE, "greater": ast.Gt, "greater_equal": ast.GtE}
_CASTS = frozenset({"cast", "float", "float32", "convert_to_tensor", "constant"})


Known = Callable[[ast.expr], "tuple[tuple, str] | None"]


def constant_draws(fn: ast.AST, bound_values: Known) -> list[tuple[ast.Call, str]]:
    """(draw, why) for each draw in `fn` compared with a bound it never reaches; `bound_values(expr)`: the
    values a bound that is not a literal takes (a parameter's) and why, or None."""
    out = []
    for node in ast.walk(fn):
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


def _bound(node: ast.expr, bound_values: Known) -> tuple[tuple, str] | None:
    """The values of the bound: a literal, or what `bound_values` says, through `tf.cast(x, ...)` / `float(x)`."""
    while isinstance(node, ast.Call) and node.args and not isinstance(node.args[0], ast.Starred):
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
        if name not in _CASTS:
            return None
        node = node.args[0]
    value = plain_literal(node)
    return ((value,), "") if value is not NOT_LITERAL else bound_values(node)
