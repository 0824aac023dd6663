"""Host random generators handed to a function: a parameter that every call in the file fills with a Python
`random.Random` or a NumPy generator draws on the host (`rng.shuffle(batch)` is NumPy's, not a framework's random
op), read through the callers the visitor's Context knows."""

from __future__ import annotations

import ast

from kb.scan.context import PY_RANDOMS, Context
from kb.scan.nodes import iwalk

NUMPY_GENERATORS = frozenset({"numpy.random.RandomState", "numpy.random.default_rng", "numpy.random.Generator"})


def python_random(ctx: Context, fn: ast.FunctionDef | ast.AsyncFunctionDef, param: str, depth: int = 4) -> str | None:
    """Every call of the module-level function `fn` in this file passes a host generator for `param`: a
    Python `random.Random(...)` ("random") or a NumPy `RandomState` / `default_rng` / `Generator`
    ("numpy"), made in the caller, `self.<attr>` that the caller's class only sets to one, or the
    caller's own parameter of which the same holds (bert's `rng`). The kind, or None."""
    if ctx.called_names is None:
        ctx.called_names = {c.func.id for c in ctx.all_calls if isinstance(c.func, ast.Name)}
    if fn.name not in ctx.called_names or depth <= 0:
        return None
    values = ctx.passed(fn, param)
    if not values:
        return None
    kinds: set[str] = set()
    for value in values:
        kind = _host_generator(ctx, value)
        if kind is not None:
            kinds.add(kind)
            continue
        if not isinstance(value, ast.Name):
            return None
        caller = next((d for d in ctx.defs.values() if d.lineno <= value.lineno <= (d.end_lineno or d.lineno)), None)
        if caller is None or caller is fn or value.id not in [a.arg for a in (*caller.args.posonlyargs, *caller.args.args)] \
                or value.id in ctx.assigned_in(caller):
            return None
        kind = python_random(ctx, caller, value.id, depth - 1)
        if kind is None:
            return None
        kinds.add(kind)
    return kinds.pop() if len(kinds) == 1 else None


def _host_generator(ctx: Context, value: ast.expr) -> str | None:
    """"random" or "numpy" when `value` is a call making a Python or NumPy generator, or `self.<attr>` that
    every `self.<attr> = ...` of the enclosing class sets to such a call."""
    if isinstance(value, ast.Call):
        name = ctx.dotted(value.func) or ""
        return "random" if name in PY_RANDOMS else "numpy" if name in NUMPY_GENERATORS else None
    if isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name) and value.value.id == "self" \
            and ctx.tree is not None:
        cls = next((c for c in iwalk(ctx.tree) if isinstance(c, ast.ClassDef)
                    and c.lineno <= value.lineno <= (c.end_lineno or c.lineno)), None)
        made = ctx.self_assignments(cls).get(value.attr, []) if cls is not None else []
        kinds = {_host_generator(ctx, v) if isinstance(v, ast.Call) else None for v, _ in made}
        return kinds.pop() if len(kinds) == 1 else None
    return None
