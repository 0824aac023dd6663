"""JAX/XLA answers of kb.status(), from a table written here from the sources, not from the records.

Version boundaries (jax versions; the flags live in jaxlib, which jax pins to the same number):
- 0.4.13: oldest jaxlib on PyPI; its binary already has --xla_gpu_deterministic_ops and
  --xla_gpu_autotune_level (strings of the wheel). Older releases are left unknown (None).
- 0.4.29: first jaxlib with --xla_gpu_exclude_nondeterministic_ops (absent in 0.4.28;
  openxla PR 12520, 2024-05).
- select-and-scatter: OpenXLA's determinism page (2024) says the exclude flag makes its
  compilation fail: no solution, known only from 0.4.29. The H100 run of jaxlib 0.11.2
  (data/runs/h100-80gb-hbm3-x1-18805de3/2026-11-23T103148Z.yaml) compiled it under both flags
  with identical results: fixed by either from 0.11.2; 0.11.0 and 0.11.1 unknown.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

import kb

NEWEST = "0.12.0.1"  # newest jax on PyPI when data/versions/jax.yaml was written
UNKNOWN = (None, (), None)
SCATTER_OLD = (False, ("XLA_DET",), ("XLA_DET",))
SCATTER_NEW = (False, ("XLA_DET", "XLA_EXCL"), ("XLA_DET",))
AUTOTUNE_OLD = (False, ("XLA_DET", "XLA_AT0"), ("XLA_DET",))
AUTOTUNE_NEW = (False, ("XLA_DET", "XLA_EXCL", "XLA_AT0"), ("XLA_DET",))
NO_SOLUTION = (False, (), None)

# op -> [(version, (deterministic, solutions, recipe))]: newest, and both sides of each boundary.
SCATTER_LIKE = [("0.4.12", UNKNOWN), ("0.4.13", SCATTER_OLD), ("0.4.28", SCATTER_OLD),
                ("0.4.29", SCATTER_NEW), (NEWEST, SCATTER_NEW)]
TABLE = {
    "jax.lax.scatter_add": SCATTER_LIKE,
    "jax.lax.scatter_mul": SCATTER_LIKE,
    "jax.numpy.histogram": SCATTER_LIKE,
    "jax.numpy.bincount": SCATTER_LIKE,
    "jax.ops.segment_sum": SCATTER_LIKE,
    "jax.ops.segment_prod": SCATTER_LIKE,
    "jax.numpy.take": SCATTER_LIKE,
    "jax.lax.gather": SCATTER_LIKE,
    "jax.lax.conv_general_dilated": [("0.4.12", UNKNOWN), ("0.4.13", AUTOTUNE_OLD), ("0.4.28", AUTOTUNE_OLD),
                                     ("0.4.29", AUTOTUNE_NEW), (NEWEST, AUTOTUNE_NEW)],
    "jax.numpy.matmul": [("0.4.28", AUTOTUNE_OLD), ("0.4.29", AUTOTUNE_NEW), (NEWEST, AUTOTUNE_NEW)],
    "jax.jit": [("0.4.12", UNKNOWN), ("0.4.13", AUTOTUNE_OLD), (NEWEST, AUTOTUNE_OLD)],
    # The function (with implementation=) arrives in 0.4.31, where jax.dot-product-attention-cudnn starts;
    # before it that record is unknown, so there is no recipe.
    "jax.nn.dot_product_attention": [("0.4.28", (False, ("XLA_DET",), None)),
                                     ("0.4.30", (False, ("XLA_DET", "XLA_EXCL"), None)),
                                     ("0.4.31", SCATTER_NEW), (NEWEST, SCATTER_NEW)],
    "jax.lax.reduce_window": [("0.4.28", UNKNOWN), ("0.4.29", NO_SOLUTION), ("0.10.2", NO_SOLUTION),
                              ("0.11.1", UNKNOWN), ("0.11.2", SCATTER_NEW), (NEWEST, SCATTER_NEW)],
}
CASES = [(op, version, want) for op, rows in TABLE.items() for version, want in rows]


@pytest.mark.parametrize(("op", "version", "want"), CASES, ids=[f"{o}@{v}" for o, v, _ in CASES])
def test_table(op: str, version: str, want: tuple) -> None:
    s = kb.status(op, version)  # framework inferred from the "jax." prefix
    assert s.framework == "jax"
    assert (s.deterministic, s.solutions, s.recipe) == want


def test_design_contract_example() -> None:
    s = kb.status("jax.ops.segment_sum", "0.4.30", framework="jax", device="gpu")
    assert s.deterministic is False
    assert s.recipe == ("XLA_DET",)
    assert [src.id for src in s.sources] == ["jax.segment-reductions"]


@pytest.mark.parametrize("op", ["jax.numpy.ndarray.at", "jax.Array.at", "jax.lax.scatter_add"])
def test_public_names_reach_the_scatter_record(op: str) -> None:
    call = {"at.method": "add"} if op.endswith(".at") else None  # .at[].add: the scatter-add; .set has its own records
    assert [src.id for src in kb.status(op, NEWEST, call=call).sources] == ["jax.scatter-add"]


@pytest.mark.parametrize("op", ["jax.numpy.ndarray.at", "jax.Array.at"])
@pytest.mark.parametrize(("version", "want"), SCATTER_LIKE)
def test_at_add_follows_the_scatter_table(op: str, version: str, want: tuple) -> None:
    s = kb.status(op, version, call={"at.method": "add"})
    assert (s.deterministic, s.solutions, s.recipe) == want


def test_at_without_its_method_depends_on_the_call() -> None:
    """`.at` alone may be `.set(..., unique_indices=True)`, which no switch fixes: no recipe, and the
    answer says it depends on the call."""
    s = kb.status("jax.numpy.ndarray.at", NEWEST)
    assert s.deterministic is False and s.recipe is None and s.depends_on_call
    assert {src.id for src in s.sources} == {"jax.scatter-add", "jax.at-set-repeated-indices",
                                             "jax.at-set-unique-indices-promise",
                                             "jax.gather-backward"}  # x.at[i].get()'s gradient is a scatter-add


def test_select_and_scatter_raises_under_the_flags() -> None:
    (src,) = kb.status("jax.lax.reduce_window", "0.4.29").sources
    assert src.raises and "compilation" in src.raises


def test_cpu_is_not_affected() -> None:
    """No record covers the CPU: no source applies, and nothing says deterministic either (DESIGN.md)."""
    s = kb.status("jax.ops.segment_sum", NEWEST, device="cpu")
    assert (s.deterministic, s.sources, s.basis) == (None, (), "unverified")


def test_inventory_op_without_record_is_deterministic() -> None:
    s = kb.status("jax.numpy.add", "0.10.2")
    assert (s.deterministic, s.solutions, s.recipe, s.sources) == (True, (), (), ())


def test_typo_suggests_the_real_name() -> None:
    with pytest.raises(kb.UnknownOpError) as err:
        kb.status("jax.ops.segment_summ", "0.4.30")
    assert "jax.ops.segment_sum" in str(err.value)


def test_inventory_header_names_the_version() -> None:
    path = Path(__file__).resolve().parents[1] / "data" / "api" / "jax.txt.gz"
    first = gzip.decompress(path.read_bytes()).decode("utf-8").splitlines()[0]
    assert first.startswith("# jax 0.10.2 public API")


def test_unknown_jax_release_is_noted() -> None:
    s = kb.status("jax.ops.segment_sum", "0.4.99")
    assert any("not a known jax release" in n for n in s.notes)
