"""The functions of one file that run only where no gradient is recorded (for kb/scan/resolve.py).

quiet_functions: those called only inside `with torch.no_grad():` (or from a function decorated so), those
handed to a data pipeline's `.map(...)`, and those only such functions call. One walk of the file, whose
nodes it reads with kb/scan/gradient.py's table of the node classes that may hold a name or a call; whether
another file uses such a function is kb/scan/run.py's to tell, and following them across files
kb/scan/hostcode.py's.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

from kb.scan.factories import MAPPED, Factories
from kb.scan.gradient import HOLDS
from kb.scan.survey import FIELDS
from kb.scan.syntax import inner_statements, last_name

# Methods that hand each element of a data pipeline to a function (tf.data's Dataset.map/interleave/flat_map/
# filter, a datasets.Dataset's map): what that function computes feeds the model as data, never differentiated.
PIPELINE_STAGES = frozenset({"map", "interleave", "flat_map", "parallel_interleave", "filter"})
# TF 1's fused map-and-batch stage (`tf.contrib.data.map_and_batch(fn, batch_size)`, later
# `tf.data.experimental.map_and_batch`), applied with `dataset.apply(...)`: fn runs in the pipeline as `.map(fn)`'s does
_MAP_AND_BATCH = "map_and_batch"


def maps_and_batches(func: ast.expr) -> bool:
    """`map_and_batch(...)` or `<module>.map_and_batch(...)`."""
    return last_name(func) == _MAP_AND_BATCH


def quiet_functions(tree: ast.Module, no_grad: Callable[[ast.expr], bool],
                    dotted: Callable[[ast.AST], str | None]) -> tuple[tuple[str, int, int, str], ...]:
    """(name, first line, last line, why) of each function of the file, module-level or nested in another
    function, every use of which in the scope that names it runs it where no gradient is recorded: a call
    inside `with torch.no_grad():` (or a function decorated so), the function handed to a data pipeline's
    `.map(...)` (not `jax.lax.map`), or a call from a function that itself runs only so (what a mapped
    function calls runs in the pipeline too). A nested function is as often the mapped one as a module-level
    one (`def _pp(data): ...` inside `get_data`, then `data.map(_pp)`); a name resolves to the def of the
    innermost enclosing function that defines it, as Python does. Whether another file uses it is for
    kb/scan/run.py to tell."""
    scopes = _function_scopes(tree)
    if not any(scopes.values()):
        return ()
    # (scope, name) -> per use: why it records no gradient there (None: it may), and the function whose body
    # makes the call (its own quiet makes the call quiet)
    uses: dict[tuple[int, str], list[tuple[str | None, tuple[int, str] | None]]] = {}
    handled: set[int] = set()
    factories = Factories(PIPELINE_STAGES, dotted)  # functions a factory returns for a pipeline's .map()

    def resolve(name: str, chain: tuple) -> tuple[int, str] | None:
        for scope in reversed(chain):
            if name in scopes.get(id(scope), {}):
                return (id(scope), name)
        return (id(tree), name) if name in scopes[id(tree)] else None

    # Every node in the order of a recursive walk (iteratively, each class's node fields read from one
    # table, constants and operators never pushed): this walk covers the whole of every file that names
    # no_grad or a pipeline stage. `chain`: the enclosing functions, outermost first; `owner`: the def
    # (scope, name) whose body holds the node, if it is one of `scopes`.
    stack: list[tuple[Any, bool, tuple, tuple[int, str] | None]] = [(tree, False, (), None)]
    pop, fields, holds = stack.pop, FIELDS, HOLDS
    while stack:
        node, quiet, chain, owner = pop()
        kind = type(node)
        if kind is ast.Name:
            key = resolve(node.id, chain)
            if key is not None and id(node) not in handled:
                uses.setdefault(key, []).append((None, None))  # handed on as a value: it may run anywhere
            elif id(node) not in handled:
                factories.variable(node)
            continue
        factories.visit(node, chain, owner, resolve, handled)
        if kind is ast.With or kind is ast.AsyncWith:
            inner = quiet or any(no_grad(item.context_expr) for item in node.items)
            children = [(item.context_expr, quiet, chain, owner) for item in node.items]
            children += [(statement, inner, chain, owner) for statement in node.body]
            stack += reversed(children)
            continue
        if kind is ast.FunctionDef or kind is ast.AsyncFunctionDef:
            inner = quiet or any(no_grad(d) for d in node.decorator_list)
            body = {id(part) for part in node.body}
            mine = resolve(node.name, chain)
            me = mine if mine is not None and node in scopes[mine[0]].get(node.name, ()) else None
            stack += reversed([(part, inner, chain + (node,), me) if id(part) in body else (part, quiet, chain, owner)
                               for part in ast.iter_child_nodes(node)])
            continue
        if kind is ast.Lambda or kind is ast.ClassDef:
            owner = None  # a lambda or a class body runs where it is called, not where its def's body runs
        if kind is ast.Call:
            func = node.func
            key = resolve(func.id, chain) if isinstance(func, ast.Name) else None
            if key is not None:
                uses.setdefault(key, []).append(("it is called only under torch.no_grad()" if quiet else None, owner))
                handled.add(id(func))
            elif (isinstance(func, ast.Attribute) and func.attr in PIPELINE_STAGES and not (dotted(func) or "").startswith("jax.")
                  or maps_and_batches(func)) \
                    and node.args and isinstance(node.args[0], ast.Name) and resolve(node.args[0].id, chain) is not None:
                mapped = resolve(node.args[0].id, chain)
                assert mapped is not None
                uses.setdefault(mapped, []).append((MAPPED, None))
                handled.add(id(node.args[0]))
        children_of: list[tuple[Any, bool, tuple, tuple[int, str] | None]] = []
        for field in fields[kind]:
            value = getattr(node, field, None)
            if type(value) is list:
                children_of += [(child, quiet, chain, owner) for child in value if holds[type(child)]]
            elif holds[type(value)]:
                children_of.append((value, quiet, chain, owner))
        stack += reversed(children_of)

    for key, why in factories.returns():
        uses.setdefault(key, []).append((why, None))
    # A call from a quiet function is quiet: repeat until nothing changes (a function that calls itself
    # counts by its other uses).
    why_of: dict[tuple[int, str], str] = {}
    changed = True
    while changed:
        changed = False
        for key, found in uses.items():
            if key in why_of:
                continue
            reasons = [why or ("" if by == key else why_of.get(by) if by is not None else None) for why, by in found]
            if reasons and all(r is not None for r in reasons) and any(reasons) \
                    and not any(d.decorator_list for d in scopes[key[0]][key[1]]):
                why_of[key] = sorted(r for r in reasons if r)[0]
                changed = True
    out: list[tuple[str, int, int, str]] = []
    for (scope, name), why in why_of.items():
        for fn in scopes[scope][name]:
            out.append((name, fn.lineno, fn.end_lineno or fn.lineno, why))
    return tuple(out)


def _function_scopes(tree: ast.Module) -> dict[int, dict[str, list[ast.FunctionDef | ast.AsyncFunctionDef]]]:
    """id(module or function) -> name -> the functions def'd by that name directly in its body (in its
    compound statements, not in a nested function's or a class's body): what a bare name in it may call."""
    out: dict[int, dict[str, list[ast.FunctionDef | ast.AsyncFunctionDef]]] = {}
    todo: list[ast.AST] = [tree]
    while todo:
        scope = todo.pop()
        defs = out.setdefault(id(scope), {})
        stack = list(getattr(scope, "body", ()))
        while stack:
            item = stack.pop()
            if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                defs.setdefault(item.name, []).append(item)
                todo.append(item)
                continue
            if isinstance(item, ast.ClassDef):
                todo.extend(n for n in item.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))  # methods
                continue
            stack.extend(inner_statements(item))
    return out
