"""Code that runs only outside training: the statements after a guard that raises in training mode.

A block that opens with `if self.training: raise ...` (or `assert not self.training`, on any object's
`training` or `is_training` flag, or a plain `training` / `is_training` name) states that what follows runs
only when the model is not being trained: synthesis, evaluation, incremental decoding (Rayhane-mamah/
Tacotron-2's incremental branch of CausalConv1D.call, which raises under training). No gradient is taken
there, so records of the backward pass do not apply to its calls, as under `torch.no_grad()` (RULES R4).
Read by kb/scan/resolve.py, which marks the calls in those lines as run without a gradient.
"""

from __future__ import annotations

import ast
import re

from kb.scan.nodes import iwalk

# The cheap text test first (most files that say "training" have no guard): `if FLAG:` then `raise`, or `assert not FLAG`.
GUARD_TEXT = re.compile(r"if\s+[\w.]*training\s*:\s*(?:#[^\n]*)?\n?\s*raise\b|assert\s+not\s+[\w.]*training\b")
_FLAGS = frozenset({"training", "is_training"})


def _flag(expr: ast.expr) -> bool:
    """`self.training`, `model.is_training`, `training`: a training-mode flag read as it is."""
    return (isinstance(expr, ast.Attribute) and expr.attr in _FLAGS) or (isinstance(expr, ast.Name) and expr.id in _FLAGS)


def _guard(stmt: ast.stmt) -> bool:
    """`if FLAG: raise ...` with no else, or `assert not FLAG`: what follows it never runs in training."""
    if isinstance(stmt, ast.If):
        return _flag(stmt.test) and not stmt.orelse and len(stmt.body) == 1 and isinstance(stmt.body[0], ast.Raise)
    if isinstance(stmt, ast.Assert):
        return isinstance(stmt.test, ast.UnaryOp) and isinstance(stmt.test.op, ast.Not) and _flag(stmt.test.operand)
    return False


def inference_only(tree: ast.AST) -> list[tuple[int, int]]:
    """(first, last line) of each run of statements that follows a training guard in its block."""
    out: list[tuple[int, int]] = []
    for node in iwalk(tree):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if not isinstance(block, list) or not block or not isinstance(block[0], ast.stmt):
                continue
            for k, stmt in enumerate(block[:-1]):
                if _guard(stmt):
                    last = block[-1]
                    out.append((block[k + 1].lineno, last.end_lineno or last.lineno))
                    break
    return out
