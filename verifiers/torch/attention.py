"""scaled_dot_product_attention, one verifier per backend, forward and backward apart.

Each verifier forces its backend with torch.nn.attention.sdpa_kernel, so a run measures the
backend its name says: under the switch a backend may be refused (cuDNN is) and the call then
raises rather than silently running on another backend. Inputs are bfloat16 at a long sequence
(4096 keys), so the flash backward has many key blocks adding into each query gradient; the
upstream gradient is random (equal values would add to the same bits in any order).
`PT_SDPA_MATH` is applied here (a practice code): the same call on the math backend.
"""

from __future__ import annotations

from verifiers import verifier
from verifiers.torch.common import grads, setup


def _qkv(ctx, torch, gen, device):
    shape = (ctx.size(4, 1), 16, ctx.size(4096, 64), 64)
    dtype = torch.bfloat16 if device == "cuda" else torch.float32
    q, k, v, up = (torch.randn(shape, generator=gen).to(device, dtype) for _ in range(4))
    return q, k, v, up


def _backend(ctx, torch, name: str):
    from torch.nn.attention import SDPBackend

    if ctx.has("PT_SDPA_MATH") or ctx.device != "gpu":
        return SDPBackend.MATH
    return getattr(SDPBackend, name)


def _backward(ctx, name: str):
    import torch.nn.functional as F
    from torch.nn.attention import sdpa_kernel

    torch, device, gen = setup(ctx)
    q, k, v, up = _qkv(ctx, torch, gen, device)
    for t in (q, k, v):
        t.requires_grad_()
    backend = _backend(ctx, torch, name)

    def run():
        with sdpa_kernel(backend):
            out = F.scaled_dot_product_attention(q, k, v)
        return grads((out.float() * up.float()).sum(), q, k, v)

    return run


def _forward(ctx, name: str):
    import torch.nn.functional as F
    from torch.nn.attention import sdpa_kernel

    torch, device, gen = setup(ctx)
    q, k, v, _ = _qkv(ctx, torch, gen, device)
    backend = _backend(ctx, torch, name)

    def run():
        with torch.no_grad(), sdpa_kernel(backend):
            return F.scaled_dot_product_attention(q, k, v)

    return run


@verifier("torch.sdpa_flash_backward", framework="pytorch", handles=("PT_SDPA_MATH",), solutions=("PT_DET", "PT_DETW"))
def sdpa_flash_backward(ctx):
    """Flash backend backward (dQ, dK, dV): dQ is accumulated over key blocks with atomicAdd unless
    PyTorch asks for the deterministic kernel (use_deterministic_algorithms without warn_only)."""
    return _backward(ctx, "FLASH_ATTENTION")


@verifier("torch.sdpa_efficient_backward", framework="pytorch", handles=("PT_SDPA_MATH",), solutions=("PT_DET", "PT_DETW"))
def sdpa_efficient_backward(ctx):
    """Memory-efficient backend backward: keys split across blocks (num_splits_key) unless the switch
    forces one split."""
    return _backward(ctx, "EFFICIENT_ATTENTION")


@verifier("torch.sdpa_cudnn_backward", framework="pytorch", handles=("PT_SDPA_MATH",), solutions=("PT_DET", "PT_DETW"))
def sdpa_cudnn_backward(ctx):
    """cuDNN backend backward; under the switch the dispatcher refuses cuDNN, so this call (cuDNN
    only) is expected to raise."""
    return _backward(ctx, "CUDNN_ATTENTION")


@verifier("torch.sdpa_math", framework="pytorch", handles=("PT_SDPA_MATH",), solutions=("PT_DET",))
def sdpa_math(ctx):
    """Math backend, forward and backward: explicit matmul, softmax, matmul (the complementary case)."""
    return _backward(ctx, "MATH")


@verifier("torch.sdpa_flash_forward", framework="pytorch", solutions=("PT_DET",))
def sdpa_flash_forward(ctx):
    """Flash backend forward only (no record claims it differs: a check that it does not)."""
    return _forward(ctx, "FLASH_ATTENTION")


@verifier("torch.sdpa_efficient_forward", framework="pytorch", solutions=("PT_DET",))
def sdpa_efficient_forward(ctx):
    """Memory-efficient backend forward only."""
    return _forward(ctx, "EFFICIENT_ATTENTION")


@verifier("torch.sdpa_cudnn_forward", framework="pytorch", solutions=("PT_DET",))
def sdpa_cudnn_forward(ctx):
    """cuDNN backend forward only (the switch refuses cuDNN for the forward too)."""
    return _forward(ctx, "CUDNN_ATTENTION")


@verifier("torch.sdpa_flash_backward_warn_only", framework="pytorch", solutions=("PT_DETW",))
def sdpa_flash_backward_warn_only(ctx):
    """The flash backward again, run only by default and under warn_only=True: the record says
    warn_only keeps the atomic kernel, which its own modes (default, PT_DET) cannot show."""
    return _backward(ctx, "FLASH_ATTENTION")


@verifier("torch.sdpa_efficient_backward_warn_only", framework="pytorch", solutions=("PT_DETW",))
def sdpa_efficient_backward_warn_only(ctx):
    """The memory-efficient backward by default and under warn_only=True (split keys kept)."""
    return _backward(ctx, "EFFICIENT_ATTENTION")
