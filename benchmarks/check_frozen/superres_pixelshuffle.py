"""Single-image super-resolution in the ESPCN/EDSR style of the PyTorch super-resolution
example: low-resolution patches made with bicubic F.interpolate, residual blocks, sub-pixel
upsampling with nn.PixelShuffle, a global bicubic skip, L1 loss, Adam with a step schedule."""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F


class ResBlock(nn.Module):
    def __init__(self, c, scale=0.1):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(c, c, 3, padding=1), nn.ReLU(inplace=True), nn.Conv2d(c, c, 3, padding=1))
        self.scale = scale

    def forward(self, x):
        return x + self.body(x) * self.scale


class EDSR(nn.Module):
    def __init__(self, scale=2, feats=32, blocks=4):
        super().__init__()
        self.scale = scale
        self.head = nn.Conv2d(3, feats, 3, padding=1)
        self.body = nn.Sequential(*[ResBlock(feats) for _ in range(blocks)], nn.Conv2d(feats, feats, 3, padding=1))
        self.tail = nn.Sequential(nn.Conv2d(feats, 3 * scale ** 2, 3, padding=1), nn.PixelShuffle(scale))

    def forward(self, lr):
        h = self.head(lr)
        up = F.interpolate(lr, scale_factor=self.scale, mode="bicubic", align_corners=False)
        return self.tail(h + self.body(h)) + up


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--patch", type=int, default=64)
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args()
    torch.manual_seed(args.seed)
    model = EDSR().to(args.device)
    opt = torch.optim.Adam(model.parameters(), lr=1e-4, betas=(0.9, 0.999), eps=1e-8)
    sched = torch.optim.lr_scheduler.MultiStepLR(opt, milestones=[200], gamma=0.5)
    # smooth "photos": upsampled noise
    photos = F.interpolate(torch.rand(16, 3, 32, 32), size=(256, 256), mode="bilinear", align_corners=False)
    for step in range(args.steps):
        i = torch.randint(0, 16, (16,))
        y0, x0 = torch.randint(0, 256 - args.patch, (2,)).tolist()
        hr = photos[i, :, y0:y0 + args.patch, x0:x0 + args.patch].to(args.device)
        if torch.rand(()) < 0.5:
            hr = hr.flip(-1)
        lr = F.interpolate(hr, scale_factor=0.5, mode="bicubic", align_corners=False, antialias=True).clamp(0, 1)
        loss = F.l1_loss(model(lr), hr)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        if step % 10 == 0:
            print(f"step {step} loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
