"""A small Keras model with probes: `kb probe run -- python examples/probe/train_tf.py`.

`probe.monitor_keras` monitors every layer's output and the gradient flowing back into it;
the training step is a tf.function (EAGER=1 runs it eagerly). PLANT=forward|backward makes
the second run (KB_PROBE_RUN=2) differ in the `mix` layer from step PLANT_STEP on.
"""

import os
from collections import namedtuple

import tensorflow as tf

from kb import probe

PLANT = os.environ.get("PLANT", "") if os.environ.get("KB_PROBE_RUN") == "2" else ""
PLANT_STEP = int(os.environ.get("PLANT_STEP", "1"))
STEPS = int(os.environ.get("STEPS", "3"))
Batch = namedtuple("Batch", "tokens buckets target")


class Mix(tf.keras.layers.Layer):
    """Pools token features into 64 buckets with tf.math.unsorted_segment_sum."""

    def call(self, x, buckets, plant):
        out = tf.math.unsorted_segment_sum(x, buckets, num_segments=64)
        return _planted(out, plant)


@tf.custom_gradient
def _planted(x, plant):
    fwd = 1e-6 if PLANT == "forward" else 0.0
    bwd = 1e-6 if PLANT == "backward" else 0.0
    return x + fwd * plant, lambda g: (g + bwd * plant, tf.zeros_like(plant))


def build():
    tokens = tf.keras.Input((), dtype="int32")
    buckets = tf.keras.Input((), dtype="int32")
    plant = tf.keras.Input((), batch_size=1)
    x = tf.keras.layers.Embedding(500, 32, name="embedding")(tokens)
    x = Mix(name="mix")(x, buckets, plant)
    x = tf.keras.layers.Dense(32, activation="relu", name="dense1")(x)
    out = tf.keras.layers.Dense(1, name="dense2")(x)
    return tf.keras.Model([tokens, buckets, plant], out)


def main() -> None:
    tf.keras.utils.set_random_seed(0)
    model = build()
    probe.monitor_keras(model)
    opt = tf.keras.optimizers.SGD(0.1)

    def train_step(batch, plant):
        batch = probe.monitor(batch, "batch")  # a named tuple of tensors
        with tf.GradientTape() as tape:
            pred = model([batch.tokens, batch.buckets, plant])
            loss = tf.reduce_mean((pred - batch.target) ** 2)
        grads = tape.gradient(loss, model.trainable_variables)
        grads = probe.monitor_gradients(grads)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    if os.environ.get("EAGER") != "1":
        train_step = tf.function(train_step)
    rng = tf.random.Generator.from_seed(1)
    for i in range(STEPS):
        probe.step(i)
        batch = Batch(rng.uniform((1024,), 0, 500, tf.int32), rng.uniform((1024,), 0, 64, tf.int32),
                      rng.normal((64, 1)))
        loss = train_step(batch, tf.constant([1.0 if i >= PLANT_STEP else 0.0]))
    probe.summarize_trainable_variables(model)
    print(f"loss {float(loss):.8f}")


if __name__ == "__main__":
    main()
