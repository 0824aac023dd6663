"""Collectives whose summed value is a constant (kb/scan/resolvers.py `constant-summed`): `jax.lax.psum(1,
axis)` counts the shards; integer sums are exact in any order, so no reduction-order record applies."""

from __future__ import annotations

from pathlib import Path

from scan_files import scan_files


def test_psum_of_a_constant_counts_shards_and_is_exact(tmp_path: Path) -> None:
    """`jax.lax.psum(1, axis)` and `psum(jnp.ones(n), axis)` add ones (exact in any order); a psum of a
    computed array keeps its findings."""
    found = scan_files(tmp_path, {"m.py": """\
        import jax
        import jax.numpy as jnp
        def shards(axis):
            return jax.lax.psum(1, axis, axis_index_groups=None)
        def count(axis, n):
            ones = jnp.ones(n)
            return jax.lax.psum(ones, axis_name=axis)
        def total(x, axis):
            return jax.lax.psum(x * 2.0, axis)
        """}, "jax=0.8")
    lines = {f.line for f in found if f.record.startswith("jax.collective")}
    assert lines == {9}, found
