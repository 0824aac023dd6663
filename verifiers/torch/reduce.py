"""Reductions and GEMM: cumsum, sum, matmul (cuBLAS)."""

from __future__ import annotations

import math

from verifiers import verifier
from verifiers.torch.common import mixed, setup


CUMSUM_CASES = (
    {"op": "torch.cumsum", "call": {"input.dtype": "float"}},
    {"op": "torch.Tensor.cumsum", "call": {"input.dtype": "float"}},
    {"op": "torch.Tensor.cumsum_", "call": {"input.dtype": "float"}},
    {"op": "torch.cumsum", "call": {"input.dtype": "int"}},  # complementary: integer sums are exact
)


@verifier("torch.cumsum", framework="pytorch", solutions=("PT_DET",), cases=CUMSUM_CASES)
def cumsum(ctx):
    """Issue 75240's input: (i*pi) mod 1 for i < n; the integer case sums 0..999 values."""
    torch, device, gen = setup(ctx)
    n = ctx.size(4_000_000, 10_000)
    if ctx.call.get("input.dtype") == "int":
        v = torch.randint(0, 1000, (n,), generator=gen).to(device)
    else:
        v = (torch.arange(n, dtype=torch.float64) * math.pi).remainder(1.0).float().to(device)
    if ctx.op == "torch.cumsum":
        return lambda: torch.cumsum(v, 0)
    if ctx.op == "torch.Tensor.cumsum_":
        return lambda: v.clone().cumsum_(0)
    return lambda: v.cumsum(0)


@verifier("torch.sum", framework="pytorch", solutions=("PT_DET",))
def total(ctx):
    torch, device, gen = setup(ctx)
    v = mixed(torch, gen, (ctx.size(4_000_000, 10_000),), device)
    return lambda: v.sum()


@verifier("torch.matmul", framework="pytorch", solutions=("PT_DET",))
def matmul(ctx):
    torch, device, gen = setup(ctx)
    a = torch.randn(ctx.size(4096, 64), 256, generator=gen).to(device)
    b = torch.randn(256, ctx.size(4096, 64), generator=gen).to(device)
    return lambda: a @ b
