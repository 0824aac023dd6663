"""Scatter-add in XLA: `.at[].add`, `jax.ops.segment_sum`, and the gradient of `take`."""

from __future__ import annotations

import numpy as np

from verifiers import verifier


def _inputs(ctx):
    import jax
    import jax.numpy as jnp

    rng = np.random.default_rng(ctx.seed)
    n = ctx.size(4_000_000, 10_000)
    values = (rng.standard_normal(n) * 10.0 ** rng.integers(0, 6, n)).astype(np.float32)
    ids = rng.integers(0, 64, n).astype(np.int32)
    device = jax.devices("gpu" if ctx.device == "gpu" else "cpu")[0]
    return jax, jnp, jax.device_put(values, device), jax.device_put(ids, device)


@verifier("jax.at_add", framework="jax", solutions=("XLA_DET", "XLA_EXCL"))
def at_add(ctx):
    jax, jnp, values, ids = _inputs(ctx)
    fn = jax.jit(lambda v, i: jnp.zeros(64, jnp.float32).at[i].add(v))
    return lambda: fn(values, ids)


@verifier("jax.segment_sum", framework="jax", solutions=("XLA_DET", "XLA_EXCL"))
def segment_sum(ctx):
    jax, jnp, values, ids = _inputs(ctx)
    fn = jax.jit(lambda v, i: jax.ops.segment_sum(v, i, num_segments=64))
    return lambda: fn(values, ids)


@verifier("jax.take_grad", framework="jax", solutions=("XLA_DET", "XLA_EXCL"))
def take_grad(ctx):
    """Embedding-style gradient: grad of sum(take(table, idx) * w) is a scatter-add."""
    jax, jnp, values, ids = _inputs(ctx)
    table = jnp.ones((64, 1), jnp.float32)
    fn = jax.jit(jax.grad(lambda t, i, w: jnp.sum(jnp.take(t, i, axis=0)[:, 0] * w)))
    return lambda: fn(table, ids, values)
