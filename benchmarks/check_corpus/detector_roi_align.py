"""A two-stage detector's second stage (Faster R-CNN style): a convolutional backbone, then
torchvision.ops.roi_align pools overlapping proposals (7x7, sampling_ratio=2) for a box head
with a classification and a smooth-L1 box-regression loss. Needs torchvision."""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
from torchvision.ops import roi_align


class Detector(nn.Module):
    def __init__(self, classes=5):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 32, 3, 2, 1), nn.ReLU(), nn.Conv2d(32, 64, 3, 2, 1), nn.ReLU())
        self.head = nn.Sequential(nn.Flatten(), nn.Linear(64 * 7 * 7, 256), nn.ReLU())
        self.cls = nn.Linear(256, classes)
        self.box = nn.Linear(256, 4 * classes)

    def forward(self, images, proposals):
        feats = self.backbone(images)
        pooled = roi_align(feats, proposals, output_size=(7, 7), spatial_scale=0.25, sampling_ratio=2, aligned=True)
        h = self.head(pooled)
        return self.cls(h), self.box(h)


def proposals(batch, per_image, size, device):
    """Overlapping boxes around a few objects, as a region proposal network gives."""
    out = []
    for _ in range(batch):
        centers = torch.rand(4, 2) * size
        c = centers[torch.randint(0, 4, (per_image,))] + torch.randn(per_image, 2) * 4
        wh = 16 + torch.rand(per_image, 2) * 24
        boxes = torch.cat([c - wh / 2, c + wh / 2], dim=1).clamp(0, size - 1)
        out.append(boxes.to(device))
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--steps", type=int, default=20)
    args = p.parse_args()
    torch.manual_seed(0)
    model = Detector().to(args.device)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    images = torch.randn(2, 3, 128, 128, device=args.device)
    for step in range(args.steps):
        boxes = proposals(2, 64, 128, args.device)
        labels = torch.randint(0, 5, (128,), device=args.device)
        targets = torch.randn(128, 4, device=args.device)
        logits, deltas = model(images, boxes)
        deltas = deltas.view(-1, 5, 4)[torch.arange(128, device=args.device), labels]
        loss = F.cross_entropy(logits, labels) + F.smooth_l1_loss(deltas, targets, beta=1 / 9)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 10 == 0:
            print(f"step {step} loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
