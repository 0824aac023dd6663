"""A PointNet part-segmentation model on point clouds, in the style of the PyTorch Geometric
examples without the library: a shared per-point MLP (Conv1d), a global max over points, a
per-part feature pooled with scatter_reduce("amax") over part ids, and NLL loss per point."""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F


class PointNetSeg(nn.Module):
    def __init__(self, parts=6):
        super().__init__()
        self.parts = parts
        self.local = nn.Sequential(nn.Conv1d(3, 64, 1), nn.BatchNorm1d(64), nn.ReLU(),
                                   nn.Conv1d(64, 128, 1), nn.BatchNorm1d(128), nn.ReLU())
        self.glob = nn.Sequential(nn.Conv1d(128, 256, 1), nn.BatchNorm1d(256), nn.ReLU())
        self.head = nn.Sequential(nn.Conv1d(128 + 256 + 128, 128, 1), nn.BatchNorm1d(128), nn.ReLU(),
                                  nn.Dropout(0.3), nn.Conv1d(128, parts, 1))

    def forward(self, points, region):
        b, _, n = points.shape
        local = self.local(points)                          # b, 128, n
        glob = self.glob(local).max(dim=2, keepdim=True)[0]  # b, 256, 1
        # pool the local features of each coarse region (voxel) of each cloud
        flat = local.transpose(1, 2).reshape(b * n, -1)
        seg = (region + torch.arange(b, device=points.device)[:, None] * 8).reshape(-1)
        pooled = torch.full((b * 8, flat.shape[1]), -1e4, device=points.device, dtype=flat.dtype)
        pooled = pooled.scatter_reduce(0, seg[:, None].expand_as(flat), flat, reduce="amax", include_self=True)
        per_point = pooled.index_select(0, seg).reshape(b, n, -1).transpose(1, 2)
        x = torch.cat([local, glob.expand(-1, -1, n), per_point], dim=1)
        return F.log_softmax(self.head(x), dim=1)


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--points", type=int, default=1024)
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args()
    torch.manual_seed(args.seed)
    model = PointNetSeg().to(args.device)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=20, gamma=0.5)
    for step in range(args.steps):
        pts = torch.rand(8, 3, args.points, device=args.device) * 2 - 1
        # coarse regions: the octant of each point
        region = ((pts[:, 0] > 0).long() * 4 + (pts[:, 1] > 0).long() * 2 + (pts[:, 2] > 0).long())
        target = ((pts[:, 0] + pts[:, 1] * 0.5).clamp(-1, 0.999) * 3 + 3).long()
        theta = torch.rand(8, device=args.device) * 6.2832
        c, s = torch.cos(theta), torch.sin(theta)
        rot = torch.stack([torch.stack([c, -s, torch.zeros_like(c)], 1), torch.stack([s, c, torch.zeros_like(c)], 1),
                           torch.stack([torch.zeros_like(c), torch.zeros_like(c), torch.ones_like(c)], 1)], 1)
        pts = torch.bmm(rot, pts) + torch.randn_like(pts) * 0.01
        out = model(pts, region)
        loss = F.nll_loss(out, target)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        if step % 10 == 0:
            print(f"step {step} loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
