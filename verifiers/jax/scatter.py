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


AT_ADD_CASES = (
    {"op": "jax.numpy.ndarray.at", "call": {"at.method": "add", "input.dtype": "float"}},
    {"op": "jax.Array.at", "call": {"at.method": "add", "input.dtype": "float"}},
    {"op": "jax.lax.scatter_add", "call": {"input.dtype": "float"}},
    {"op": "jax.lax.scatter_mul", "call": {"input.dtype": "float"}},
    {"op": "jax.numpy.bincount", "call": {"weights": "float"}},
    {"op": "jax.numpy.histogram", "call": {"weights": "float"}},
    {"op": "jax.numpy.ufunc.at", "call": {"input.dtype": "float"}},  # jnp.add.at(x, i, v, inplace=False)
    {"op": "jax.numpy.bincount", "call": {"weights": None}},  # complementary: integer counts
)


@verifier("jax.at_add", framework="jax", solutions=("XLA_DET", "XLA_EXCL"), cases=AT_ADD_CASES)
def at_add(ctx):
    """4M mixed-magnitude float32 updates into 64 slots, one call form per case: `.at[].add`,
    lax.scatter_add, jnp.add.at, jnp.bincount and jnp.histogram with float weights all lower to an XLA
    scatter-add, and lax.scatter_mul (factors near 1, 4096 slots) to a scatter-multiply, whose
    GPU atomics combine in arrival order; jnp.bincount without weights adds
    integer ones, exact in any order."""
    jax, jnp, values, ids = _inputs(ctx)
    op, call = ctx.op or "jax.numpy.ndarray.at", ctx.call
    if op == "jax.lax.scatter_add":
        dnums = jax.lax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
                                                scatter_dims_to_operand_dims=(0,))
        fn = jax.jit(lambda v, i: jax.lax.scatter_add(jnp.zeros(64, jnp.float32), i[:, None], v, dnums))
    elif op == "jax.lax.scatter_mul":
        # factors near 1 (the products stay finite); float32 products round differently in another order
        dnums = jax.lax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
                                                scatter_dims_to_operand_dims=(0,))
        # 4096 slots, as the PyTorch prod verifier: 62k compare-and-swap writers per slot serialise
        spread = lambda i: ((i * 64 + jnp.arange(i.shape[0], dtype=i.dtype) % 64) % 4096)[:, None]  # noqa: E731
        fn = jax.jit(lambda v, i: jax.lax.scatter_mul(jnp.ones(4096, jnp.float32), spread(i),
                                                      1.0 + 1e-3 * jnp.tanh(v), dnums))
    elif op == "jax.numpy.bincount":
        weighted = call.get("weights") == "float"
        fn = jax.jit(lambda v, i: jnp.bincount(i, weights=v if weighted else None, length=64))
    elif op == "jax.numpy.ufunc.at":
        fn = jax.jit(lambda v, i: jnp.add.at(jnp.zeros(64, jnp.float32), i, v, inplace=False))
    elif op == "jax.numpy.histogram":
        fn = jax.jit(lambda v, i: jnp.histogram(i.astype(jnp.float32), bins=64, range=(0, 64), weights=v)[0])
    else:
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


AT_SET_CASES = (
    {"op": "jax.numpy.ndarray.at", "call": {"at.method": "set", "input.dtype": "float"}},
    {"op": "jax.Array.at", "call": {"at.method": "set", "input.dtype": "float"}},
)
AT_SET_PROMISE_CASES = (
    {"op": "jax.numpy.ndarray.at", "call": {"at.method": "set", "unique_indices": True, "input.dtype": "float"}},
)


def _at_set(ctx, unique: bool):
    jax, jnp, values, ids = _inputs(ctx)
    fn = jax.jit(lambda v, i: jnp.zeros(64, jnp.float32).at[i].set(v, unique_indices=unique))
    return lambda: fn(values, ids)


@verifier("jax.at_set", framework="jax", solutions=("XLA_DET", "XLA_EXCL"), cases=AT_SET_CASES)
def at_set(ctx):
    """`.at[idx].set(v)`: 4M distinct float32 values written into 64 slots, so about 62k writes
    land on each slot and which one is kept (XLA's scatter with no combiner) decides the result."""
    return _at_set(ctx, bool(ctx.call.get("unique_indices")))


@verifier("jax.at_set_unique_promise", framework="jax", solutions=("XLA_DET", "XLA_EXCL"), cases=AT_SET_PROMISE_CASES)
def at_set_unique_promise(ctx):
    """The same repeated indices passed with `unique_indices=True`, a promise JAX documents as the
    caller's (output undefined when the indices repeat): measured with and without the switch,
    because the flag marks the scatter as having unique indices."""
    return _at_set(ctx, True)
