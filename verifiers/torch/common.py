"""Shared builders: mixed-magnitude float32 values, many colliding indices."""

from __future__ import annotations


def setup(ctx):
    import torch

    device = "cuda" if ctx.device == "gpu" else "cpu"
    gen = torch.Generator(device="cpu").manual_seed(ctx.seed)
    return torch, device, gen


def mixed(torch, gen, shape, device):
    """float32 spanning 1e0..1e6 (integer-valued or same-magnitude sums hide reordering)."""
    scale = 10.0 ** torch.randint(0, 6, shape, generator=gen).float()
    return (torch.randn(shape, generator=gen) * scale).to(device)


def grads(out, *tensors):
    """Backward of `out.sum()`-like scalar; gradients of `tensors` as a dict."""
    for t in tensors:
        t.grad = None
    out.backward()
    return {f"grad{i}": t.grad for i, t in enumerate(tensors)}
