"""Layer backprops: bias_add, bilinear resize, convolution (cuDNN), crop_and_resize."""

from __future__ import annotations

import numpy as np

from verifiers import verifier
from verifiers.tensorflow.common import device_name, mixed


def _grad(tf, fn, *variables):
    def run():
        with tf.GradientTape() as tape:
            out = fn()
        grads = tape.gradient(out, list(variables))
        return {f"grad{i}": tf.convert_to_tensor(g) for i, g in enumerate(grads)}

    return run


@verifier("tensorflow.bias_add_backprop", framework="tensorflow", device="gpu")
def bias_add_backprop(ctx):
    import tensorflow as tf

    rng = np.random.default_rng(ctx.seed)
    rows = ctx.size(1_000_000, 1000)
    with tf.device(device_name(ctx)):
        x = tf.constant(mixed(rng, (rows, 8)))
        bias = tf.Variable(np.zeros(8, np.float32))
        up = tf.constant(mixed(rng, (rows, 8)))
        return _grad(tf, lambda: tf.reduce_sum(tf.nn.bias_add(x, bias) * up), bias)


@verifier("tensorflow.resize_bilinear_backprop", framework="tensorflow", device="gpu")
def resize_bilinear_backprop(ctx):
    import tensorflow as tf

    rng = np.random.default_rng(ctx.seed)
    batch = ctx.size(32, 1)
    with tf.device(device_name(ctx)):
        img = tf.Variable(mixed(rng, (batch, 64, 64, 16)))
        up = tf.constant(mixed(rng, (batch, 128, 128, 16)))
        return _grad(tf, lambda: tf.reduce_sum(tf.image.resize(img, (128, 128), "bilinear") * up), img)


@verifier("tensorflow.conv2d_backprop_filter", framework="tensorflow", device="gpu")
def conv2d_backprop_filter(ctx):
    import tensorflow as tf

    rng = np.random.default_rng(ctx.seed)
    batch = ctx.size(32, 1)
    with tf.device(device_name(ctx)):
        x = tf.Variable(mixed(rng, (batch, 64, 64, 64)))
        w = tf.Variable(mixed(rng, (3, 3, 64, 64)) * np.float32(1e-3))
        return _grad(tf, lambda: tf.reduce_sum(tf.nn.conv2d(x, w, 1, "SAME")), w, x)


@verifier("tensorflow.crop_and_resize_backprop", framework="tensorflow", device="any")
def crop_and_resize_backprop(ctx):
    """Gradient of crop_and_resize to the image; many overlapping boxes over one image so that
    the per-box shards accumulate into the same pixels (CPU: PR 48905; GPU: atomics)."""
    import tensorflow as tf

    rng = np.random.default_rng(ctx.seed)
    boxes_n = ctx.size(4096, 64)
    with tf.device(device_name(ctx)):
        image = tf.Variable(mixed(rng, (1, 64, 64, 8)))
        lo = rng.uniform(0.0, 0.5, (boxes_n, 2))
        boxes = tf.constant(np.concatenate([lo, lo + 0.5], axis=1).astype(np.float32))
        box_idx = tf.zeros(boxes_n, tf.int32)
        up = tf.constant(mixed(rng, (boxes_n, 24, 24, 8)))
        return _grad(tf, lambda: tf.reduce_sum(tf.image.crop_and_resize(image, boxes, box_idx, (24, 24)) * up), image)
