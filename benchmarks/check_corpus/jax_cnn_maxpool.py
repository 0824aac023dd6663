"""A convolutional classifier in JAX, as the stax and Flax examples write it:
lax.conv_general_dilated, max pooling with lax.reduce_window (its gradient is XLA's
select-and-scatter), a dense head, softmax cross-entropy, SGD with momentum under jax.jit."""
import argparse

import jax
import jax.numpy as jnp
from jax import lax


def init(key):
    k1, k2, k3 = jax.random.split(key, 3)
    return {"c1": jax.random.normal(k1, (16, 3, 3, 3)) * 0.2, "c2": jax.random.normal(k2, (32, 16, 3, 3)) * 0.1,
            "fc": jax.random.normal(k3, (32 * 8 * 8, 10)) * 0.02}


def maxpool(x):
    return lax.reduce_window(x, -jnp.inf, lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID")


def forward(params, x):
    h = jax.nn.relu(lax.conv_general_dilated(x, params["c1"], (1, 1), "SAME"))
    h = maxpool(h)
    h = jax.nn.relu(lax.conv_general_dilated(h, params["c2"], (1, 1), "SAME"))
    h = maxpool(h)
    return h.reshape(h.shape[0], -1) @ params["fc"]


def loss_fn(params, x, y):
    logp = jax.nn.log_softmax(forward(params, x))
    return -jnp.mean(jnp.take_along_axis(logp, y[:, None], axis=1))


@jax.jit
def train_step(params, velocity, x, y):
    loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
    velocity = jax.tree.map(lambda v, g: 0.9 * v + g, velocity, grads)
    params = jax.tree.map(lambda p, v: p - 0.01 * v, params, velocity)
    return params, velocity, loss


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--device", default=None, help="cpu or gpu (default: JAX's default backend)")
    p.add_argument("--steps", type=int, default=20)
    args = p.parse_args()
    if args.device == "cpu":
        jax.config.update("jax_platforms", "cpu")
    key = jax.random.PRNGKey(0)
    kp, kd, kl = jax.random.split(key, 3)
    params = init(kp)
    velocity = jax.tree.map(jnp.zeros_like, params)
    # pixel values on a coarse grid: pooling windows often hold ties
    images = jnp.round(jax.random.normal(kd, (256, 3, 32, 32)) * 2) / 2
    labels = jax.random.randint(kl, (256,), 0, 10)
    for step in range(args.steps):
        i = (step * 32) % 256
        params, velocity, loss = train_step(params, velocity, images[i:i + 32], labels[i:i + 32])
        if step % 10 == 0:
            print(f"step {step} loss {float(loss):.4f}")


if __name__ == "__main__":
    main()
