"""A NeRF (Mildenhall et al. 2020) training step in the style of nerf-pytorch at toy scale:
positional encoding, a coarse and a fine MLP, 64 stratified samples per ray, hierarchical
resampling by inverse-CDF with torch.searchsorted, volume rendering with cumprod
transmittance, MSE to target colours, Adam with exponential decay."""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F


def encode(x, freqs):
    bands = 2.0 ** torch.arange(freqs, device=x.device) * torch.pi
    xb = x[..., None] * bands
    return torch.cat([x, torch.sin(xb).flatten(-2), torch.cos(xb).flatten(-2)], dim=-1)


class NeRF(nn.Module):
    def __init__(self, width=128, xyz_freqs=10, dir_freqs=4):
        super().__init__()
        self.xyz_freqs, self.dir_freqs = xyz_freqs, dir_freqs
        cin, din = 3 + 6 * xyz_freqs, 3 + 6 * dir_freqs
        self.trunk = nn.Sequential(nn.Linear(cin, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU(),
                                   nn.Linear(width, width), nn.ReLU())
        self.sigma = nn.Linear(width, 1)
        self.rgb = nn.Sequential(nn.Linear(width + din, width // 2), nn.ReLU(), nn.Linear(width // 2, 3))

    def forward(self, pts, dirs):
        h = self.trunk(encode(pts, self.xyz_freqs))
        d = encode(dirs[:, None].expand_as(pts), self.dir_freqs)
        return torch.sigmoid(self.rgb(torch.cat([h, d], -1))), F.relu(self.sigma(h).squeeze(-1))


def render(model, origins, dirs, z, noise_std):
    pts = origins[:, None] + dirs[:, None] * z[..., None]
    rgb, sigma = model(pts, dirs)
    if noise_std > 0:
        sigma = F.relu(sigma + torch.randn_like(sigma) * noise_std)
    delta = torch.cat([z[:, 1:] - z[:, :-1], torch.full_like(z[:, :1], 1e10)], dim=-1)
    alpha = 1 - torch.exp(-sigma * delta)
    trans = torch.cumprod(torch.cat([torch.ones_like(alpha[:, :1]), 1 - alpha + 1e-10], dim=-1), dim=-1)[:, :-1]
    weights = alpha * trans
    return (weights[..., None] * rgb).sum(1), weights


def sample_pdf(bins, weights, n):
    pdf = (weights + 1e-5) / (weights + 1e-5).sum(-1, keepdim=True)
    cdf = torch.cat([torch.zeros_like(pdf[:, :1]), torch.cumsum(pdf, -1)], -1)
    u = torch.rand(cdf.shape[0], n, device=cdf.device).contiguous()
    inds = torch.searchsorted(cdf, u, right=True)
    below, above = (inds - 1).clamp(min=0), inds.clamp(max=cdf.shape[-1] - 1)
    cdf_g = torch.stack([torch.gather(cdf, 1, below), torch.gather(cdf, 1, above)], -1)
    bins_g = torch.stack([torch.gather(bins, 1, below), torch.gather(bins, 1, above)], -1)
    denom = torch.where(cdf_g[..., 1] - cdf_g[..., 0] < 1e-5, torch.ones_like(u), cdf_g[..., 1] - cdf_g[..., 0])
    return bins_g[..., 0] + (u - cdf_g[..., 0]) / denom * (bins_g[..., 1] - bins_g[..., 0])


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--rays", type=int, default=256)
    p.add_argument("--samples", type=int, default=64)
    p.add_argument("--importance", type=int, default=64)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    torch.manual_seed(args.seed)
    coarse, fine = NeRF().to(args.device), NeRF().to(args.device)
    opt = torch.optim.Adam(list(coarse.parameters()) + list(fine.parameters()), lr=5e-4)
    sched = torch.optim.lr_scheduler.ExponentialLR(opt, gamma=0.1 ** (1 / 250_000))
    near, far = 2.0, 6.0
    for step in range(args.steps):
        origins = torch.randn(args.rays, 3, device=args.device) * 0.1 + torch.tensor([0.0, 0.0, -4.0], device=args.device)
        dirs = F.normalize(torch.randn(args.rays, 3, device=args.device) * 0.2 + torch.tensor([0.0, 0.0, 1.0], device=args.device), dim=-1)
        target = torch.sigmoid(origins[:, :1] * 5 + dirs * 3)
        t = torch.linspace(0, 1, args.samples, device=args.device)
        z = near * (1 - t) + far * t
        mids = 0.5 * (z[1:] + z[:-1])
        lower, upper = torch.cat([z[:1], mids]), torch.cat([mids, z[-1:]])
        z = (lower + (upper - lower) * torch.rand(args.rays, args.samples, device=args.device))
        rgb_c, weights = render(coarse, origins, dirs, z, noise_std=1.0)
        mids = 0.5 * (z[:, 1:] + z[:, :-1])
        z_fine = sample_pdf(mids, weights[:, 1:-1].detach(), args.importance)
        z_all, _ = torch.sort(torch.cat([z, z_fine.detach()], -1), -1)
        rgb_f, _ = render(fine, origins, dirs, z_all, noise_std=1.0)
        loss = F.mse_loss(rgb_c, target) + F.mse_loss(rgb_f, target)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        if step % 10 == 0:
            psnr = -10.0 * torch.log10(F.mse_loss(rgb_f, target))
            print(f"step {step} loss {loss.item():.5f} psnr {psnr.item():.2f}")


if __name__ == "__main__":
    main()
