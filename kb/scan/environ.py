"""Environment variables a program sets in its own code (`os.environ["XLA_FLAGS"] = ...`,
`os.environ.setdefault`, `.update`, `os.putenv`): each becomes an `env` setting of the scan, since a
switch such as `CUBLAS_WORKSPACE_CONFIG` or `TF_DETERMINISTIC_OPS` is as often set there as in a shell.

Kept apart from the visitor, which only routes the statements here, so that the visitor stays one
concern: which calls a file makes.
"""

from __future__ import annotations

import ast
from typing import Protocol

from kb.scan.syntax import strings


class Reader(Protocol):
    """What these functions need of the visitor (kb/scan/context.py's public methods)."""

    def dotted(self, node: ast.AST) -> str | None: ...

    def literal(self, node: ast.AST) -> object: ...

    def setting(self, kind: str, name: str, value: object, kwargs: tuple, node: ast.expr | ast.stmt) -> None: ...


def environ_key(reader: Reader, target: ast.AST) -> str | None:
    """'XLA_FLAGS' for os.environ['XLA_FLAGS'] (however os is imported)."""
    if isinstance(target, ast.Subscript) and reader.dotted(target.value) == "os.environ":
        key = reader.literal(target.slice)
        return key if isinstance(key, str) else None
    return None


def set_env(reader: Reader, key: str, value: ast.AST, node: ast.expr | ast.stmt) -> None:
    reader.setting("env", key, strings(value), (), node)


def environ_call(reader: Reader, name: str, node: ast.Call) -> None:
    """os.environ.setdefault / .update, os.putenv: environment set in code."""
    if name in ("os.environ.setdefault", "os.putenv") and len(node.args) >= 2:
        key = reader.literal(node.args[0])
        if isinstance(key, str):
            set_env(reader, key, node.args[1], node)
    elif name == "os.environ.update":
        for k in node.keywords:
            if k.arg:
                set_env(reader, k.arg, k.value, node)
        if node.args and isinstance(node.args[0], ast.Dict):
            for key_node, value in zip(node.args[0].keys, node.args[0].values):
                key = reader.literal(key_node) if key_node is not None else None
                if isinstance(key, str):
                    set_env(reader, key, value, node)
