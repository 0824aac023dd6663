"""An MLP classifier in plain JAX, as the JAX "training a simple neural network" tutorial
writes it without Flax or Optax: parameters as a list of (w, b), dropout from a key split
per step with jax.random, vmap-free batched matmuls, and SGD with weight decay under jax.jit."""
import argparse

import jax
import jax.numpy as jnp


def init_params(sizes, key):
    keys = jax.random.split(key, len(sizes) - 1)
    return [(jax.random.normal(k, (m, n)) * jnp.sqrt(2.0 / m), jnp.zeros(n))
            for k, m, n in zip(keys, sizes[:-1], sizes[1:])]


def predict(params, x, key, rate):
    for i, (w, b) in enumerate(params[:-1]):
        x = jax.nn.relu(x @ w + b)
        keep = jax.random.bernoulli(jax.random.fold_in(key, i), 1 - rate, x.shape)
        x = jnp.where(keep, x / (1 - rate), 0.0)
    w, b = params[-1]
    return x @ w + b


def loss_fn(params, x, y, key, rate):
    logits = predict(params, x, key, rate)
    return -jnp.mean(jnp.sum(jax.nn.one_hot(y, logits.shape[-1]) * jax.nn.log_softmax(logits), axis=-1))


@jax.jit
def update(params, x, y, key, lr):
    loss, grads = jax.value_and_grad(loss_fn)(params, x, y, key, 0.2)
    params = [(w - lr * (gw + 1e-4 * w), b - lr * gb) for (w, b), (gw, gb) in zip(params, grads)]
    return params, loss


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--device", default=None, help="cpu or gpu (default: JAX's default backend)")
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    if args.device == "cpu":
        jax.config.update("jax_platforms", "cpu")
    key = jax.random.PRNGKey(args.seed)
    key, kp, kx, ky = jax.random.split(key, 4)
    params = init_params([784, 512, 512, 10], kp)
    images = jax.random.uniform(kx, (4096, 784))
    labels = jax.random.randint(ky, (4096,), 0, 10)
    for step in range(args.steps):
        key, kperm, kdrop = jax.random.split(key, 3)
        idx = jax.random.choice(kperm, 4096, (args.batch_size,), replace=False)
        params, loss = update(params, images[idx], labels[idx], kdrop, 0.05)
        if step % 10 == 0:
            print(f"step {step} loss {float(loss):.4f}")


if __name__ == "__main__":
    main()
