"""The spatial transformer network of the PyTorch tutorial: a localization network predicts
an affine transform, F.affine_grid and F.grid_sample (bilinear, zeros padding) resample the
input, a small CNN classifies it; max pooling, dropout, NLL loss, SGD."""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F


class STN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 10, 5)
        self.conv2 = nn.Conv2d(10, 20, 5)
        self.drop = nn.Dropout2d()
        self.fc1 = nn.Linear(320, 50)
        self.fc2 = nn.Linear(50, 10)
        self.loc = nn.Sequential(nn.Conv2d(1, 8, 7), nn.MaxPool2d(2, 2), nn.ReLU(True), nn.Conv2d(8, 10, 5),
                                 nn.MaxPool2d(2, 2), nn.ReLU(True))
        self.fc_loc = nn.Sequential(nn.Linear(10 * 3 * 3, 32), nn.ReLU(True), nn.Linear(32, 6))
        self.fc_loc[2].weight.data.zero_()
        self.fc_loc[2].bias.data.copy_(torch.tensor([1, 0, 0, 0, 1, 0], dtype=torch.float))

    def stn(self, x):
        theta = self.fc_loc(self.loc(x).view(-1, 90)).view(-1, 2, 3)
        grid = F.affine_grid(theta, x.size(), align_corners=False)
        return F.grid_sample(x, grid, align_corners=False)

    def forward(self, x):
        x = self.stn(x)
        x = F.relu(F.max_pool2d(self.conv1(x), 2))
        x = F.relu(F.max_pool2d(self.drop(self.conv2(x)), 2))
        x = F.dropout(F.relu(self.fc1(x.view(-1, 320))), training=self.training)
        return F.log_softmax(self.fc2(x), dim=1)


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--steps", type=int, default=20)
    args = p.parse_args()
    torch.manual_seed(0)
    model = STN().to(args.device)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    images = torch.randn(256, 1, 28, 28)
    labels = torch.randint(0, 10, (256,))
    for step in range(args.steps):
        idx = torch.randint(0, 256, (64,))
        x, y = images[idx].to(args.device), labels[idx].to(args.device)
        loss = F.nll_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 10 == 0:
            print(f"step {step} loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
