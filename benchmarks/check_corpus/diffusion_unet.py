"""A DDPM-style diffusion model: a small UNet (convolutions, GroupNorm, SiLU, nearest
upsampling, a sinusoidal timestep embedding) trained to predict the noise, MSE loss, AdamW."""
import argparse
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, cin, cout, tdim):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, padding=1)
        self.norm1 = nn.GroupNorm(8, cout)
        self.temb = nn.Linear(tdim, cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1)
        self.norm2 = nn.GroupNorm(8, cout)
        self.skip = nn.Conv2d(cin, cout, 1) if cin != cout else nn.Identity()

    def forward(self, x, t):
        h = F.silu(self.norm1(self.conv1(x)))
        h = h + self.temb(t)[:, :, None, None]
        h = F.silu(self.norm2(self.conv2(h)))
        return h + self.skip(x)


class UNet(nn.Module):
    def __init__(self, ch=32, tdim=64):
        super().__init__()
        self.tdim = tdim
        self.tmlp = nn.Sequential(nn.Linear(tdim, tdim), nn.SiLU(), nn.Linear(tdim, tdim))
        self.inc = nn.Conv2d(3, ch, 3, padding=1)
        self.down1 = Block(ch, ch, tdim)
        self.down2 = Block(ch, 2 * ch, tdim)
        self.mid = Block(2 * ch, 2 * ch, tdim)
        self.up1 = Block(4 * ch, ch, tdim)
        self.up2 = Block(2 * ch, ch, tdim)
        self.out = nn.Conv2d(ch, 3, 1)

    def embed(self, t):
        half = self.tdim // 2
        freqs = torch.exp(-math.log(10000) * torch.arange(half, device=t.device) / half)
        args = t[:, None].float() * freqs[None]
        return self.tmlp(torch.cat([args.sin(), args.cos()], dim=1))

    def forward(self, x, t):
        t = self.embed(t)
        x0 = self.inc(x)
        d1 = self.down1(x0, t)
        d2 = self.down2(F.avg_pool2d(d1, 2), t)
        m = self.mid(d2, t)
        u1 = self.up1(torch.cat([m, d2], 1), t)
        u1 = F.interpolate(u1, scale_factor=2, mode="nearest")
        u2 = self.up2(torch.cat([u1, d1], 1), t)
        return self.out(u2)


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--steps", type=int, default=20)
    args = p.parse_args()
    torch.manual_seed(0)
    model = UNet().to(args.device)
    opt = torch.optim.AdamW(model.parameters(), lr=2e-4)
    betas = torch.linspace(1e-4, 0.02, 1000, device=args.device)
    alphas_bar = torch.cumprod(1 - betas, dim=0)
    data = torch.randn(64, 3, 32, 32, device=args.device)
    for step in range(args.steps):
        x0 = data[torch.randint(0, 64, (16,), device=args.device)]
        t = torch.randint(0, 1000, (16,), device=args.device)
        noise = torch.randn_like(x0)
        ab = alphas_bar[t][:, None, None, None]
        xt = ab.sqrt() * x0 + (1 - ab).sqrt() * noise
        loss = F.mse_loss(model(xt, t), noise)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % 10 == 0:
            print(f"step {step} loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
