"""Which draws a TensorFlow global seed set inside a function does not reach: those made before the call.

`tf.set_random_seed(s)` (TF 1 graph mode) gives the default graph a seed, and an op takes its seed from the
graph when the op is made; `tf.random.set_seed` and `keras.utils.set_random_seed` likewise seed what runs
after them. A seed set inside a function or a constructor (LantaoYu/SeqGAN's `TARGET_LSTM.__init__` calls
`tf.set_random_seed(66)`) holds for the ops the program makes after that call, not for those made before it:
a `main()` that builds the Generator, then the TARGET_LSTM, then the Discriminator seeds the Discriminator's
draws and not the Generator's. Read the order where the code shows it: in each body (a function's, or the
module's own statements with its `__main__` block) that calls the seeding function, directly or through
other functions, the statements (in source order, not into nested definitions) before the first one that
reaches it; those statements and every function they call, transitively, make their draws before the seed.
In the seeding function itself, the statements before the seeding. A seed set at module level or in the
`__main__` block is not read here (it is set before the functions the program calls later run).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator

from kb.scan import oldsyntax, scope
from kb.scan.nodes import iwalk
from kb.scan.resolve import Setting
from kb.scan.survey import called
from kb.scan.switches import codes_of

Spans = dict[str, list[tuple[int, int]]]  # path -> (first line, last line) of code that draws before the seed


def _linear(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The simple statements of a body in source order, through compound statements, not into definitions."""
    for stmt in body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        inner = [getattr(stmt, f) for f in ("body", "orelse", "finalbody") if isinstance(getattr(stmt, f, None), list)]
        inner += [h.body for h in getattr(stmt, "handlers", ())]
        if not inner:
            yield stmt
            continue
        yield stmt  # the compound statement's own header (its test, iterator, context), before its bodies
        for part in inner:
            yield from _linear(part)


def _defs(tree: ast.Module) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    """Qualified name (as kb/scan/survey.py spells it: `Class.method`, `outer.inner`) -> its definition."""
    out: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
    todo: list[tuple[str, ast.AST]] = [("", tree)]
    while todo:
        prefix, node = todo.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                if not isinstance(child, ast.ClassDef):
                    out[prefix + child.name] = child
                todo.append((prefix + child.name + ".", child))
            elif not isinstance(child, ast.expr):
                todo.append((prefix, child))
    return out


def _own_calls(stmt: ast.stmt) -> Iterator[str]:
    """The called names of a statement's own expressions (for a compound statement: its header only)."""
    parts: list[ast.AST] = [v for f, v in ast.iter_fields(stmt) if f not in ("body", "orelse", "finalbody", "handlers")
                            for v in (v if isinstance(v, list) else [v]) if isinstance(v, ast.AST)]
    for part in parts:
        for node in iwalk(part):
            if isinstance(node, ast.Call) and (name := called(node.func)) is not None:
                yield name


class _Order:
    """The parsed files and their definitions, read once for every seed asked about."""

    def __init__(self, graph: scope.Graph, text: Callable[[str], str | None]) -> None:
        self.graph, self.text = graph, text
        self.trees: dict[str, tuple[ast.Module, dict[str, ast.FunctionDef | ast.AsyncFunctionDef]] | None] = {}

    def _tree(self, path: str) -> tuple[ast.Module, dict[str, ast.FunctionDef | ast.AsyncFunctionDef]] | None:
        if path not in self.trees:
            source = self.text(path)
            try:
                tree = oldsyntax.parse(source, path) if source is not None else None
            except (SyntaxError, ValueError, RecursionError):
                tree = None
            self.trees[path] = (tree, _defs(tree)) if tree is not None else None
        return self.trees[path]

    def body(self, path: str, func: str | None) -> list[ast.stmt] | None:
        parsed = self._tree(path)
        if parsed is None:
            return None
        if func is None:
            return list(_linear(parsed[0].body))
        found = parsed[1].get(func)
        return list(_linear(found.body)) if found is not None else None

    def span(self, path: str, func: str) -> tuple[int, int] | None:
        parsed = self._tree(path)
        found = parsed[1].get(func) if parsed is not None else None
        return (found.lineno, found.end_lineno or found.lineno) if found is not None else None

    def before(self, path: str, setting: Setting) -> Spans:
        """The code that draws before the function-scoped seeding `setting` of `path` runs."""
        node = (path, setting.scope or "")
        graph = self.graph
        callers = graph.ancestors(node)
        reaching = {node} | {c for c in callers if c[1] is not None}
        out: Spans = {}
        funcs: set[tuple[str, str]] = set()
        for where in sorted({node, *callers}, key=lambda c: (c[0], c[1] or "")):
            body = self.body(*where)
            if body is None:
                continue
            if where == node:
                first = next((k for k, s in enumerate(body) if s.lineno <= setting.line <= (s.end_lineno or s.lineno)), None)
            else:
                first = next((k for k, s in enumerate(body)
                              if any(not reaching.isdisjoint(graph.targets(where[0], where[1], name))
                                     for name in _own_calls(s))), None)
            if not first:  # None: reached some way this order does not show; 0: nothing before it
                continue
            for stmt in body[:first]:
                out.setdefault(where[0], []).append((stmt.lineno, stmt.end_lineno or stmt.lineno))
                for name in _own_calls(stmt):
                    funcs.update(graph.targets(where[0], where[1], name))
        todo = list(funcs)
        while todo:  # what those functions call, transitively
            item = todo.pop()
            for callee in graph._callees(*item):
                if callee not in funcs:
                    funcs.add(callee)
                    todo.append(callee)
        for fpath, func in funcs - {node}:
            span = self.span(fpath, func)
            if span is not None:
                out.setdefault(fpath, []).append(span)
        return out


def unseeded(runs: list[scope.Run], graph: scope.Graph, text: Callable[[str], str | None]) -> dict[int, list[Spans]]:
    """Per run (its index): for each global seed the run sets, the code that makes its draws before it, where
    every one of those seeds is set inside a function. A run with a seed at module level or in its `__main__`
    block, or with none, is left out."""
    order: _Order | None = None
    out: dict[int, list[Spans]] = {}
    for k, run in enumerate(runs):
        seeds = [(p, s) for p, s in run.holds if "SEED" in codes_of(s)]
        if not seeds or any(s.scope in (None, "__main__") for _, s in seeds):
            continue
        order = order or _Order(graph, text)
        each = [order.before(p, s) for p, s in seeds]
        if all(each):
            out[k] = each
    return out


def before_seed(spans_of: dict[int, list[Spans]], ids: tuple[int, ...], path: str, line: int) -> bool:
    """Whether a call at `path`:`line` is made before every seed of some run that executes the file."""
    return any(all(any(a <= line <= b for a, b in spans.get(path, ())) for spans in spans_of[k])
               for k in ids if k in spans_of)
