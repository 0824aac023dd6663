"""Image classification fed by a DataLoader with worker processes and shuffling, whose
Dataset augments with NumPy's global random generator (random crops, flips, noise), as many
public training scripts do; the script seeds torch, NumPy and random at the start."""
import argparse
import random

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


class Augmented(Dataset):
    def __init__(self, n=512):
        rng = np.random.default_rng(0)
        self.images = rng.standard_normal((n, 3, 36, 36)).astype(np.float32)
        self.labels = rng.integers(0, 10, n)

    def __len__(self):
        return len(self.images)

    def __getitem__(self, i):
        img = self.images[i]
        top, left = np.random.randint(0, 5, size=2)
        img = img[:, top:top + 32, left:left + 32]
        if np.random.rand() < 0.5:
            img = img[:, :, ::-1]
        img = img + np.random.normal(0, 0.05, img.shape).astype(np.float32)
        return torch.from_numpy(np.ascontiguousarray(img)), int(self.labels[i])


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--workers", type=int, default=2)
    args = p.parse_args()
    torch.manual_seed(0)
    np.random.seed(0)
    random.seed(0)
    loader = DataLoader(Augmented(), batch_size=32, shuffle=True, num_workers=args.workers, drop_last=True)
    model = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(16, 32, 3, padding=1),
                          nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, 10)).to(args.device)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    step = 0
    while step < args.steps:
        for x, y in loader:
            x, y = x.to(args.device), y.to(args.device)
            loss = F.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            step += 1
            if step >= args.steps:
                break
    print(f"steps {step} loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
