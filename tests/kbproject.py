"""Fixture projects for query tests: records written inline in a test, validated, compiled, and
answered from with `kb.status` (tests/test_calls.py, test_calls_forms.py, test_query_api.py,
test_query_tfkeras.py share these two steps).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import kb
from kb import query
from kb.catalog import load
from kb.compile import build_index
from kb.lint import run


def compiled(root: Path, *, allowed: tuple[str, ...] = ()) -> dict:
    """The index of the project at `root`, after `kb validate` found nothing but the `allowed` codes."""
    _, findings = run(root)
    assert [f.message for f in findings if f.code not in allowed] == []
    return build_index(load(root))


@contextlib.contextmanager
def answering(index: dict) -> Iterator[ModuleType]:
    """`kb` answering from `index` for the duration (the shipped index again afterwards)."""
    query.reset(index)
    try:
        yield kb
    finally:
        query.reset()
