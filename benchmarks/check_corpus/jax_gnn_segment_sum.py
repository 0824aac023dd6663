"""A graph network in JAX, as Jraph and Flax examples write it: messages computed per edge,
summed into their receiving nodes with jax.ops.segment_sum, two layers, softmax
cross-entropy, Adam written with jax.tree.map, the whole step under jax.jit."""
import argparse

import jax
import jax.numpy as jnp


def init(key, sizes):
    params = []
    for k, (a, b) in zip(jax.random.split(key, len(sizes) - 1), zip(sizes[:-1], sizes[1:])):
        params.append({"w": jax.random.normal(k, (a, b)) * (2 / a) ** 0.5, "b": jnp.zeros(b)})
    return params


def forward(params, x, senders, receivers, n):
    h = x
    for i, layer in enumerate(params):
        messages = (h @ layer["w"])[senders]
        h = jax.ops.segment_sum(messages, receivers, num_segments=n) + layer["b"]
        if i < len(params) - 1:
            h = jax.nn.relu(h)
    return h


def loss_fn(params, x, senders, receivers, labels):
    logits = forward(params, x, senders, receivers, x.shape[0])
    return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(logits), labels[:, None], axis=1))


@jax.jit
def train_step(params, m, v, t, x, senders, receivers, labels):
    loss, grads = jax.value_and_grad(loss_fn)(params, x, senders, receivers, labels)
    t = t + 1
    m = jax.tree.map(lambda m, g: 0.9 * m + 0.1 * g, m, grads)
    v = jax.tree.map(lambda v, g: 0.999 * v + 0.001 * g * g, v, grads)
    params = jax.tree.map(lambda p, m, v: p - 1e-2 * (m / (1 - 0.9 ** t)) / (jnp.sqrt(v / (1 - 0.999 ** t)) + 1e-8),
                          params, m, v)
    return params, m, v, t, loss


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--device", default=None, help="cpu or gpu (default: JAX's default backend)")
    p.add_argument("--steps", type=int, default=20)
    args = p.parse_args()
    if args.device == "cpu":
        jax.config.update("jax_platforms", "cpu")
    key = jax.random.PRNGKey(0)
    kx, ke1, ke2, kl, kp = jax.random.split(key, 5)
    n, e = 2000, 40000
    x = jax.random.normal(kx, (n, 32))
    receivers = (jax.random.uniform(ke1, (e,)) ** 3 * n).astype(jnp.int32)  # hubs receive most edges
    senders = jax.random.randint(ke2, (e,), 0, n)
    labels = jax.random.randint(kl, (n,), 0, 7)
    params = init(kp, [32, 64, 7])
    m = jax.tree.map(jnp.zeros_like, params)
    v = jax.tree.map(jnp.zeros_like, params)
    t = jnp.zeros((), jnp.int32)
    for step in range(args.steps):
        params, m, v, t, loss = train_step(params, m, v, t, x, senders, receivers, labels)
        if step % 10 == 0:
            print(f"step {step} loss {float(loss):.4f}")


if __name__ == "__main__":
    main()
