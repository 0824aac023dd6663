"""Whether a TensorFlow 1 graph seed still holds when the ops are built: `tf.reset_default_graph()` drops it.

`tf.set_random_seed(s)` in graph mode sets the seed of the current default graph. `tf.reset_default_graph()`
replaces that graph with a new one, whose seed is unset: the ops built after the reset take no seed from the
earlier call, and differ from run to run (tf.compat.v1.reset_default_graph's documentation). A notebook that
seeds in an early cell and resets in the cell that builds the model (deepmind/graph_nets's demos) seeds
nothing it trains. Read where the order shows it: a reset in the same scope as the seeding (the module's
own statements, a notebook's cells in order, or one function's body; not a function defined inside it),
after it; for a seeding at module level, also a reset in any function of the module (`main()` resetting
before it builds). A reset before the seeding (`reset_default_graph(); set_random_seed(...)`) is the usual order
and keeps the seed.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator

from kb.scan.nodes import iwalk
from kb.scan.syntax import dotted_name

RESETS = frozenset({"tf.reset_default_graph", "tf.compat.v1.reset_default_graph"})


def _scope(tree: ast.Module, line: int) -> list[ast.stmt]:
    """The statements of the innermost function whose body holds `line` (the module's when none)."""
    body: list[ast.stmt] = tree.body
    while True:
        inner = next((n for stmt in body for n in _own_nodes(stmt)
                      if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                      and n.body[0].lineno <= line <= (n.end_lineno or n.lineno)), None)
        if inner is None:
            return body
        body = inner.body


def _own_nodes(stmt: ast.stmt) -> Iterator[ast.AST]:
    """The nodes of a statement that run in its own scope, and the function definitions met (not walked into)."""
    todo: list[ast.AST] = [stmt]
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Lambda):
            continue
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            todo.extend(ast.iter_child_nodes(node))


def reset_after(tree: ast.Module | None, aliases: dict[str, str], line: int) -> int | None:
    """The line of a `tf.reset_default_graph()` that runs after the seeding at `line` (None: none): later in the
    seeding's own scope or, for a seeding at module level, also in any function of the module (a function
    runs when called, after the module's statements that precede the call)."""
    if tree is None:
        return None
    body = _scope(tree, line)
    found = [n.lineno for stmt in body for n in _own_nodes(stmt)
             if isinstance(n, ast.Call) and n.lineno > line and dotted_name(n.func, aliases) in RESETS]
    if body is tree.body:
        found += [n.lineno for fn in iwalk(tree) if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))
                  for n in iwalk(fn) if isinstance(n, ast.Call) and dotted_name(n.func, aliases) in RESETS]
    return min(found) if found else None


def dropped_condition(tree: ast.Module | None, aliases: dict[str, str], line: int) -> str | None:
    """The condition a seeding at `line` holds under when a reset follows it (None: no reset follows)."""
    reset = reset_after(tree, aliases, line)
    if reset is None:
        return None
    return (f"the ops are built before tf.reset_default_graph() at line {reset}, which makes a new default graph "
            "without the seed")


_DEFAULT_SESSION = frozenset({"tf.get_default_session", "tf.compat.v1.get_default_session"})


def first_use_guard(test: ast.expr, dotted: Callable[[ast.AST], str | None]) -> bool:
    """`if tf.get_default_session() is None:` (or `if not tf.get_default_session():`): the guard of a set-up
    helper that runs its body once per process, on the first call (tkarras/progressive_growing_of_gans's
    `init_tf` seeds the graph and opens the default session under it). A process starts with no default
    session, so the first call runs the body: a setting under it holds as if unguarded."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        probe: ast.expr = test.operand
    elif isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Is, ast.Eq)) \
            and isinstance(test.comparators[0], ast.Constant) and test.comparators[0].value is None:
        probe = test.left
    else:
        return False
    return isinstance(probe, ast.Call) and not probe.args and dotted(probe.func) in _DEFAULT_SESSION
