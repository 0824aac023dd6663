"""Whether a seed the code passes to a seeding call is one the program draws itself, unseeded (RULES X2-2).

`tf.random.set_seed(a.seed)` fixes TensorFlow's sequences only when `a.seed` is a fixed value. A program that,
when an option is left unset, fills the seed in with a draw of its own (`if a.seed is None: a.seed =
random.randint(0, 2**31 - 1)`, `seed = args.seed or np.random.randint(1 << 30)`, `int(time.time())`) runs
with a different seed every time in those runs: the call is not the seeding fix there. Read where the code
shows it: an attribute (`a.seed`, spelt the same) that some assignment of the module, or a name that the
enclosing function or the module's top level, sets to an expression calling Python's or NumPy's global
generator, `secrets`, `os.urandom` or the clock. A draw from Python's or NumPy's global generator that
follows, in the same body, an unconditional `random.seed(<int>)` / `np.random.seed(<int>)` is the same
number every run (NVlabs/stylegan's `init_tf` seeds NumPy, then draws the TensorFlow seed from it): no draw.
"""

from __future__ import annotations

import ast

from kb.scan.context import Context
from kb.scan.nodes import iwalk

_DRAWS = ("random.", "numpy.random.", "secrets.")
_CLOCKS = frozenset({"time.time", "time.time_ns", "time.perf_counter", "os.urandom", "os.getpid", "uuid.uuid4"})


def drawn(ctx: Context, node: ast.AST | None) -> bool:
    """The seed expression (a name or attribute) is somewhere in the module assigned an unseeded draw."""
    if not isinstance(node, (ast.Name, ast.Attribute)) or ctx.tree is None:
        return False
    spelt = ast.dump(node, annotate_fields=False).replace("Load()", "").replace("Store()", "")
    where: list[ast.AST] = [ctx.tree]
    if isinstance(node, ast.Name):  # a plain name: the enclosing function's, or the module's own statements
        where = [ctx.fn_nodes[-1]] if ctx.fn_nodes else []
        where += [s for s in ctx.tree.body if not isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    for sub in (n for w in where for n in iwalk(w)):
        if not isinstance(sub, (ast.Assign, ast.AnnAssign, ast.AugAssign)) or sub.value is None:
            continue
        targets = sub.targets if isinstance(sub, ast.Assign) else [sub.target]
        if any(ast.dump(t, annotate_fields=False).replace("Load()", "").replace("Store()", "") == spelt for t in targets) \
                and _draws(ctx, sub.value, _seeded_before(ctx, sub)):
            return True
    return False


def _draws(ctx: Context, value: ast.AST, seeded: frozenset[str] = frozenset()) -> bool:
    for sub in iwalk(value):
        if isinstance(sub, ast.Call):
            written = ctx.written(sub.func) or ""
            if written in _CLOCKS or (written.startswith(_DRAWS) and (
                    not written.startswith(tuple(seeded)) or written.endswith(_OWN_ENTROPY))):
                return True
    return False


# Generators that take their state from the OS, not from the seeded global one, when made without a seed.
_OWN_ENTROPY = ("default_rng", "RandomState", "Generator", "SeedSequence", "SystemRandom", "Random")
_SEEDERS = {"random.seed": "random.", "numpy.random.seed": "numpy.random."}


def _seeded_before(ctx: Context, assign: ast.stmt) -> frozenset[str]:
    """The global generators ("random.", "numpy.random.") that a statement of the body holding `assign`
    (the module's, or a function's), before the statement holding it, seeds with an int literal: every
    run reaches `assign` with that generator in the same state, so what it draws there is fixed. A seeding
    under an `if`, a loop or a `try` is not counted (it may not run), nor one of another body."""
    if ctx.tree is None:
        return frozenset()
    bodies = [ctx.tree.body] + [n.body for n in iwalk(ctx.tree)
                                if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                                and n.lineno <= assign.lineno <= (n.end_lineno or n.lineno)]
    out: set[str] = set()
    for body in bodies:
        holder = next((s for s in body if s.lineno <= assign.lineno <= (s.end_lineno or s.lineno)), None)
        if holder is None:
            continue
        for stmt in body:
            if stmt is holder:
                break
            call = stmt.value if isinstance(stmt, ast.Expr) else None
            if not isinstance(call, ast.Call):
                continue
            prefix = _SEEDERS.get(ctx.written(call.func) or "")
            given = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "seed"), None)
            if prefix and isinstance(given, ast.Constant) and isinstance(given.value, int) \
                    and not isinstance(given.value, bool):
                out.add(prefix)
    return frozenset(out)


def arguments(ctx: Context, name: str, node: ast.Call) -> tuple[object, tuple[tuple[str, object], ...]]:
    """(first argument, keywords) of a watched call as a setting reads them; a `set_seed` / `set_random_seed`
    whose seed the module draws unseeded (drawn) sets no seed: its seed reads as None."""
    kwargs = tuple((k.arg, ctx.literal(k.value)) for k in node.keywords if k.arg)
    first: object = ctx.literal(node.args[0]) if node.args else None
    if name.endswith(("set_seed", "set_random_seed")) and drawn(
            ctx, node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "seed"), None)):
        first, kwargs = None, tuple(kw for kw in kwargs if kw[0] != "seed")
    return first, kwargs
