"""docs/probe.md shows what the examples really print: each example block equals a fresh run
(CPU; the blocks are regenerated with scripts/probe_docs.py)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

import probe_docs  # noqa: E402

NEEDS = {"tensorflow": "tensorflow", "jax": "jax"}


def test_every_example_has_a_block() -> None:
    assert set(probe_docs.blocks(probe_docs.DOC.read_text(encoding="utf-8"))) == set(probe_docs.EXAMPLES)


@pytest.mark.parametrize("name", sorted(probe_docs.EXAMPLES))
def test_docs_block_matches_a_fresh_run(name: str) -> None:
    module = NEEDS.get(name, "torch")
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not installed (pip install -e '.[test]' installs it)")
    documented = probe_docs.blocks(probe_docs.DOC.read_text(encoding="utf-8"))[name]
    assert probe_docs.run_example(name) == documented, f"stale: PYTHONPATH=. python scripts/probe_docs.py --only {name}"
