"""Layer backprops: embedding, bilinear interpolation, max pooling, cuDNN convolution, CTC."""

from __future__ import annotations

from verifiers import verifier
from verifiers.torch.common import grads, mixed, setup


@verifier("torch.embedding_backward", framework="pytorch", solutions=("PT_DET",))
def embedding_backward(ctx):
    torch, device, gen = setup(ctx)
    weight = torch.randn(32, 256, generator=gen).to(device).requires_grad_()
    idx = torch.randint(0, 32, (ctx.size(65_536, 256),), generator=gen).to(device)
    up = mixed(torch, gen, (idx.shape[0], 256), device)
    return lambda: grads((torch.nn.functional.embedding(idx, weight) * up).sum(), weight)


BILINEAR_CASES = (
    {"op": "torch.nn.functional.interpolate", "call": {"mode": "bilinear", "antialias": False, "input.ndim": 4}},
    {"op": "torch.nn.Upsample", "call": {"mode": "bilinear", "input.ndim": 4}},
    {"op": "torch.nn.functional.upsample", "call": {"mode": "bilinear", "input.ndim": 4}},
    {"op": "torch.nn.UpsamplingBilinear2d", "call": {"input.ndim": 4}},
    {"op": "torch.nn.functional.upsample_bilinear", "call": {"input.ndim": 4}},
    # complementary: nearest gathers (no atomics)
    {"op": "torch.nn.functional.interpolate", "call": {"mode": "nearest", "antialias": False, "input.ndim": 4}},
    {"op": "torch.nn.Upsample", "call": {"mode": "nearest", "input.ndim": 4}},
    {"op": "torch.nn.functional.interpolate", "call": {"mode": "nearest-exact", "antialias": False, "input.ndim": 4}},
)


@verifier("torch.interpolate_bilinear_backward", framework="pytorch", solutions=("PT_DET",), cases=BILINEAR_CASES)
def interpolate_bilinear_backward(ctx):
    """interpolate(mode='bilinear', x2) backward on (N, 64, 64, 64): each output adds into four
    inputs with atomicAdd (verifiers/torch/interp.py builds every interpolate case)."""
    from verifiers.torch.interp import interpolate_case

    return interpolate_case(ctx, "bilinear", 4)


def _pool(ctx, dims):
    """Overlapping windows (3, stride 1): an input that is the max of several windows gets
    their gradients added with atomicAdd. The upstream gradient must differ per window: with
    `y * y.detach()` (the H200 run) every window passes the same value, and adding equal
    values gives the same bits in any order, so nothing could ever show."""
    torch, device, gen = setup(ctx)
    shape = (ctx.size(32, 1), 64, 64, 64) if dims == 2 else (ctx.size(8, 1), 16, 32, 32, 32)
    x = mixed(torch, gen, shape, device).requires_grad_()
    pool = torch.nn.functional.max_pool2d if dims == 2 else torch.nn.functional.max_pool3d
    out_shape = shape[:2] + tuple(s - 2 for s in shape[2:])
    up = mixed(torch, gen, out_shape, device)

    def run():
        return grads((pool(x, 3, stride=1) * up).sum(), x)

    return run


@verifier("torch.max_pool2d_backward", framework="pytorch", solutions=("PT_DET",))
def max_pool2d_backward(ctx):
    return _pool(ctx, 2)


@verifier("torch.max_pool3d_backward", framework="pytorch", solutions=("PT_DET",))
def max_pool3d_backward(ctx):
    return _pool(ctx, 3)


@verifier("torch.conv2d_backward", framework="pytorch", solutions=("PT_DET",))
def conv2d_backward(ctx):
    """Weight and input gradients of a first layer: 3 input channels, 64 filters 3x3, batch 256
    of 32x32. On the H100 (cuDNN 9.19) cuDNN's default choice for this shape's weight gradient
    differs run to run; the 64-channel 64x64 shape of the H200 run, and eleven other shapes
    tried with benchmarks/gpu_sizes.py, did not (cuDNN picks deterministic algorithms there)."""
    torch, device, gen = setup(ctx)
    x = torch.randn(ctx.size(256, 2), 3, 32, 32, generator=gen).to(device).requires_grad_()
    w = (torch.randn(64, 3, 3, 3, generator=gen) * 1e-2).to(device).requires_grad_()
    up = torch.randn(x.shape[0], 64, 32, 32, generator=gen).to(device)
    return lambda: grads((torch.nn.functional.conv2d(x, w, padding=1) * up).sum(), w, x)


@verifier("torch.ctc_loss_backward", framework="pytorch", solutions=("PT_DET",))
def ctc_loss_backward(ctx):
    torch, device, gen = setup(ctx)
    t, n, c, s = 500, ctx.size(64, 2), 100, 100
    logits = torch.randn(t, n, c, generator=gen).to(device).requires_grad_()
    targets = torch.randint(1, c, (n, s), generator=gen).to(device)
    in_len = torch.full((n,), t, dtype=torch.long, device=device)
    tgt_len = torch.full((n,), s, dtype=torch.long, device=device)

    def run():
        loss = torch.nn.functional.ctc_loss(logits.log_softmax(2), targets, in_len, tgt_len)
        return grads(loss, logits)

    return run
