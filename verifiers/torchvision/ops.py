"""torchvision's region ops (torchvision.ops): their CUDA backward adds into the feature map
with atomicAdd wherever boxes overlap.

Every case pools 2000 random, heavily overlapping boxes from an 8x144x64x64 feature map and
backpropagates a random, mixed-magnitude upstream gradient `(y * up).sum()`, so the order of
the atomic additions into one input element changes the rounding. `sampling_ratio=2` keeps the
pure-PyTorch roi_align that torchvision runs under the switch (0.16+) small where it runs eagerly
(0.16.0): with the default -1 it samples every row and column of the feature map per bin
(torchvision/ops/roi_align.py; later releases compile it).
"""

from __future__ import annotations

from verifiers import verifier
from verifiers.torch.common import grads, mixed, setup

ROI_ALIGN_CASES = (
    {"op": "torchvision.ops.roi_align", "call": {}},
    {"op": "torchvision.ops.RoIAlign", "call": {}},
)
ROI_POOL_CASES = (
    {"op": "torchvision.ops.roi_pool", "call": {}},
    {"op": "torchvision.ops.RoIPool", "call": {}},
    {"op": "torchvision.ops.ps_roi_align", "call": {}},
    {"op": "torchvision.ops.PSRoIAlign", "call": {}},
    {"op": "torchvision.ops.ps_roi_pool", "call": {}},
    {"op": "torchvision.ops.PSRoIPool", "call": {}},
)


def _inputs(ctx):
    torch, device, gen = setup(ctx)
    n, channels, size, boxes = ctx.size(8, 1), 144, ctx.size(64, 16), ctx.size(2000, 16)
    feat = mixed(torch, gen, (n, channels, size, size), device)
    corners = torch.rand(boxes, 2, generator=gen) * (size * 0.75)
    sides = 4 + torch.rand(boxes, 2, generator=gen) * (size * 0.25 - 4)
    batch = torch.randint(0, n, (boxes, 1), generator=gen).float()
    rois = torch.cat([batch, corners, corners + sides], 1).to(device)
    return torch, gen, device, feat, rois


def _call(ctx, default_op, table):
    import torchvision.ops as ops

    torch, gen, device, feat, rois = _inputs(ctx)
    op = ctx.op or default_op
    fn = table(ops)[op.rsplit(".", 1)[1]]
    feat.requires_grad_()
    up = mixed(torch, gen, tuple(fn(feat, rois).shape), device)
    return lambda: grads((fn(feat, rois) * up).sum(), feat)


@verifier("torchvision.roi_align_backward", framework="torchvision", solutions=("PT_DET",), cases=ROI_ALIGN_CASES)
def roi_align_backward(ctx):
    """roi_align 7x7, sampling_ratio 2, aligned: the CUDA backward (roi_align_backward_kernel_impl)
    adds each sample's four bilinear weights into the input gradient with fastAtomicAdd; under
    torch.use_deterministic_algorithms(True) torchvision 0.16+ runs its pure-PyTorch _roi_align
    instead, whose backward is PyTorch's own (deterministic under the switch)."""
    return _call(ctx, "torchvision.ops.roi_align", lambda ops: {
        "roi_align": lambda x, r: ops.roi_align(x, r, 7, 1.0, 2, True),
        "RoIAlign": ops.RoIAlign(7, 1.0, 2, True),
    })


@verifier("torchvision.roi_pool_backward", framework="torchvision", solutions=("PT_DET",), cases=ROI_POOL_CASES)
def roi_pool_backward(ctx):
    """roi_pool 7x7 (max: the gradient goes to each bin's argmax, shared by overlapping boxes),
    ps_roi_align and ps_roi_pool 3x3 (144 = 16 x 3 x 3 channels): each CUDA backward adds into
    the input gradient with atomicAdd and, from 0.16, calls alertNotDeterministic, so under the
    switch they raise rather than fall back."""
    return _call(ctx, "torchvision.ops.roi_pool", lambda ops: {
        "roi_pool": lambda x, r: ops.roi_pool(x, r, 7, 1.0),
        "RoIPool": ops.RoIPool(7, 1.0),
        "ps_roi_align": lambda x, r: ops.ps_roi_align(x, r, 3, 1.0, 2),
        "PSRoIAlign": ops.PSRoIAlign(3, 1.0, 2),
        "ps_roi_pool": lambda x, r: ops.ps_roi_pool(x, r, 3, 1.0),
        "PSRoIPool": ops.PSRoIPool(3, 1.0),
    })
