"""Code that only another release of PyTorch runs (RULES R4: code that never runs at the version asked about).

A scan answers for one pinned release. A branch under a test of `torch.__version__` that fails at that release
never runs there: `if torch.__version__.startswith("1.")`, `if any(torch.__version__.startswith(x) for x in
["1.7.", "1.8."])` (rosinality/stylegan2-pytorch's and NVlabs' conv2d_gradfix, widely copied), and `and`/`or`
of such tests. So does the branch under a call of a module-level predicate of the same file whose every
`return` of a value that may be true sits under such a failing test (`could_use_op`, `_should_use_custom_op`:
they return True only on the old releases they were written for). In a file no installable package holds
(a library's users may call anything), a module-level function or class that is named only inside such
branches (in its own file, and by no other file's import, attribute or string) never runs either, and
neither does what it defines (the custom autograd Function built inside `conv2d_gradfix()`).

A test the pin does not decide (`startswith("2.11.1")` at a pin of 2.11: the patch release is unknown) is
not read as failing. Only files whose text has `__version__` are parsed, so the pass costs nothing elsewhere.
"""

from __future__ import annotations

import ast
import re

from kb.scan import oldsyntax, resolve, scope, sources
from kb.scan.nodes import iwalk

Spans = dict[str, list[tuple[int, int, str]]]
_Def = ast.FunctionDef | ast.AsyncFunctionDef
_NESTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def never(modules: dict[str, resolve.Module], texts: sources.Texts, scripts: set[str], graph: scope.Graph,
          torch_version: str | None, parsed: dict[str, ast.Module | None] | None = None) -> Spans:
    """Path -> (first line, last line, why) of the code the pinned torch release never runs."""
    out: Spans = {}
    if not torch_version:
        return out
    for path in modules:
        if not path.endswith(".py"):
            continue  # a notebook's cells are placed by their own lines; none was seen testing the version
        text = texts.get(path)
        if not text or "__version__" not in text:
            continue
        tree = (parsed or {}).get(path)
        if tree is None:
            try:
                tree = oldsyntax.parse(text)
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                continue
        aliases = _torch_aliases(tree)
        if not aliases:
            continue
        gate = _Gate(aliases, torch_version)
        spans = gate.branches(tree)
        if spans and path in scripts:
            spans += _unused(path, tree, spans, modules, texts, graph, torch_version)
        if spans:
            out[path] = spans
    return out


def why(spans: Spans, path: str, line: int) -> str | None:
    """The reason a line of `path` never runs at the pinned release, or None."""
    return next((reason for first, last, reason in spans.get(path, ()) if first <= line <= last), None)


def _torch_aliases(tree: ast.Module) -> set[str]:
    return {alias.asname or alias.name for node in iwalk(tree) if isinstance(node, ast.Import)
            for alias in node.names if alias.name == "torch"}


def _decided_false(prefix: str, release: str) -> bool:
    """`torch.__version__.startswith(prefix)` is False at every version of the pinned release (`2.11` is
    2.11.x, with any local suffix such as +cu121)."""
    dotted = release + "."
    return not (dotted.startswith(prefix) or prefix.startswith(dotted) or prefix == release)


class _Gate:
    """The failing version tests of one file, and its predicates that never return true."""

    def __init__(self, aliases: set[str], release: str) -> None:
        self.aliases, self.release = aliases, release
        self.predicates: set[str] = set()

    def _version(self, node: ast.AST) -> bool:
        return isinstance(node, ast.Attribute) and node.attr == "__version__" and isinstance(node.value, ast.Name) \
            and node.value.id in self.aliases

    def _startswith(self, node: ast.AST) -> ast.expr | None:
        """The argument of `torch.__version__.startswith(arg)`, or None."""
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "startswith" \
                and self._version(node.func.value) and len(node.args) == 1 and not node.keywords:
            return node.args[0]
        return None

    def _prefixes_fail(self, node: ast.AST | None) -> bool:
        items = node.elts if isinstance(node, (ast.Tuple, ast.List)) else [node]
        return bool(items) and all(isinstance(i, ast.Constant) and isinstance(i.value, str)
                                   and _decided_false(i.value, self.release) for i in items)

    def fails(self, test: ast.AST) -> bool:
        """The test is false at the pinned release."""
        if isinstance(test, ast.BoolOp):
            results = [self.fails(v) for v in test.values]
            return any(results) if isinstance(test.op, ast.And) else all(results)
        given = self._startswith(test)
        if given is not None:
            return self._prefixes_fail(given)
        if isinstance(test, ast.Call) and isinstance(test.func, ast.Name):
            if test.func.id in self.predicates:
                return True
            if test.func.id == "any" and len(test.args) == 1 and not test.keywords \
                    and isinstance(gen := test.args[0], (ast.GeneratorExp, ast.ListComp)) and len(gen.generators) == 1:
                loop = gen.generators[0]
                given = self._startswith(gen.elt)
                return not loop.ifs and isinstance(loop.target, ast.Name) and isinstance(given, ast.Name) \
                    and given.id == loop.target.id and self._prefixes_fail(loop.iter)
        return False

    def branches(self, tree: ast.Module) -> list[tuple[int, int, str]]:
        """The bodies of the `if`s whose test fails, after finding the file's never-true predicates."""
        for node in tree.body:
            if isinstance(node, _Def) and not node.decorator_list and self._never_true(node):
                self.predicates.add(node.name)
        out = []
        for branch in iwalk(tree):
            if isinstance(branch, (ast.If, ast.IfExp)) and self.fails(branch.test):
                body: list[ast.stmt] | list[ast.expr] = branch.body if isinstance(branch, ast.If) else [branch.body]
                first, last = body[0].lineno, body[-1].end_lineno or body[-1].lineno
                out.append((first, last, f"only another torch release takes this branch ({_text(branch.test)}); the "
                                         f"scan answers for torch {self.release}"))
        return out

    def _never_true(self, fn: _Def) -> bool:
        """Every `return` of a value that may be true is under a failing test, and at least one is."""
        gated: list[bool] = []
        if any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in _own(fn.body)):
            return False

        def visit(stmts: list[ast.stmt], dead: bool) -> bool:
            for stmt in stmts:
                if isinstance(stmt, _NESTED):
                    continue
                if isinstance(stmt, ast.Return):
                    value = stmt.value
                    if value is None or (isinstance(value, ast.Constant) and not value.value):
                        continue
                    if not dead:
                        return False
                    gated.append(True)
                    continue
                if isinstance(stmt, ast.If):
                    if not visit(stmt.body, dead or self.fails(stmt.test)) or not visit(stmt.orelse, dead):
                        return False
                    continue
                for field in ("body", "orelse", "finalbody", "handlers", "cases"):
                    block = getattr(stmt, field, None)
                    if isinstance(block, list):
                        inner = [s for b in block for s in (b.body if isinstance(b, (ast.ExceptHandler, ast.match_case)) else [b])]
                        if not visit(inner, dead):
                            return False
            return True

        return visit(fn.body, False) and bool(gated)


def _own(stmts: list[ast.stmt]) -> list[ast.AST]:
    """The nodes of a function's body outside the functions and classes it defines."""
    out: list[ast.AST] = []
    todo: list[ast.AST] = list(stmts)
    while todo:
        node = todo.pop()
        out.append(node)
        todo.extend(child for child in ast.iter_child_nodes(node) if not isinstance(child, _NESTED))
    return out


def _text(node: ast.AST) -> str:
    text = ast.unparse(node)
    return text if len(text) <= 70 else text[:67] + "..."


def _unused(path: str, tree: ast.Module, spans: list[tuple[int, int, str]], modules: dict[str, resolve.Module],
            texts: sources.Texts, graph: scope.Graph, release: str) -> list[tuple[int, int, str]]:
    """The module-level functions and classes of a script file named only inside the branches that never run
    (followed: one named only inside such a function never runs either), and by no other file."""
    defs = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and not n.decorator_list]
    if not defs:
        return []
    refs: dict[str, list[tuple[int, int]]] = {}  # name -> (line, col) of each Name or .attribute naming it
    for node in iwalk(tree):
        if isinstance(node, ast.Name):
            refs.setdefault(node.id, []).append((node.lineno, node.col_offset))
        elif isinstance(node, ast.Attribute):
            refs.setdefault(node.attr, []).append((node.end_lineno or node.lineno, -1))
    dead = [(first, last) for first, last, _ in spans]
    out: list[tuple[int, int, str]] = []
    changed = True
    while changed:
        changed = False
        for node in defs:
            first, last = node.lineno, node.end_lineno or node.lineno
            if (first, last) in dead:
                continue
            uses = [line for line, _ in refs.get(node.name, ()) if not first <= line <= last]
            if not uses or not all(any(a <= line <= b for a, b in dead) for line in uses):
                continue
            if _named_elsewhere(path, node.name, modules, texts, graph):
                continue
            dead.append((first, last))
            out.append((first, last, f"{node.name} is named only in branches torch {release} never takes"))
            changed = True
    return out


def _named_elsewhere(path: str, name: str, modules: dict[str, resolve.Module], texts: sources.Texts,
                     graph: scope.Graph) -> bool:
    """Another file may use the name: it imports it from this file, reads `.name` or writes it as a string
    (a file that cannot be read counts as a use). `from pkg import name` where pkg.name is this very file
    imports the module, not the function."""
    word = re.compile(rf"\b{re.escape(name)}\b")
    attribute = re.compile(rf"\.\s*{re.escape(name)}\b|[\"']{re.escape(name)}[\"']")
    for other, module in modules.items():
        if other == path:
            continue
        text = texts.get(other)
        if text is None:
            return True
        if not word.search(text):
            continue
        if attribute.search(text):
            return True
        for module_name, level, names in module.layout.imports:
            if name in names and graph.resolve(other, module_name, level) == path:
                return True
            if name in names and graph.resolve(other, f"{module_name}.{name}" if module_name else name, level) != path \
                    and graph.resolve(other, module_name, level) is None:
                return True  # imported from a module the scan does not hold: it may be anything
    text = texts.get(path) or ""
    return bool(re.search(rf"[\"']{re.escape(name)}[\"']", text))
