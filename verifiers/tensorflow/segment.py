"""Segment and scatter reductions (CUDA atomics on the GPU)."""

from __future__ import annotations

import numpy as np

from verifiers import verifier
from verifiers.tensorflow.common import device_name, mixed


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
