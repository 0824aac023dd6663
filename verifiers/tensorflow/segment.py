"""Segment and scatter reductions (CUDA atomics on the GPU)."""

from __future__ import annotations

import numpy as np

from verifiers import verifier
from verifiers.tensorflow.common import device_name, mixed, near_one


def _segments(ctx, sorted_ids: bool):
    rng = np.random.default_rng(ctx.seed)
    n = ctx.size(4_000_000, 1000)
    ids = rng.integers(0, 64, n)
    if sorted_ids:
        ids = np.sort(ids)
    return mixed(rng, (n,)), ids.astype(np.int32)


@verifier("tensorflow.unsorted_segment_sum", framework="tensorflow", device="gpu")
def unsorted_segment_sum(ctx):
    import tensorflow as tf

    data, ids = _segments(ctx, False)
    with tf.device(device_name(ctx)):
        d, i = tf.constant(data), tf.constant(ids)
        return lambda: tf.math.unsorted_segment_sum(d, i, 64)


@verifier("tensorflow.segment_sum", framework="tensorflow", device="gpu")
def segment_sum(ctx):
    import tensorflow as tf

    data, ids = _segments(ctx, True)
    with tf.device(device_name(ctx)):
        d, i = tf.constant(data), tf.constant(ids)
        return lambda: tf.math.segment_sum(d, i)


@verifier("tensorflow.scatter_nd", framework="tensorflow", device="gpu")
def scatter_nd(ctx):
    import tensorflow as tf

    data, ids = _segments(ctx, False)
    with tf.device(device_name(ctx)):
        d, i = tf.constant(data), tf.constant(ids[:, None])
        return lambda: tf.scatter_nd(i, d, [64])


@verifier("tensorflow.gather_backprop", framework="tensorflow", device="gpu")
def gather_backprop(ctx):
    """Gradient of tf.gather into a small table: an unsorted segment sum of the upstream grads."""
    import tensorflow as tf

    rng = np.random.default_rng(ctx.seed)
    n = ctx.size(1_000_000, 1000)
    with tf.device(device_name(ctx)):
        table = tf.Variable(mixed(rng, (32, 16)))
        idx = tf.constant(rng.integers(0, 32, n).astype(np.int32))
        weight = tf.constant(mixed(rng, (n, 16)))

        def run():
            with tf.GradientTape() as tape:
                loss = tf.reduce_sum(tf.gather(table, idx) * weight)
            return tf.convert_to_tensor(tape.gradient(loss, table))

        return run


@verifier("tensorflow.segment_mean", framework="tensorflow", device="gpu", solutions=("EOD",))
def segment_mean(ctx):
    """tf.math.segment_mean: 4M mixed-magnitude values, sorted ids into 64 segments. From 2.7 the
    GPU kernel is the sorted segment sum (then a division): atomics by default, the deterministic
    SegmentReduceGPU only under the switch, so EOD is the mode that should give one result."""
    import tensorflow as tf

    data, ids = _segments(ctx, True)
    with tf.device(device_name(ctx)):
        d, i = tf.constant(data), tf.constant(ids)
        return lambda: tf.math.segment_mean(d, i)


@verifier("tensorflow.segment_prod", framework="tensorflow", device="gpu", solutions=("EOD",))
def segment_prod(ctx):
    """tf.math.segment_prod: 4M factors 1 + e (|e| from 1e-7 to 1e-3, so 62,500 of them per
    segment neither overflow nor underflow) with sorted ids into 64 segments; float32
    products round differently in another order."""
    import tensorflow as tf

    _, ids = _segments(ctx, True)
    data = near_one(np.random.default_rng(ctx.seed + 1), ids.shape)
    with tf.device(device_name(ctx)):
        d, i = tf.constant(data), tf.constant(ids)
        return lambda: tf.math.segment_prod(d, i)


@verifier("tensorflow.unsorted_segment_mean_prod_sqrt_n", framework="tensorflow", device="gpu", solutions=("EOD",))
def unsorted_segment_mean_prod_sqrt_n(ctx):
    """tf.math.unsorted_segment_mean, _sqrt_n (mixed-magnitude values) and _prod (factors
    1 + e, |e| from 1e-7 to 1e-3): 4M values, unsorted ids into 64 segments."""
    import tensorflow as tf

    data, ids = _segments(ctx, False)
    factors = near_one(np.random.default_rng(ctx.seed + 1), ids.shape)
    with tf.device(device_name(ctx)):
        d, f, i = tf.constant(data), tf.constant(factors), tf.constant(ids)
        return lambda: {
            "mean": tf.math.unsorted_segment_mean(d, i, 64),
            "sqrt_n": tf.math.unsorted_segment_sqrt_n(d, i, 64),
            "prod": tf.math.unsorted_segment_prod(f, i, 64),
        }


@verifier("tensorflow.bincount", framework="tensorflow", device="gpu", solutions=("EOD",))
def bincount(ctx):
    """tf.math.bincount in two GPU paths. Rows (axis=-1): 8 rows of 500,000 ids into 16 bins
    with mixed-magnitude float32 weights; BincountColReduceSharedKernel adds into per-block
    shared bins, then atomically adds each block's partial sums into the output. Counts
    (1-D, no weights, dtype float32): 40M ids into 2 bins, so each bin passes 2^24 = 16.8M,
    beyond which float32 partial counts (CUB's HistogramEven) round in the order they are
    added (integer counts below 2^24 are exact in any order). No solution; EOD checks the
    raise."""
    import tensorflow as tf

    rng = np.random.default_rng(ctx.seed)
    cols, n = ctx.size(500_000, 1000), ctx.size(40_000_000, 10_000)
    with tf.device(device_name(ctx)):
        rows = tf.constant(rng.integers(0, 16, (8, cols)).astype(np.int32))
        weights = tf.constant(mixed(rng, (8, cols)))
        ids = tf.constant(rng.integers(0, 2, n).astype(np.int32))
        return lambda: {
            "rows": tf.math.bincount(rows, weights=weights, minlength=16, maxlength=16, axis=-1),
            "counts": tf.math.bincount(ids, minlength=2, maxlength=2, dtype=tf.float32),
        }


@verifier("tensorflow.variable_scatter", framework="tensorflow", device="gpu", solutions=("EOD",))
def variable_scatter(ctx):
    """tf.Variable.scatter_add then scatter_sub (resource variable, as tf.Variable is in TF2):
    1M mixed-magnitude rows of 8 into a 64-row variable, 15,000 updates per row, added by the
    GPU scatter functor with atomics. The variable is reset on every call; the result after
    each scatter is copied to the host before the next one. No solution; EOD checks the
    raise."""
    import tensorflow as tf

    rng = np.random.default_rng(ctx.seed)
    n = ctx.size(1_000_000, 1000)
    with tf.device(device_name(ctx)):
        var = tf.Variable(np.zeros((64, 8), np.float32))
        add = tf.IndexedSlices(tf.constant(mixed(rng, (n, 8))), tf.constant(rng.integers(0, 64, n).astype(np.int32)))
        sub = tf.IndexedSlices(tf.constant(mixed(rng, (n, 8))), tf.constant(rng.integers(0, 64, n).astype(np.int32)))
        zeros = tf.zeros((64, 8))

        def run():
            var.assign(zeros)
            var.scatter_add(add)
            after_add = var.numpy().copy()
            var.scatter_sub(sub)
            return {"after_add": after_add, "after_sub": var.numpy().copy()}

        return run
