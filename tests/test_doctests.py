"""The worked examples in kb/'s docstrings (`>>>` lines) run, and say what the code does.

Every module under kb/ whose source has an example is found by reading the text (so a new
example is run without being listed here), imported, and run with `doctest`.
"""

from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
GENERATED = {"kb/_index.py", "kb/_details.py", "kb/_seen.py"}


def _with_examples() -> list[str]:
    names = []
    for path in sorted((ROOT / "kb").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel in GENERATED or ">>> " not in path.read_text(encoding="utf-8"):
            continue
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        names.append(".".join(parts))
    return names


MODULES = _with_examples()


def test_the_worked_examples_are_found() -> None:
    assert {"kb", "kb.versions", "kb.calls", "kb.signatures"} <= set(MODULES), MODULES


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_hold(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS, verbose=False, report=True)
    assert result.attempted > 0, f"{name}: no example was run"
    assert result.failed == 0, f"{name}: {result.failed} of {result.attempted} examples failed (printed above)"
