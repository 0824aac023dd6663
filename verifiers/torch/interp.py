"""Sampling layers whose CUDA backward scatters into the input with atomicAdd: grid_sample and
F.interpolate (linear, bicubic, trilinear).

Each backward upsamples, so several outputs draw on one input and add their gradients into it;
the upstream gradient is random and of mixed magnitudes, so the order of the additions
changes the rounding (equal upstream values would give the same bits in any order).
"""

from __future__ import annotations

from verifiers import verifier
from verifiers.torch.common import grads, mixed, setup


def _backward(torch, gen, device, fn, x):
    x.requires_grad_()
    up = mixed(torch, gen, tuple(fn(x).shape), device)
    return lambda: grads((fn(x) * up).sum(), x)


GRID_CASES = (
    {"op": "torch.nn.functional.grid_sample", "call": {"mode": "bilinear", "input.ndim": 4}},
    {"op": "torch.nn.functional.grid_sample", "call": {"mode": "nearest", "input.ndim": 4}},
    {"op": "torch.nn.functional.grid_sample", "call": {"mode": "bicubic", "input.ndim": 4}},
    {"op": "torch.nn.functional.grid_sample", "call": {"mode": "bilinear", "input.ndim": 5}},
    {"op": "torch.nn.functional.grid_sample", "call": {"mode": "nearest", "input.ndim": 5}},
)


@verifier("torch.grid_sample_backward", framework="pytorch", solutions=("PT_DET",), cases=GRID_CASES)
def grid_sample_backward(ctx):
    """grid_sample backward, one mode and rank per case: 2-D (16x16 inputs sampled at 256x256
    random grid points) or 3-D (8^3 inputs at 32x64x64 points), so about 256 grid points land
    in each input cell, and the backward adds each point's interpolation weights (or, for
    nearest, its whole gradient) into the cell's corners with atomicAdd. The CUDA backward
    calls alertNotDeterministic for every mode (GridSampler.cu)."""
    torch, device, gen = setup(ctx)
    F = torch.nn.functional
    mode, ndim = ctx.call.get("mode", "bilinear"), ctx.call.get("input.ndim", 4)
    if ndim == 4:
        n = ctx.size(16, 1)
        x = mixed(torch, gen, (n, 32, 16, 16), device)
        grid = (torch.rand(n, 256, 256, 2, generator=gen) * 2 - 1).to(device)
    else:
        n = ctx.size(4, 1)
        x = mixed(torch, gen, (n, 16, 8, 8, 8), device)
        grid = (torch.rand(n, 32, 64, 64, 3, generator=gen) * 2 - 1).to(device)
    return _backward(torch, gen, device, lambda a: F.grid_sample(a, grid, mode=mode, align_corners=False), x)


_F = "torch.nn.functional.interpolate"
_UP = "torch.nn.Upsample"
_FUP = "torch.nn.functional.upsample"
_SHAPES = {3: (32, 64, 1024), 4: (8, 64, 64, 64), 5: (8, 32, 16, 16, 16)}


def interpolate_case(ctx, default_mode: str, default_ndim: int):
    """The backward of one interpolate call (x2 upsampling), built from the case: the op (the
    functional, nn.Upsample, the deprecated F.upsample, or the fixed-mode bilinear ones), its
    `mode`, `antialias` and `input.ndim`. Each backward upsamples, so several outputs add into
    each input: with atomicAdd for linear, bilinear, bicubic and trilinear (the order of the
    additions shows in the rounding of mixed-magnitude gradients); nearest gathers each
    input's window instead and has no atomics."""
    torch, device, gen = setup(ctx)
    F = torch.nn.functional
    call, op = ctx.call, ctx.op or _F
    mode = call.get("mode", default_mode)
    ndim = call.get("input.ndim", default_ndim)
    antialias = bool(call.get("antialias", False))
    shape = _SHAPES[ndim]
    batch = 32 if mode == "bilinear" or op.endswith("ilinear2d") or op.endswith("bilinear") else shape[0]
    x = mixed(torch, gen, (ctx.size(batch, 1),) + shape[1:], device)
    corners = False if mode in ("linear", "bilinear", "bicubic", "trilinear") else None
    if op == _F:
        fn = lambda a: F.interpolate(a, scale_factor=2, mode=mode, align_corners=corners, antialias=antialias)  # noqa: E731
    elif op == _FUP:
        fn = lambda a: F.upsample(a, scale_factor=2, mode=mode, align_corners=corners)  # noqa: E731
    elif op == _UP:
        fn = torch.nn.Upsample(scale_factor=2, mode=mode, align_corners=corners)
    elif op == "torch.nn.UpsamplingBilinear2d":
        fn = torch.nn.UpsamplingBilinear2d(scale_factor=2)
    elif op == "torch.nn.functional.upsample_bilinear":
        fn = lambda a: F.upsample_bilinear(a, scale_factor=2)  # noqa: E731
    else:
        raise ValueError(f"no interpolate case for {op}")
    return _backward(torch, gen, device, fn, x)


BICUBIC_CASES = (
    {"op": _F, "call": {"mode": "bicubic", "antialias": False, "input.ndim": 4}},
    {"op": _F, "call": {"mode": "bicubic", "antialias": True, "input.ndim": 4}},
    {"op": _UP, "call": {"mode": "bicubic", "input.ndim": 4}},
    {"op": _FUP, "call": {"mode": "bicubic", "input.ndim": 4}},
    {"op": _F, "call": {"mode": "nearest", "antialias": False, "input.ndim": 4}},  # complementary
)


@verifier("torch.interpolate_bicubic_backward", framework="pytorch", solutions=("PT_DET",), cases=BICUBIC_CASES)
def interpolate_bicubic_backward(ctx):
    """interpolate(mode='bicubic', x2) backward: each output adds into a 4x4 neighbourhood of
    inputs with atomicAdd, so every input receives 64 additions from neighbouring rows that
    run in different warps (the antialiased kernel likewise adds with atomicAdd)."""
    return interpolate_case(ctx, "bicubic", 4)


LINEAR_CASES = (
    {"op": _F, "call": {"mode": "linear", "input.ndim": 3}},
    {"op": _UP, "call": {"mode": "linear", "input.ndim": 3}},
    {"op": _FUP, "call": {"mode": "linear", "input.ndim": 3}},
    {"op": _F, "call": {"mode": "nearest", "input.ndim": 3}},  # complementary
)


@verifier("torch.interpolate_linear_backward", framework="pytorch", solutions=("PT_DET",), cases=LINEAR_CASES)
def interpolate_linear_backward(ctx):
    """interpolate(mode='linear', x2) backward on a 3-D input (N, C, 1024): one thread per
    output position loops over the batch and channels and adds into its two inputs with
    atomicAdd; each input gets four additions, from threads that may sit in different warps."""
    return interpolate_case(ctx, "linear", 3)


TRILINEAR_CASES = (
    {"op": _F, "call": {"mode": "trilinear", "input.ndim": 5}},
    {"op": _UP, "call": {"mode": "trilinear", "input.ndim": 5}},
    {"op": _FUP, "call": {"mode": "trilinear", "input.ndim": 5}},
    {"op": _F, "call": {"mode": "nearest", "input.ndim": 5}},  # complementary
)


@verifier("torch.interpolate_trilinear_backward", framework="pytorch", solutions=("PT_DET",), cases=TRILINEAR_CASES)
def interpolate_trilinear_backward(ctx):
    """interpolate(mode='trilinear', x2) backward on a 5-D input: each output adds into eight
    inputs with atomicAdd, each input receives 64 additions. Called through F.interpolate, as
    users do, so deterministic mode may route to the decomposition (the record's dispute)."""
    return interpolate_case(ctx, "trilinear", 5)


AA_CASES = (
    {"op": _F, "call": {"mode": "bilinear", "antialias": True, "input.ndim": 4}},
)


@verifier("torch.interpolate_bilinear_antialias_backward", framework="pytorch", solutions=("PT_DET",), cases=AA_CASES)
def interpolate_bilinear_antialias_backward(ctx):
    """interpolate(mode='bilinear', antialias=True, x2) backward on (N, 64, 64, 64): the
    antialiased kernel adds each output's filter taps into the input with atomicAdd, and
    F.interpolate takes this path before the deterministic decomposition of plain bilinear
    (whose cases, and the complementary nearest ones, are torch.interpolate_bilinear_backward's)."""
    return interpolate_case(ctx, "bilinear", 4)
