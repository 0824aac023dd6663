"""The U-Net of the popular Pytorch-UNet repository for binary segmentation masks: double
convolutions with BatchNorm, max-pool down, bilinear upsampling with align_corners=True and
skip concatenation, BCEWithLogits plus a soft Dice loss, RMSprop."""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F


class DoubleConv(nn.Sequential):
    def __init__(self, cin, cout):
        super().__init__(nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True),
                         nn.Conv2d(cout, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True))


class Up(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.up = nn.Upsample(scale_factor=2, mode="bilinear", align_corners=True)
        self.conv = DoubleConv(cin, cout)

    def forward(self, x, skip):
        x = self.up(x)
        dy, dx = skip.size(2) - x.size(2), skip.size(3) - x.size(3)
        x = F.pad(x, [dx // 2, dx - dx // 2, dy // 2, dy - dy // 2])
        return self.conv(torch.cat([skip, x], dim=1))


class UNet(nn.Module):
    def __init__(self, channels=3, base=16):
        super().__init__()
        self.inc = DoubleConv(channels, base)
        self.downs = nn.ModuleList([DoubleConv(base, base * 2), DoubleConv(base * 2, base * 4),
                                    DoubleConv(base * 4, base * 4)])
        self.ups = nn.ModuleList([Up(base * 8, base * 2), Up(base * 4, base), Up(base * 2, base)])
        self.outc = nn.Conv2d(base, 1, 1)

    def forward(self, x):
        skips = [self.inc(x)]
        for down in self.downs:
            skips.append(down(F.max_pool2d(skips[-1], 2)))
        x = skips.pop()
        for up in self.ups:
            x = up(x, skips.pop())
        return self.outc(x)


def dice_loss(logits, target, eps=1e-6):
    prob = torch.sigmoid(logits)
    inter = (prob * target).sum(dim=(1, 2, 3))
    union = prob.sum(dim=(1, 2, 3)) + target.sum(dim=(1, 2, 3))
    return 1 - ((2 * inter + eps) / (union + eps)).mean()


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    torch.manual_seed(args.seed)
    model = UNet().to(args.device)
    opt = torch.optim.RMSprop(model.parameters(), lr=1e-4, weight_decay=1e-8, momentum=0.9)
    criterion = nn.BCEWithLogitsLoss()
    for step in range(args.steps):
        images = torch.randn(4, 3, 96, 96, device=args.device)
        masks = (F.avg_pool2d(images[:, :1], 9, stride=1, padding=4) > 0).float()
        logits = model(images)
        loss = criterion(logits, masks) + dice_loss(logits, masks)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_value_(model.parameters(), 0.1)
        opt.step()
        if step % 10 == 0:
            print(f"step {step} loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
