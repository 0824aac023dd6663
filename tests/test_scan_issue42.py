"""Issue 42: the check corpora's misses of the static scan, each fixed at its cause and pinned here
against the shipped index: a reseed from a non-deterministic source (torch.seed), backward records at
calls no gradient flows through, and the layers inside a torchvision model a program builds."""

from __future__ import annotations

import textwrap
from pathlib import Path

from kb.scan import pins
from kb.scan.run import scan


def _found(tmp_path: Path, source: str, versions: str = "torch=2.11,torchvision=0.26") -> list[tuple[int, str, str]]:
    (tmp_path / "t.py").write_text(textwrap.dedent(source))
    report = scan([str(tmp_path / "t.py")], given=pins.parse_versions(versions))
    return sorted((f.line, f.record, f.level) for f in report.findings)


def test_a_reseed_from_a_non_deterministic_source_is_a_finding(tmp_path):
    """benchmarks/check_corpus/mlp_dropout_reseed.py: torch.manual_seed(0), then torch.seed()."""
    source = """\
        import random
        import numpy as np
        import torch
        torch.manual_seed(0)
        torch.seed()
        torch.random.seed()
        torch.cuda.seed_all()
        g = torch.Generator()
        g.seed()
        random.seed(0)
        np.random.seed(0)
        np.random.default_rng().seed()
        """
    assert _found(tmp_path, source) == [(line, "torch.seed-nondeterministic", "nondeterministic") for line in (5, 6, 7, 9)]


GRAD = """\
    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    def augment(x):
        theta = torch.zeros(x.size(0), 2, 3, device=x.device)
        theta[:, 0, 0], theta[:, 1, 1] = torch.empty(x.size(0)).uniform_(0.5, 1.0), 1.0
        grid = F.affine_grid(theta, list(x.shape), align_corners=False)
        return F.grid_sample(x, grid, align_corners=False)


    def warp(x, flow):
        return F.grid_sample(x, flow, align_corners=False)


    class Net(nn.Module):
        def __init__(self, scale=2):
            super().__init__()
            self.conv = nn.Conv2d(3, 3, 3, padding=1)
            self.scale = scale

        def forward(self, lr):
            up = F.interpolate(lr, scale_factor=self.scale, mode="bicubic")
            h = self.conv(lr)
            return F.interpolate(h, scale_factor=self.scale, mode="bicubic") + up


    def main():
        model = Net().to("cuda")
        flownet = nn.Conv2d(3, 2, 3, padding=1)
        images = torch.rand(64, 3, 32, 32)
        opt = torch.optim.SGD([*model.parameters(), *flownet.parameters()], lr=0.1)
        for step in range(3):
            x = images[torch.randint(0, 64, (8,))].to("cuda")
            hr = F.interpolate(x, scale_factor=2, mode="bicubic").clamp(0, 1)
            loss = (model(augment(x)) - hr).abs().mean() + warp(x, flownet(x).permute(0, 2, 3, 1)).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()


    if __name__ == "__main__":
        main()
    """


def test_backward_records_need_an_input_that_requires_a_gradient(tmp_path):
    """benchmarks/check_frozen/simclr_ntxent.py and superres_pixelshuffle.py: grid_sample on the data
    (augmentation, line 10), bicubic interpolate of the low-resolution input (24) and of the batch (36)
    run no backward; the interpolate of a module's output (26) and the grid_sample of a flow a module
    makes (14) do."""
    found = [f for f in _found(tmp_path, GRAD) if f[1] != "torch.cudnn-convolution"]
    assert found == [(14, "torch.grid-sample-backward", "nondeterministic"),
                     (26, "torch.interpolate-bicubic-backward", "nondeterministic")]


def test_what_may_require_a_gradient_keeps_the_backward_records(tmp_path):
    """A file that names requires_grad, a model handed on (its forward may be called elsewhere with
    anything), and a function handed on are not followed: the records stay."""
    marked = GRAD.replace("images = torch.rand(64, 3, 32, 32)", "images = torch.rand(64, 3, 32, 32, requires_grad=True)")
    handed = GRAD.replace("opt = torch.optim.SGD(", "ema = torch.optim.swa_utils.AveragedModel(model)\n        opt = torch.optim.SGD(")
    mapped = GRAD.replace("opt.step()", "opt.step()\n            list(map(augment, [x]))")
    backward = {"torch.grid-sample-backward", "torch.interpolate-bicubic-backward"}
    for source, lines in ((marked, {10, 14, 24, 26, 36}), (handed, {14, 24, 26}), (mapped, {10, 14, 24, 26})):
        assert {f[0] for f in _found(tmp_path, source) if f[1] in backward} == lines


def test_a_torchvision_model_counts_as_the_layers_it_contains(tmp_path):
    """benchmarks/check_frozen/vision_mobilenet_torchvision.py: the convolutions are inside the model
    torchvision builds (kb/scan/torchvision_models.py, read from torchvision 0.26.0's code). ResNet's
    and MobileNet's global pooling (output size 1) is a mean; VGG's 7x7 adaptive pooling is not."""
    source = """\
        import torchvision
        from torchvision import models
        from torchvision.models import vgg16
        a = torchvision.models.mobilenet_v3_small(weights=None, num_classes=10)
        b = models.get_model("resnet18", weights=None)
        c = vgg16()
        d = torchvision.models.video.r3d_18()
        e = torchvision.models.resnet.ResNet(torchvision.models.resnet.BasicBlock, [2, 2, 2, 2])
        f = torchvision.models.get_weight("ResNet18_Weights.IMAGENET1K_V1")
        """
    assert _found(tmp_path, source) == [
        (4, "torch.cudnn-convolution", "nondeterministic"),
        (5, "torch.cudnn-convolution", "nondeterministic"),
        (6, "torch.adaptive-avg-pool-backward", "nondeterministic"),
        (6, "torch.cudnn-convolution", "nondeterministic"),
        (7, "torch.cudnn-convolution", "nondeterministic"),
        (8, "torch.cudnn-convolution", "nondeterministic")]
