"""A convolutional variational autoencoder: strided Conv2d encoder, the reparameterization
trick (torch.randn_like), ConvTranspose2d decoder, binary cross-entropy plus the KL term,
Adam."""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F


class VAE(nn.Module):
    def __init__(self, z=16):
        super().__init__()
        self.enc = nn.Sequential(nn.Conv2d(1, 32, 4, 2, 1), nn.ReLU(), nn.Conv2d(32, 64, 4, 2, 1), nn.ReLU(), nn.Flatten())
        self.mu = nn.Linear(64 * 7 * 7, z)
        self.logvar = nn.Linear(64 * 7 * 7, z)
        self.fc = nn.Linear(z, 64 * 7 * 7)
        self.dec = nn.Sequential(nn.ConvTranspose2d(64, 32, 4, 2, 1), nn.ReLU(), nn.ConvTranspose2d(32, 1, 4, 2, 1))

    def forward(self, x):
        h = self.enc(x)
        mu, logvar = self.mu(h), self.logvar(h)
        z = mu + torch.randn_like(mu) * torch.exp(0.5 * logvar)
        return self.dec(self.fc(z).view(-1, 64, 7, 7)), mu, logvar


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--steps", type=int, default=20)
    args = p.parse_args()
    torch.manual_seed(0)
    model = VAE().to(args.device)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    images = (torch.rand(256, 1, 28, 28) > 0.7).float()
    for step in range(args.steps):
        x = images[torch.randint(0, 256, (64,))].to(args.device)
        logits, mu, logvar = model(x)
        rec = F.binary_cross_entropy_with_logits(logits, x, reduction="sum")
        kld = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
        loss = (rec + kld) / x.shape[0]
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 10 == 0:
            print(f"step {step} loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
