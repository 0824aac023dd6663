"""A quick experiment script: an MLP with dropout on tabular data, Adam, MSE. It seeds torch
for the model's initialisation and then calls torch.seed() "so that every run sees new
dropout masks", as scripts that want varied runs do: the dropout masks then come from a seed
taken from the clock. (The knowledge base's check must catch this and name dropout.)"""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--no-reseed", action="store_true", help="keep the seed (the runs then repeat)")
    args = p.parse_args()
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Dropout(0.2), nn.Linear(64, 64), nn.ReLU(),
                          nn.Dropout(0.2), nn.Linear(64, 1)).to(args.device)
    x = torch.randn(512, 16, device=args.device)
    y = x[:, :4].sum(dim=1, keepdim=True) + 0.1 * torch.randn(512, 1, device=args.device)
    if not args.no_reseed:
        torch.seed()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for step in range(args.steps):
        loss = F.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 10 == 0:
            print(f"step {step} loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
