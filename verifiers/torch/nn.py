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


@verifier("torch.interpolate_bilinear_backward", framework="pytorch", solutions=("PT_DET",))
def interpolate_bilinear_backward(ctx):
    torch, device, gen = setup(ctx)
    x = mixed(torch, gen, (ctx.size(32, 1), 64, 64, 64), device).requires_grad_()
    up = mixed(torch, gen, (x.shape[0], 64, 128, 128), device)

    def run():
        y = torch.nn.functional.interpolate(x, scale_factor=2, mode="bilinear", align_corners=False)
        return grads((y * up).sum(), x)

    return run


def _pool(ctx, dims):
    torch, device, gen = setup(ctx)
    shape = (ctx.size(32, 1), 64, 64, 64) if dims == 2 else (ctx.size(8, 1), 16, 32, 32, 32)
    x = mixed(torch, gen, shape, device).requires_grad_()
    pool = torch.nn.functional.max_pool2d if dims == 2 else torch.nn.functional.max_pool3d

    def run():
        y = pool(x, 3, stride=1)
        return grads((y * y.detach()).sum(), x)

    return run


@verifier("torch.max_pool2d_backward", framework="pytorch", solutions=("PT_DET",))
def max_pool2d_backward(ctx):
    return _pool(ctx, 2)


@verifier("torch.max_pool3d_backward", framework="pytorch", solutions=("PT_DET",))
def max_pool3d_backward(ctx):
    return _pool(ctx, 3)


@verifier("torch.conv2d_backward", framework="pytorch", solutions=("PT_DET",))
def conv2d_backward(ctx):
    """Weight and input gradients with cudnn.benchmark=True (autotuning picks per process)
    unless the solution turned it off."""
    torch, device, gen = setup(ctx)
    if not ctx.solutions:
        torch.backends.cudnn.benchmark = True
    x = mixed(torch, gen, (ctx.size(32, 1), 64, 64, 64), device).requires_grad_()
    w = (torch.randn(64, 64, 3, 3, generator=gen) * 1e-2).to(device).requires_grad_()
    return lambda: grads(torch.nn.functional.conv2d(x, w, padding=1).sum(), w, x)


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
