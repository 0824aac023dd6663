"""The PyTorch DCGAN tutorial at 32x32: a generator of ConvTranspose2d layers with
BatchNorm and ReLU, a discriminator of strided convolutions with LeakyReLU, BCELoss, and
Adam(betas=(0.5, 0.999)) stepping the discriminator then the generator each iteration."""
import argparse

import torch
import torch.nn as nn

NZ, NGF, NDF = 64, 32, 32


def weights_init(m):
    name = m.__class__.__name__
    if "Conv" in name:
        nn.init.normal_(m.weight.data, 0.0, 0.02)
    elif "BatchNorm" in name:
        nn.init.normal_(m.weight.data, 1.0, 0.02)
        nn.init.constant_(m.bias.data, 0)


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(
            nn.ConvTranspose2d(NZ, NGF * 4, 4, 1, 0, bias=False), nn.BatchNorm2d(NGF * 4), nn.ReLU(True),
            nn.ConvTranspose2d(NGF * 4, NGF * 2, 4, 2, 1, bias=False), nn.BatchNorm2d(NGF * 2), nn.ReLU(True),
            nn.ConvTranspose2d(NGF * 2, NGF, 4, 2, 1, bias=False), nn.BatchNorm2d(NGF), nn.ReLU(True),
            nn.ConvTranspose2d(NGF, 3, 4, 2, 1, bias=False), nn.Tanh())

    def forward(self, z):
        return self.main(z)


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(
            nn.Conv2d(3, NDF, 4, 2, 1, bias=False), nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(NDF, NDF * 2, 4, 2, 1, bias=False), nn.BatchNorm2d(NDF * 2), nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(NDF * 2, NDF * 4, 4, 2, 1, bias=False), nn.BatchNorm2d(NDF * 4), nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(NDF * 4, 1, 4, 1, 0, bias=False), nn.Sigmoid())

    def forward(self, x):
        return self.main(x).view(-1)


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--manualSeed", type=int, default=999)
    args = p.parse_args()
    torch.manual_seed(args.manualSeed)
    netG, netD = Generator().to(args.device), Discriminator().to(args.device)
    netG.apply(weights_init)
    netD.apply(weights_init)
    criterion = nn.BCELoss()
    optD = torch.optim.Adam(netD.parameters(), lr=2e-4, betas=(0.5, 0.999))
    optG = torch.optim.Adam(netG.parameters(), lr=2e-4, betas=(0.5, 0.999))
    real_images = torch.tanh(torch.randn(512, 3, 32, 32))
    for step in range(args.steps):
        real = real_images[torch.randint(0, 512, (args.batch_size,))].to(args.device)
        b = real.size(0)
        netD.zero_grad()
        label = torch.full((b,), 1.0, device=args.device)
        errD_real = criterion(netD(real), label)
        errD_real.backward()
        fake = netG(torch.randn(b, NZ, 1, 1, device=args.device))
        label.fill_(0.0)
        errD_fake = criterion(netD(fake.detach()), label)
        errD_fake.backward()
        optD.step()
        netG.zero_grad()
        label.fill_(1.0)
        errG = criterion(netD(fake), label)
        errG.backward()
        optG.step()
        if step % 10 == 0:
            print(f"step {step} Loss_D {(errD_real + errD_fake).item():.4f} Loss_G {errG.item():.4f}")


if __name__ == "__main__":
    main()
