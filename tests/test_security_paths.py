"""A lint check: no function of the public query API builds a file path from its arguments.

`kb.status()` is called by services with request data; a name that selects a file
(`framework` -> data/api/<framework>.txt) must come from the index's own table, never from
the caller's string. The check follows each argument through assignments, f-strings,
concatenation and calls into the path builders; a lookup in a trusted table
(`known[known.index(name)]`) yields the table's value, not the caller's.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
API_MODULES = (*(f"kb/query/{m}.py" for m in ("__init__", "state", "names", "cover", "evidence", "evaluate")),
               "kb/__init__.py", "kb/versions.py", "kb/bounds.py", "kb/errors.py", "kb/model.py")
SINKS = {"open", "Path", "join", "isfile", "exists", "isdir", "listdir", "scandir", "read_text", "read_bytes",
         "PurePath", "realpath", "abspath", "stat"}


def _tainted(node: ast.AST, names: set[str]) -> bool:
    if isinstance(node, ast.Name):
        return node.id in names
    if isinstance(node, ast.Subscript):  # table[key]: the table's value, whatever the key
        return _tainted(node.value, names)
    if isinstance(node, ast.Call):
        func = node.func
        receiver = _tainted(func.value, names) if isinstance(func, ast.Attribute) else False
        return receiver or any(_tainted(a, names) for a in node.args) or any(_tainted(k.value, names) for k in node.keywords)
    return any(_tainted(child, names) for child in ast.iter_child_nodes(node))


def _sink_name(func: ast.AST) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute) and not isinstance(func.value, ast.Constant):  # not ".".join(...)
        return func.attr
    return None


def paths_from_arguments(source: str) -> list[tuple[int, str]]:
    """(line, function) for each path built from a function's own arguments."""
    found = []
    for fn in ast.walk(ast.parse(source)):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        args = fn.args
        names = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)} - {"self", "cls", "idx"}
        changed = True  # assignments first: propagate to a fixed point
        while changed:
            changed = False
            for node in ast.walk(fn):
                if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and node.value is not None \
                        and _tainted(node.value, names):
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    for target in targets:
                        for name in ast.walk(target):
                            if isinstance(name, ast.Name) and name.id not in names:
                                names.add(name.id)
                                changed = True
                elif isinstance(node, ast.For) and _tainted(node.iter, names):
                    for name in ast.walk(node.target):
                        if isinstance(name, ast.Name) and name.id not in names:
                            names.add(name.id)
                            changed = True
        for node in ast.walk(fn):
            if isinstance(node, ast.Call) and _sink_name(node.func) in SINKS:
                if any(_tainted(a, names) for a in node.args) or any(_tainted(k.value, names) for k in node.keywords):
                    found.append((node.lineno, fn.name))
    return found


@pytest.mark.parametrize("module", API_MODULES)
def test_the_query_api_builds_no_path_from_its_arguments(module: str) -> None:
    assert paths_from_arguments((REPO / module).read_text(encoding="utf-8")) == []


PLANTED = '''
import os.path

def inventory(framework):
    here = os.path.dirname(os.path.abspath(__file__))
    wheel = os.path.join(here, "api", f"{framework}.txt.gz")
    if os.path.isfile(wheel):
        return open(wheel).read()

def via_loop(names):
    for name in names:
        path = "data/" + name
        return open(path)

KNOWN = ("jax", "pytorch")

def clean(framework):
    trusted = KNOWN[KNOWN.index(framework)]
    return open(os.path.join("data", trusted))
'''


def test_the_check_finds_a_planted_path() -> None:
    found = paths_from_arguments(PLANTED)
    assert {name for _, name in found} == {"inventory", "via_loop"}
    assert ("clean" not in {name for _, name in found})
