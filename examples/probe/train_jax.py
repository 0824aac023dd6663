"""A small JAX model with probes inside jit: `kb probe run -- python examples/probe/train_jax.py`.

The middle layer pools token features into buckets with jax.ops.segment_sum (a scatter-add:
non-deterministic on GPU unless XLA_FLAGS=--xla_gpu_deterministic_ops=true). PLANT=forward
makes the second run (KB_PROBE_RUN=2) differ there from step PLANT_STEP on (default 1).
"""

import os
from collections import namedtuple

import jax
import jax.numpy as jnp

from kb import probe

PLANT = os.environ.get("PLANT", "") if os.environ.get("KB_PROBE_RUN") == "2" else ""
PLANT_STEP = int(os.environ.get("PLANT_STEP", "1"))
STEPS = int(os.environ.get("STEPS", "3"))
Out = namedtuple("Out", "pred loss")


def model(params, tokens, buckets, target, plant):
    x = probe.monitor(params["embed"][tokens], "embedding", op="jax.numpy.take")
    pooled = jax.ops.segment_sum(x, buckets, num_segments=256)
    pooled = pooled + plant * 1e-6  # plant = 0.0 except in the planted run and step
    pooled = probe.monitor(pooled, "pool", op="jax.ops.segment_sum")
    h = probe.monitor(jax.nn.relu(pooled @ params["w1"]), "dense1", op="jax.numpy.matmul")
    pred = h @ params["w2"]
    loss = jnp.mean((pred - target) ** 2)
    probe.monitor(Out(pred, {"loss": loss, "n": tokens.shape[0]}), "out")  # a nested structure
    return loss


@jax.jit
def train_step(params, tokens, buckets, target, plant):
    loss, grads = jax.value_and_grad(model)(params, tokens, buckets, target, plant)
    grads = probe.monitor_gradients(grads)
    return jax.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, grads), loss


def main() -> None:
    k = jax.random.split(jax.random.PRNGKey(0), 4)
    params = {"embed": jax.random.normal(k[0], (1000, 64)), "w1": jax.random.normal(k[1], (64, 64)) / 8,
              "w2": jax.random.normal(k[2], (64, 1)) / 8}
    for i in range(STEPS):
        probe.step(i)
        d = jax.random.split(jax.random.fold_in(k[3], i), 3)
        tokens = jax.random.randint(d[0], (4096,), 0, 1000)
        buckets = jax.random.randint(d[1], (4096,), 0, 256)
        target = jax.random.normal(d[2], (256, 1))
        plant = 1.0 if PLANT == "forward" and i >= PLANT_STEP else 0.0
        params, loss = train_step(params, tokens, buckets, target, plant)
        probe.summarize_trainable_variables(params)
    print(f"loss {float(loss):.8f}")


if __name__ == "__main__":
    main()
