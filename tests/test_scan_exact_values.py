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


def test_a_numpy_generator_handed_to_a_function_is_not_a_tf_random_op(tmp_path: Path) -> None:
    """`rng.shuffle(batch)` in a module function every caller of which passes a NumPy generator (made in the
    call, or `self.rng` that the class only sets to `np.random.RandomState(seed)`) is NumPy's shuffle, not
    TensorFlow's; a caller passing something else keeps the finding."""
    found = scan_files(tmp_path, {"m.py": """\
        import numpy as np
        import tensorflow as tf
        def prepare(batch, rng):
            rng.shuffle(batch)
            return batch
        def paths(items, rng=None):
            rng.shuffle(items)
            return items
        def other(items, rng):
            rng.shuffle(items)
            return tf.constant(items)
        class Feeder:
            def __init__(self, seed):
                self.rng = np.random.RandomState(seed)
            def run(self, batch, items, thing):
                prepare(batch, self.rng)
                paths(items, rng=np.random.default_rng(0))
                other(items, thing)
                return tf.constant(batch)
        """}, "tensorflow=2.20")
    assert sorted(f.line for f in found if f.record == "tf.random-seeds") == [10], found
