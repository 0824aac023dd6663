"""KB024: every case (an op called one way, kb/case.py) names an op the KB knows and call keys the op has.

A verifier's `cases=` and the sweeps' hand-built units say which call they measure; the merge
attaches what they find to exactly that call (docs/calls.md). A misspelt op or fact there did
not fail anything: the evidence silently attached to no record, or to the wrong call. Each
case's op must be an op or alias of a record or a name of its framework's API inventory
(data/api/<framework>.txt.gz, after the sweep's own spellings: kb/verify/sweepfile.py `kb_op`),
and each call key a call fact (kb/calls.py FACTS, `<tensor>.<fact>`, `<parameter>.len`), a
parameter of the op by its signature (data/api/<framework>.signatures.txt; an op the signatures
lack is not checked, as in KB016), or a note on how the inputs were built (NOTES). A verifier
whose `cases=` cannot be read without running it is reported too.

Read from the source with `ast`, importing no framework: the verifiers' `cases=` (as
verifiers/discover.py reads them) and every `Case(...)` call whose op and call are literals, in
verifiers/ and kb/sweep/. Cases
built at run time (the PyTorch and JAX branch units, whose ops and facts are computed) are
checked by the same `problems()` in tests/test_lint_cases.py, which builds each on the CPU.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from kb import apinames, signatures
from kb.calls import FACTS, is_arg_fact, is_length
from kb.catalog import API_DIR, Catalog
from kb.prefixes import PREFIXES

CODE = "KB024"
TITLE = ("cases: every verifier case and hand-built sweep case names an op the KB knows (a record's or its "
         "framework's inventory) and call keys that are the op's parameters or call facts")

NOTES = ("inputs.", "input.shape", "indices.repeats", "cudnn.")
"""Keys (or key prefixes) a case may add to say how its inputs were built or the call was made,
which no condition names (kb/verify/sweepfile.py `case_call` leaves them out): how many addends
collide, the input's shape, how often an index repeats, the cuDNN setting it ran under
(`cudnn.enabled`)."""
NOTE_SUFFIXES = (".coalesced",)
"""Per-tensor notes no condition names: whether a sparse tensor argument was coalesced."""
HARNESS = ("planted.", "synthetic.", "branch:")
"""Ops of the harness's own proofs (planted operators, synthetic verifiers): no framework's."""
FRAMEWORKS = ("pytorch", "jax", "tensorflow", "keras", "torchvision")
"""Frameworks with an API inventory under data/api/."""


def framework_of(op: str) -> str | None:
    """The framework whose prefix the op carries (kb/prefixes.py), if it has an inventory."""
    for framework in FRAMEWORKS:
        if op.startswith(PREFIXES[framework]):
            return framework
    return None


class Known:
    """What the KB knows of ops: the records' ops and aliases, and each framework's inventory and
    signatures (read once, on first use)."""

    def __init__(self, root: Path, record_ops: set[str]) -> None:
        self.root, self.record_ops = root, record_ops
        self._names: dict[str, frozenset[str]] = {}

    def names(self, framework: str) -> frozenset[str]:
        if framework not in self._names:
            path = apinames.path_of(str(self.root / API_DIR), framework)
            try:  # one that cannot be read is KB012 (kb/catalog.py `_check_inventories`)
                self._names[framework] = apinames.read(path, str(self.root / "data"))
            except ValueError:
                self._names[framework] = frozenset()
        return self._names[framework]

    def params(self, op: str, framework: str) -> tuple | None:
        fields = signatures.table(framework, str(self.root)).get(op)
        return signatures.parse(fields) if fields is not None else None


def problems(op: str | None, call: Mapping[str, Any], known: Known) -> list[str]:
    """Why a case's op or call keys are not ones the KB knows; empty when they are."""
    from kb.verify.sweepfile import kb_op

    if op is None or op.startswith(HARNESS):
        return []
    name = kb_op(op)
    framework = framework_of(name)
    if framework is None:
        return [f"op {op!r} carries no prefix of a framework the KB has an inventory for "
                f"({', '.join(p for f in FRAMEWORKS for p in PREFIXES[f])})"]
    if name not in known.record_ops and name not in known.names(framework):
        return [f"op {op!r} is neither an op of a record nor a name of {framework}'s API inventory ({API_DIR}/{framework}{apinames.SUFFIX})"]
    params = known.params(name, framework)
    if params is None or signatures.open_ended(params):
        return []
    names = signatures.names(params)
    out = []
    for key in call:
        if key in FACTS or key in names or is_length(key, names) or is_arg_fact(key, names) or key.startswith(NOTES) \
                or key.endswith(NOTE_SUFFIXES):
            continue
        out.append(f"{op}: call key {key!r} is not a parameter of the op ({', '.join(names) or 'none'}), nor a call fact "
                   f"({', '.join(FACTS)}, <parameter>.dtype|layout|device|ndim|memory_format, <parameter>.len)")
    return out


def _literal(node: ast.AST | None) -> Any:
    try:
        return ast.literal_eval(node) if node is not None else None
    except (ValueError, SyntaxError, TypeError):
        return None


def literal_cases(tree: ast.Module) -> Iterator[tuple[int, str, dict[str, Any]]]:
    """(line, op, call) of every `Case("op", {...})` whose op and call are literals."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == "Case":
            op = _literal(node.args[0]) if node.args else _literal(next((k.value for k in node.keywords if k.arg == "op"), None))
            call_node = node.args[1] if len(node.args) > 1 else next((k.value for k in node.keywords if k.arg == "call"), None)
            call = _literal(call_node) if call_node is not None else {}
            if isinstance(op, str) and isinstance(call, dict):
                yield node.lineno, op, call


def case_lines(tree: ast.Module, name: str, count: int) -> list[int] | None:
    """The line of each of the `count` cases of the verifier registered as `name`, where its
    `cases=` is a tuple written out (inline or as a module constant); None otherwise."""
    assigned = {t.id: node.value for node in tree.body if isinstance(node, ast.Assign)
                for t in node.targets if isinstance(t, ast.Name)}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or getattr(node.func, "id", getattr(node.func, "attr", None)) != "verifier":
            continue
        if not node.args or _literal(node.args[0]) != name:
            continue
        value = next((k.value for k in node.keywords if k.arg == "cases"), None)
        if isinstance(value, ast.Name):
            value = assigned.get(value.id)
        if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == count:
            return [element.lineno for element in value.elts]
    return None


def sources(root: Path) -> list[Path]:
    """The files cases are written in: verifiers/ and kb/sweep/ (the TensorFlow sweep's specials)."""
    from verifiers.discover import python_files

    out: list[Path] = []
    for folder in (root / "verifiers", root / "kb" / "sweep"):
        if folder.is_dir():
            out.extend(p for p in python_files(folder) if "_shim" not in p.parts and "__pycache__" not in p.parts)
    return out


def check(catalog: Catalog) -> None:
    from kb.lint.verifiers import registered

    record_ops = {op for record in catalog.sources.values() for op in (*record.ops, *record.aliases)}
    known = Known(catalog.root, record_ops)
    for path in sources(catalog.root):
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        except (OSError, SyntaxError, ValueError):
            continue  # not this check's to report: the tests import every module
        for line, op, call in literal_cases(tree):
            for message in problems(op, call, known):
                catalog.report(path, line, CODE, message,
                               "spell the op as its framework does, and each call key as one of the op's parameters "
                               "or a call fact (docs/calls.md); a note on the inputs starts with `inputs.`")
    if (catalog.root / "verifiers").is_dir():
        for name, found in registered(catalog.root).items():
            for message in found.problems:
                catalog.report(found.path, found.line, CODE, f"verifier {name!r}: {message}",
                               "write cases= as a tuple of {'op': ..., 'call': {...}} literals, or a module constant of them")
            checked = [(i, case, problems(case.op, case.call, known)) for i, case in enumerate(found.cases)]
            if not any(found for _, _, found in checked):
                continue
            try:
                lines = case_lines(ast.parse(found.path.read_text(encoding="utf-8")), name, len(found.cases))
            except (OSError, SyntaxError, ValueError):
                lines = None
            for i, _, messages in checked:
                for message in messages:
                    catalog.report(found.path, lines[i] if lines else found.line, CODE,
                                   f"verifier {name!r}, case {i}: {message}",
                                   "spell the op as its framework does (an op of the record the verifier checks), and "
                                   "each call key as one of the op's parameters or a call fact (docs/calls.md)")
