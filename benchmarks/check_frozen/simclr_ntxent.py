"""SimCLR self-supervised pre-training (Chen et al. 2020) at toy scale: two random views
of each image (crop-and-resize by affine grids, flips, colour jitter), a small ResNet-like
encoder, a projection head, the NT-Xent loss over a large batch from a cosine-similarity
matmul, and a k-nearest-neighbour monitor with torch.cdist."""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F


def augment(x):
    b = x.size(0)
    scale = torch.empty(b, device=x.device).uniform_(0.5, 1.0)
    shift = torch.empty(b, 2, device=x.device).uniform_(-1, 1) * (1 - scale[:, None])
    flip = torch.where(torch.rand(b, device=x.device) < 0.5, -1.0, 1.0)
    theta = torch.zeros(b, 2, 3, device=x.device)
    theta[:, 0, 0], theta[:, 1, 1], theta[:, :, 2] = scale * flip, scale, shift
    grid = F.affine_grid(theta, list(x.shape), align_corners=False)
    x = F.grid_sample(x, grid, mode="bilinear", padding_mode="reflection", align_corners=False)
    brightness = torch.empty(b, 1, 1, 1, device=x.device).uniform_(0.6, 1.4)
    return (x * brightness).clamp(-3, 3)


class Encoder(nn.Module):
    def __init__(self, width=16):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, width, 3, padding=1, bias=False), nn.BatchNorm2d(width), nn.ReLU())
        self.layer1 = self._block(width, width * 2)
        self.layer2 = self._block(width * 2, width * 4)

    @staticmethod
    def _block(cin, cout):
        return nn.Sequential(nn.Conv2d(cin, cout, 3, stride=2, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(),
                             nn.Conv2d(cout, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU())

    def forward(self, x):
        return torch.flatten(F.adaptive_avg_pool2d(self.layer2(self.layer1(self.stem(x))), 1), 1)


def nt_xent(z1, z2, temperature):
    z = F.normalize(torch.cat([z1, z2]), dim=1)
    n = z1.size(0)
    sim = z @ z.t() / temperature
    sim.fill_diagonal_(float("-inf"))
    targets = torch.cat([torch.arange(n, 2 * n), torch.arange(0, n)]).to(z.device)
    return F.cross_entropy(sim, targets)


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--temperature", type=float, default=0.5)
    p.add_argument("--seed", type=int, default=7)
    args = p.parse_args()
    torch.manual_seed(args.seed)
    encoder = Encoder().to(args.device)
    projector = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 64)).to(args.device)
    params = list(encoder.parameters()) + list(projector.parameters())
    opt = torch.optim.SGD(params, lr=0.3 * args.batch_size / 256, momentum=0.9, weight_decay=1e-6)
    images = torch.randn(2048, 3, 32, 32)
    bank_images, bank_labels = images[:512], torch.randint(0, 10, (512,))
    for step in range(args.steps):
        x = images[torch.randint(0, 2048, (args.batch_size,))].to(args.device)
        loss = nt_xent(projector(encoder(augment(x))), projector(encoder(augment(x))), args.temperature)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 10 == 0:
            with torch.no_grad():
                feats = F.normalize(encoder(bank_images.to(args.device)), dim=1)
                d = torch.cdist(feats[:64], feats)
                d[:, :64].fill_diagonal_(float("inf"))
                nn_idx = d.topk(5, largest=False).indices
                pred = bank_labels.to(args.device)[nn_idx].mode(dim=1).values
                acc = (pred == bank_labels[:64].to(args.device)).float().mean()
            print(f"step {step} loss {loss.item():.4f} knn {acc.item():.3f}")


if __name__ == "__main__":
    main()
