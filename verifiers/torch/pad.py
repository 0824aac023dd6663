"""Reflection and replication padding: the CUDA backward adds each padded output's gradient
into the input element it copies, with atomicAdd.

An input element that is copied into k output positions gets k additions. Two additions
into a zeroed gradient (0 + a + b) give the same bits in either order, so each input here is
copied at least three times, and the upstream gradient is random and of mixed magnitudes.
The layers are called as nn modules (they go through F.pad, as users' code does).
"""

from __future__ import annotations

from verifiers import verifier
from verifiers.torch.common import grads, mixed, setup


def _backward(ctx, parts):
    """parts: (module, input shape) pairs; gradients of every input in one backward."""
    torch, device, gen = setup(ctx)
    layers = [layer for layer, _ in parts]
    xs = [mixed(torch, gen, shape, device).requires_grad_() for _, shape in parts]
    ups = [mixed(torch, gen, tuple(layer(x).shape), device) for layer, x in zip(layers, xs)]

    def run():
        loss = sum((layer(x) * up).sum() for layer, x, up in zip(layers, xs, ups))
        return grads(loss, *xs)

    return run


_PAD = "torch.nn.functional.pad"
REFLECTION_1D_CASES = (
    {"op": "torch.nn.ReflectionPad1d", "call": {"input.ndim": 3}},
    {"op": "torch.nn.ReflectionPad1d", "call": {"input.ndim": 2}},
    {"op": _PAD, "call": {"mode": "reflect", "pad.len": 2, "input.ndim": 3}},
    {"op": _PAD, "call": {"mode": "circular", "pad.len": 2, "input.ndim": 3}},  # complementary: slicing, no atomics
)
REFLECTION_2D_CASES = (
    {"op": "torch.nn.ReflectionPad2d", "call": {"input.ndim": 4}},
    {"op": "torch.nn.ReflectionPad2d", "call": {"input.ndim": 3}},
    {"op": _PAD, "call": {"mode": "reflect", "pad.len": 4, "input.ndim": 4}},
)
REFLECTION_3D_CASES = (
    {"op": "torch.nn.ReflectionPad3d", "call": {"input.ndim": 5}},
    {"op": _PAD, "call": {"mode": "reflect", "pad.len": 6, "input.ndim": 5}},
)
REPLICATION_1D_3D_CASES = (
    {"op": "torch.nn.ReplicationPad1d", "call": {"input.ndim": 3}},
    {"op": "torch.nn.ReplicationPad3d", "call": {"input.ndim": 5}},
    {"op": _PAD, "call": {"mode": "replicate", "pad.len": 2, "input.ndim": 3}},
    {"op": _PAD, "call": {"mode": "replicate", "pad.len": 6, "input.ndim": 5}},
)
REPLICATION_2D_CASES = (
    {"op": "torch.nn.ReplicationPad2d", "call": {"input.ndim": 4}},
    {"op": _PAD, "call": {"mode": "replicate", "pad.len": 4, "input.ndim": 4}},
)


def _functional(ctx, width: int, shape: tuple):
    """F.pad(x, (width,) * pad.len, mode) on `shape`: the case's spelling of the module's kernel."""
    import torch

    mode, n = ctx.call["mode"], ctx.call["pad.len"]
    return _backward(ctx, [(lambda x: torch.nn.functional.pad(x, (width,) * n, mode=mode), shape)])


def _reflection(ctx, op: str):
    """One layer per case, batched and unbatched. ReflectionPad1d(511) on length 512: with the
    padding one less than the length, each interior element is copied three times (itself and
    its two mirror images, from far-apart blocks); a small 1-D pad copies an element at most
    twice, which cannot show. ReflectionPad2d(3) on 64x64: elements near a corner are copied
    four times (two mirrors and their product)."""
    import torch

    n = ctx.size(32, 1)
    ndim = ctx.call.get("input.ndim")
    if ctx.op == _PAD:
        if ctx.call["pad.len"] == 2:
            return _functional(ctx, 511, (n, 64, 512))
        return _functional(ctx, 3, (n, 64, 64, 64))
    if op == "torch.nn.ReflectionPad1d":
        shape: tuple[int, ...] = (n, 64, 512) if ndim != 2 else (n * 64, 512)
        return _backward(ctx, [(torch.nn.ReflectionPad1d(511), shape)])
    shape = (n, 64, 64, 64) if ndim != 3 else (n * 64, 64, 64)
    return _backward(ctx, [(torch.nn.ReflectionPad2d(3), shape)])


@verifier("torch.reflection_pad_1d_2d_backward", framework="pytorch", solutions=("PT_DET",), cases=REFLECTION_1D_CASES)
def reflection_pad_1d_2d_backward(ctx):
    """ReflectionPad1d backward (the name keeps the record id it was written for, which once
    covered 2-D too): the 1-D backward raises under the switch in every release read."""
    return _reflection(ctx, "torch.nn.ReflectionPad1d")


@verifier("torch.reflection_pad_2d_backward", framework="pytorch", solutions=("PT_DET",), cases=REFLECTION_2D_CASES)
def reflection_pad_2d_backward(ctx):
    """ReflectionPad2d backward: from 2.7 the switch selects a deterministic implementation."""
    return _reflection(ctx, "torch.nn.ReflectionPad2d")


@verifier("torch.reflection_pad_3d_backward", framework="pytorch", solutions=("PT_DET",), cases=REFLECTION_3D_CASES)
def reflection_pad_3d_backward(ctx):
    """ReflectionPad3d(2) on 32^3: elements near a corner of the volume are copied up to eight
    times (mirrored along each axis), and those additions race. F.pad case: the same pad."""
    import torch

    if ctx.op == _PAD:
        return _functional(ctx, 2, (ctx.size(8, 1), 32, 32, 32, 32))
    return _backward(ctx, [(torch.nn.ReflectionPad3d(2), (ctx.size(8, 1), 32, 32, 32, 32))])


@verifier("torch.replication_pad_1d_3d_backward", framework="pytorch", solutions=("PT_DET",),
          cases=REPLICATION_1D_3D_CASES)
def replication_pad_1d_3d_backward(ctx):
    """ReplicationPad1d(64) on length 1024 and ReplicationPad3d(2) on 32^3: each edge element is
    copied into every padded position beyond it (65 times in 1-D, up to 27 times at a 3-D
    corner), and the backward adds those gradients with atomicAdd. In deterministic mode
    F.pad routes CUDA inputs to a decomposition (the record's solution)."""
    import torch

    if ctx.op == _PAD and ctx.call["pad.len"] == 2:
        return _functional(ctx, 64, (ctx.size(32, 1), 64, 1024))
    if ctx.op == _PAD:
        return _functional(ctx, 2, (ctx.size(8, 1), 32, 32, 32, 32))
    if ctx.op == "torch.nn.ReplicationPad1d":
        return _backward(ctx, [(torch.nn.ReplicationPad1d(64), (ctx.size(32, 1), 64, 1024))])
    if ctx.op == "torch.nn.ReplicationPad3d":
        return _backward(ctx, [(torch.nn.ReplicationPad3d(2), (ctx.size(8, 1), 32, 32, 32, 32))])
    return _backward(ctx, [
        (torch.nn.ReplicationPad1d(64), (ctx.size(32, 1), 64, 1024)),
        (torch.nn.ReplicationPad3d(2), (ctx.size(8, 1), 32, 32, 32, 32)),
    ])


@verifier("torch.replication_pad_2d_backward", framework="pytorch", solutions=("PT_DET",), cases=REPLICATION_2D_CASES)
def replication_pad_2d_backward(ctx):
    """ReplicationPad2d(3) on 64x64: an edge element is copied four times, a corner sixteen
    times, and the backward adds those gradients with atomicAdd. In deterministic mode F.pad
    routes CUDA inputs to a decomposition (the record's solution)."""
    import torch

    if ctx.op == _PAD:
        return _functional(ctx, 3, (ctx.size(32, 1), 64, 64, 64))
    return _backward(ctx, [(torch.nn.ReplicationPad2d(3), (ctx.size(32, 1), 64, 64, 64))])
