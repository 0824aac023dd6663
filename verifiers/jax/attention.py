"""jax.nn.dot_product_attention, one verifier per `implementation`.

'cudnn' calls cuDNN's fused attention through an XLA custom call; its backward accumulates the
query gradient across key blocks unless XLA asks cuDNN for the deterministic backward (the
determinism flags do). 'xla' (also what None picks, jax 0.4.31 to 0.10) is einsum, softmax,
einsum: GEMMs only. Inputs: bfloat16, batch 4, 16 heads of 64 (the layout is B, T, N, H),
with a random upstream gradient; 4096 tokens for 'cudnn', 1024 for 'xla', which materializes
the B x N x T x T scores: at 4096 tokens XLA's autotuner wanted 4 GiB a candidate and ran out
of memory on an H100 while other verifiers were preparing beside it.
"""

from __future__ import annotations

import numpy as np

from verifiers import verifier


def _attention_grads(ctx, implementation: str, tokens: int = 4096):
    import jax
    import jax.numpy as jnp

    rng = np.random.default_rng(ctx.seed)
    gpu = ctx.device == "gpu"
    device = jax.devices("gpu" if gpu else "cpu")[0]
    shape = (ctx.size(4, 1), ctx.size(tokens, 64), 16, 64)
    dtype = jnp.bfloat16 if gpu else jnp.float32
    q, k, v, up = (jax.device_put(rng.standard_normal(shape).astype(dtype), device) for _ in range(4))
    impl = implementation if gpu else "xla"

    def attention(q, k, v):
        return jax.nn.dot_product_attention(q, k, v, implementation=impl)

    def step(q, k, v, up):
        out, vjp = jax.vjp(attention, q, k, v)
        dq, dk, dv = vjp(up)
        return {name: t.astype(jnp.float32) for name, t in (("out", out), ("dq", dq), ("dk", dk), ("dv", dv))}

    fn = jax.jit(step).lower(q, k, v, up).compile()
    return lambda: fn(q, k, v, up)


@verifier("jax.dot_product_attention_cudnn", framework="jax", solutions=("XLA_DET", "XLA_EXCL"))
def dot_product_attention_cudnn(ctx):
    """implementation='cudnn': forward and backward of cuDNN's fused attention."""
    return _attention_grads(ctx, "cudnn")


@verifier("jax.dot_product_attention_xla", framework="jax", solutions=("XLA_DET",))
def dot_product_attention_xla(ctx):
    """implementation='xla' (the default): the complementary case, GEMMs and a softmax."""
    return _attention_grads(ctx, "xla", tokens=1024)
