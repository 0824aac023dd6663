"""Skip-gram word2vec with negative sampling in plain JAX: context windows from a Zipfian
token stream, input and output embedding tables read with jnp.take, and a sparse SGD update
written as .at[ids].add on the rows that appeared, as hand-rolled JAX embedding code does."""
import argparse

import jax
import jax.numpy as jnp

VOCAB, DIM, WINDOW, NEG = 5000, 64, 2, 5


def loss_fn(rows, centers, contexts, negatives):
    w_in, w_ctx, w_neg = rows
    pos = jnp.sum(w_in * w_ctx, axis=-1)
    neg = jnp.einsum("bd,bkd->bk", w_in, w_neg)
    return -jnp.mean(jax.nn.log_sigmoid(pos) + jnp.sum(jax.nn.log_sigmoid(-neg), axis=-1))


@jax.jit
def train_step(emb_in, emb_out, centers, contexts, negatives, lr):
    rows = (jnp.take(emb_in, centers, axis=0), jnp.take(emb_out, contexts, axis=0),
            jnp.take(emb_out, negatives, axis=0))
    loss, (g_in, g_ctx, g_neg) = jax.value_and_grad(loss_fn)(rows, centers, contexts, negatives)
    emb_in = emb_in.at[centers].add(-lr * g_in)
    emb_out = emb_out.at[contexts].add(-lr * g_ctx)
    emb_out = emb_out.at[negatives.reshape(-1)].add(-lr * g_neg.reshape(-1, DIM))
    return emb_in, emb_out, loss


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--device", default=None, help="cpu or gpu (default: JAX's default backend)")
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--batch-size", type=int, default=1024)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    if args.device == "cpu":
        jax.config.update("jax_platforms", "cpu")
    key = jax.random.PRNGKey(args.seed)
    k_in, k_text, key = jax.random.split(key, 3)
    emb_in = (jax.random.uniform(k_in, (VOCAB, DIM)) - 0.5) / DIM
    emb_out = jnp.zeros((VOCAB, DIM))
    unigram = 1.0 / jnp.arange(1, VOCAB + 1, dtype=jnp.float32)
    unigram = unigram / unigram.sum()
    text = jax.random.choice(k_text, VOCAB, (200_000,), p=unigram)
    noise = unigram ** 0.75 / jnp.sum(unigram ** 0.75)
    for step in range(args.steps):
        key, k_pos, k_off, k_neg = jax.random.split(key, 4)
        pos = jax.random.randint(k_pos, (args.batch_size,), WINDOW, len(text) - WINDOW)
        offset = jax.random.choice(k_off, jnp.array([-2, -1, 1, 2]), (args.batch_size,))
        centers, contexts = text[pos], text[pos + offset]
        negatives = jax.random.choice(k_neg, VOCAB, (args.batch_size, NEG), p=noise)
        emb_in, emb_out, loss = train_step(emb_in, emb_out, centers, contexts, negatives, 0.5)
        if step % 10 == 0:
            print(f"step {step} loss {float(loss):.4f}")


if __name__ == "__main__":
    main()
