"""docs/probe.md shows what the examples really print: each example block equals a fresh run
(CPU; the blocks are regenerated with scripts/probe_docs.py). The runs are made once per test
run and shared with test_probe.py (tests/probe_runs.py)."""

from __future__ import annotations

import importlib.util

import pytest

import probe_runs
from probe_runs import probe_docs

NEEDS = {"tensorflow": "tensorflow", "jax": "jax"}


def test_every_example_has_a_block() -> None:
    assert set(probe_docs.blocks(probe_docs.DOC.read_text(encoding="utf-8"))) == set(probe_docs.EXAMPLES)


@pytest.mark.parametrize("name", sorted(probe_docs.EXAMPLES))
def test_docs_block_matches_a_fresh_run(name: str) -> None:
    module = NEEDS.get(name, "torch")
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not installed (pip install -e '.[test]' installs it)")
    documented = probe_docs.blocks(probe_docs.DOC.read_text(encoding="utf-8"))[name]
    assert probe_runs.example(name)[0] == documented, f"stale: PYTHONPATH=. python scripts/probe_docs.py --only {name}"
