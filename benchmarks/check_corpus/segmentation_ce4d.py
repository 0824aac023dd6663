"""Semantic segmentation as the tutorials write it: a small encoder-decoder, bilinear
upsampling of the logits to the label size, and cross-entropy over the 4-D logits
(N, C, H, W) against an (N, H, W) label map with ignore_index=255."""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F


def conv_bn(cin, cout, stride=1):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True))


class SegNet(nn.Module):
    def __init__(self, classes=6):
        super().__init__()
        self.enc1 = conv_bn(3, 32, 2)
        self.enc2 = conv_bn(32, 64, 2)
        self.enc3 = conv_bn(64, 64, 2)
        self.dec = conv_bn(64 + 32, 32)
        self.cls = nn.Conv2d(32, classes, 1)

    def forward(self, x):
        size = x.shape[-2:]
        e1 = self.enc1(x)
        e3 = self.enc3(self.enc2(e1))
        up = F.interpolate(e3, size=e1.shape[-2:], mode="bilinear", align_corners=False)
        logits = self.cls(self.dec(torch.cat([up, e1], dim=1)))
        return F.interpolate(logits, size=size, mode="bilinear", align_corners=False)


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--steps", type=int, default=20)
    args = p.parse_args()
    torch.manual_seed(0)
    model = SegNet().to(args.device)
    criterion = nn.CrossEntropyLoss(ignore_index=255)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    images = torch.randn(32, 3, 64, 64)
    masks = torch.randint(0, 6, (32, 64, 64))
    masks[:, :4] = 255  # an ignored border, as annotation tools leave
    for step in range(args.steps):
        idx = torch.randint(0, 32, (8,))
        x, y = images[idx].to(args.device), masks[idx].to(args.device)
        loss = criterion(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 10 == 0:
            print(f"step {step} loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
