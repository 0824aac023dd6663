"""Pooling layers whose CUDA backward adds into the input with atomicAdd, and max_unpool.

Every backward uses overlapping windows (several windows add into one input) and a random,
mixed-magnitude upstream gradient `(y * up).sum()`, so the order of the atomic additions
changes the rounding; equal upstream values would add to the same bits in any order.
"""

from __future__ import annotations

from verifiers import verifier
from verifiers.torch.common import grads, mixed, setup


def _backward(torch, gen, device, fn, *inputs):
    """A callable returning the input gradients of `(fn(*inputs) * up).sum()`, `up` random."""
    for x in inputs:
        x.requires_grad_()
    up = mixed(torch, gen, tuple(fn(*inputs).shape), device)
    return lambda: grads((fn(*inputs) * up).sum(), *inputs)


_AF = "torch.nn.functional"
ADAPTIVE_CASES = (
    {"op": "torch.nn.functional.adaptive_avg_pool2d", "call": {"input.ndim": 4}},
    {"op": "torch.nn.AdaptiveAvgPool2d", "call": {"input.ndim": 4}},
    {"op": "torch.nn.functional.adaptive_avg_pool3d", "call": {"input.ndim": 5}},
    {"op": "torch.nn.AdaptiveAvgPool3d", "call": {"input.ndim": 5}},
    {"op": "torch.nn.functional.interpolate", "call": {"mode": "area", "input.ndim": 4}},
    {"op": "torch.nn.Upsample", "call": {"mode": "area", "input.ndim": 4}},
    {"op": "torch.nn.functional.interpolate", "call": {"mode": "nearest", "input.ndim": 4}},  # complementary
)


@verifier("torch.adaptive_avg_pool_backward", framework="pytorch", solutions=("PT_DET",), cases=ADAPTIVE_CASES)
def adaptive_avg_pool_backward(ctx):
    """Adaptive average pooling 64x64 -> 24x24 (2-D) or 32^3 -> 12^3 (3-D), one form per case:
    the input size is not a multiple of the output size, so neighbouring windows share
    inputs and atomic_adaptive_average_gradinput adds each window's share into them with
    atomicAdd. interpolate(mode='area') is adaptive_avg_pool{1,2,3}d (torch/nn/functional.py);
    mode='nearest' at the same size gathers and is the complementary case."""
    torch, device, gen = setup(ctx)
    F = torch.nn.functional
    op, call = ctx.op or "torch.nn.functional.adaptive_avg_pool2d", ctx.call
    if call.get("input.ndim", 4) == 5:
        x = mixed(torch, gen, (ctx.size(8, 1), 32, 32, 32, 32), device)
        fn = {"torch.nn.functional.adaptive_avg_pool3d": lambda a: F.adaptive_avg_pool3d(a, 12),
              "torch.nn.AdaptiveAvgPool3d": torch.nn.AdaptiveAvgPool3d(12)}[op]
        return _backward(torch, gen, device, fn, x)
    x = mixed(torch, gen, (ctx.size(32, 1), 64, 64, 64), device)
    mode = call.get("mode", "area")
    fn = {"torch.nn.functional.adaptive_avg_pool2d": lambda a: F.adaptive_avg_pool2d(a, 24),
          "torch.nn.AdaptiveAvgPool2d": torch.nn.AdaptiveAvgPool2d(24),
          "torch.nn.functional.interpolate": lambda a: F.interpolate(a, size=24, mode=mode),
          "torch.nn.Upsample": torch.nn.Upsample(size=24, mode=mode)}[op]
    return _backward(torch, gen, device, fn, x)


@verifier("torch.adaptive_max_pool2d_backward", framework="pytorch", solutions=("PT_DET",))
def adaptive_max_pool2d_backward(ctx):
    """adaptive_max_pool2d 64x64 -> 24x24: overlapping windows often share their maximum, and
    the backward adds each window's gradient into that input with atomicAdd."""
    torch, device, gen = setup(ctx)
    x = mixed(torch, gen, (ctx.size(32, 1), 64, 64, 64), device)
    return _backward(torch, gen, device, lambda a: torch.nn.functional.adaptive_max_pool2d(a, 24), x)


@verifier("torch.avg_pool3d_backward", framework="pytorch", solutions=("PT_DET",))
def avg_pool3d_backward(ctx):
    """avg_pool3d kernel 3, stride 2: the windows overlap (stride < kernel) and stride is not 1,
    which selects the atomicAdd kernel (avg_pool3d_cuda_update_grad_input_atomic); stride 1
    would take a gather kernel with no atomics."""
    torch, device, gen = setup(ctx)
    x = mixed(torch, gen, (ctx.size(8, 1), 32, 32, 32, 32), device)
    return _backward(torch, gen, device, lambda a: torch.nn.functional.avg_pool3d(a, 3, stride=2), x)


@verifier("torch.fractional_max_pool_backward", framework="pytorch", solutions=("PT_DET",))
def fractional_max_pool_backward(ctx):
    """fractional_max_pool2d (3x3 windows, 64 -> 62) and 3d (3^3 windows, 32 -> 28): windows
    about one element apart overlap heavily, so one input is the maximum of several windows
    and their gradients meet in atomicAdd. The window offsets (`_random_samples`) are fixed
    inputs; drawing them per call would change the result for a reason that is not the race."""
    torch, device, gen = setup(ctx)
    F = torch.nn.functional
    n2, n3 = ctx.size(32, 1), ctx.size(8, 1)
    x2 = mixed(torch, gen, (n2, 64, 64, 64), device)
    x3 = mixed(torch, gen, (n3, 32, 32, 32, 32), device)
    s2 = torch.rand(n2, 64, 2, generator=gen).to(device)
    s3 = torch.rand(n3, 32, 3, generator=gen).to(device)
    return _backward(torch, gen, device, lambda a, b: torch.cat([
        F.fractional_max_pool2d(a, 3, output_size=62, _random_samples=s2).flatten(),
        F.fractional_max_pool3d(b, 3, output_size=28, _random_samples=s3).flatten()]), x2, x3)


@verifier("torch.max_unpool", framework="pytorch", device="any", solutions=("PT_DET",))
def max_unpool(ctx):
    """max_unpool2d and max_unpool3d forward, as in an encoder-decoder: the indices come from
    max_pool with overlapping windows (3, stride 2), where one input is often the maximum of
    several windows, so the indices hold duplicates; the values unpooled are new (decoder)
    features, so the duplicates carry different values and the last of the racing stores wins.
    Unpooling max_pool's own output would store equal values, which cannot show the race.
    On a CPU the kernel gives each thread a contiguous range of the input, so stores race only
    where one plane straddles two threads' ranges: expect nothing to show there."""
    torch, device, gen = setup(ctx)
    F = torch.nn.functional
    x2 = mixed(torch, gen, (ctx.size(32, 1), 64, 64, 64), device)
    x3 = mixed(torch, gen, (ctx.size(8, 1), 32, 32, 32, 32), device)
    _, i2 = F.max_pool2d(x2, 3, stride=2, return_indices=True)
    _, i3 = F.max_pool3d(x3, 3, stride=2, return_indices=True)
    v2 = mixed(torch, gen, tuple(i2.shape), device)
    v3 = mixed(torch, gen, tuple(i3.shape), device)
    return lambda: {
        "unpool2d": F.max_unpool2d(v2, i2, 3, stride=2, output_size=(64, 64)),
        "unpool3d": F.max_unpool3d(v3, i3, 3, stride=2, output_size=(32, 32, 32)),
    }
