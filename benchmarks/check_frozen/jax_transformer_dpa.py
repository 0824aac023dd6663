"""A decoder-only Transformer language model in plain JAX (no Flax, no Optax): token
embeddings looked up with jnp.take, RMSNorm, causal jax.nn.dot_product_attention, a SwiGLU
MLP, tied output weights, and a hand-written AdamW with global-norm gradient clipping."""
import argparse

import jax
import jax.numpy as jnp

VOCAB, D, HEADS, LAYERS, T = 512, 128, 4, 2, 64


def init(key):
    keys = iter(jax.random.split(key, 4 + 6 * LAYERS))
    dense = lambda k, m, n: jax.random.normal(k, (m, n)) * (1.0 / jnp.sqrt(m))  # noqa: E731
    params = {"embed": jax.random.normal(next(keys), (VOCAB, D)) * 0.02, "norm": jnp.ones(D), "layers": []}
    for _ in range(LAYERS):
        params["layers"].append({
            "norm1": jnp.ones(D), "norm2": jnp.ones(D),
            "qkv": dense(next(keys), D, 3 * D), "out": dense(next(keys), D, D),
            "gate": dense(next(keys), D, 4 * D), "up": dense(next(keys), D, 4 * D), "down": dense(next(keys), 4 * D, D)})
    return params


def rmsnorm(x, scale):
    return x * jax.lax.rsqrt(jnp.mean(x * x, axis=-1, keepdims=True) + 1e-6) * scale


def forward(params, tokens):
    b, t = tokens.shape
    x = jnp.take(params["embed"], tokens, axis=0)
    for layer in params["layers"]:
        h = rmsnorm(x, layer["norm1"]) @ layer["qkv"]
        q, k, v = jnp.split(h.reshape(b, t, 3 * HEADS, D // HEADS), 3, axis=2)
        att = jax.nn.dot_product_attention(q, k, v, is_causal=True)
        x = x + att.reshape(b, t, D) @ layer["out"]
        h = rmsnorm(x, layer["norm2"])
        x = x + (jax.nn.silu(h @ layer["gate"]) * (h @ layer["up"])) @ layer["down"]
    return rmsnorm(x, params["norm"]) @ params["embed"].T


def loss_fn(params, tokens):
    logits = forward(params, tokens[:, :-1])
    logp = jax.nn.log_softmax(logits.astype(jnp.float32))
    return -jnp.mean(jnp.take_along_axis(logp, tokens[:, 1:, None], axis=-1))


@jax.jit
def train_step(params, m, v, step, tokens):
    loss, grads = jax.value_and_grad(loss_fn)(params, tokens)
    norm = jnp.sqrt(sum(jnp.sum(g * g) for g in jax.tree.leaves(grads)))
    grads = jax.tree.map(lambda g: g * jnp.minimum(1.0, 1.0 / (norm + 1e-6)), grads)
    b1, b2, lr, wd = 0.9, 0.95, 3e-4, 0.1
    m = jax.tree.map(lambda m, g: b1 * m + (1 - b1) * g, m, grads)
    v = jax.tree.map(lambda v, g: b2 * v + (1 - b2) * g * g, v, grads)
    mhat = jax.tree.map(lambda m: m / (1 - b1 ** step), m)
    vhat = jax.tree.map(lambda v: v / (1 - b2 ** step), v)
    params = jax.tree.map(lambda p, mh, vh: p - lr * (mh / (jnp.sqrt(vh) + 1e-8) + wd * p), params, mhat, vhat)
    return params, m, v, loss


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--device", default=None, help="cpu or gpu (default: JAX's default backend)")
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    if args.device == "cpu":
        jax.config.update("jax_platforms", "cpu")
    key = jax.random.PRNGKey(args.seed)
    kp, kd = jax.random.split(key)
    params = init(kp)
    m = jax.tree.map(jnp.zeros_like, params)
    v = jax.tree.map(jnp.zeros_like, params)
    data = jax.random.randint(kd, (20_000,), 0, VOCAB)
    for step in range(args.steps):
        starts = jax.random.randint(jax.random.fold_in(kd, step), (args.batch_size,), 0, len(data) - T - 1)
        tokens = jnp.stack([jax.lax.dynamic_slice(data, (s,), (T + 1,)) for s in starts])
        params, m, v, loss = train_step(params, m, v, step + 1, tokens)
        if step % 10 == 0:
            print(f"step {step} loss {float(loss):.4f}")


if __name__ == "__main__":
    main()
