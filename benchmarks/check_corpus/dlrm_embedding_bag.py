"""A DLRM-style recommender: sparse categorical features through nn.EmbeddingBag (mode
'sum', offsets), a bottom MLP for dense features, pairwise dot-product interactions (bmm),
a top MLP, binary cross-entropy with logits, SGD."""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F


class DLRM(nn.Module):
    def __init__(self, tables=(1000, 500, 2000, 100), dim=16, dense=13):
        super().__init__()
        self.emb = nn.ModuleList(nn.EmbeddingBag(n, dim, mode="sum") for n in tables)
        self.bottom = nn.Sequential(nn.Linear(dense, 64), nn.ReLU(), nn.Linear(64, dim), nn.ReLU())
        pairs = (len(tables) + 1) * len(tables) // 2
        self.top = nn.Sequential(nn.Linear(dim + pairs, 64), nn.ReLU(), nn.Linear(64, 1))

    def forward(self, dense, indices, offsets):
        x = self.bottom(dense)
        feats = [x] + [bag(idx, off) for bag, idx, off in zip(self.emb, indices, offsets)]
        z = torch.stack(feats, dim=1)  # (batch, features, dim)
        inter = torch.bmm(z, z.transpose(1, 2))
        i, j = torch.tril_indices(z.shape[1], z.shape[1], offset=-1, device=z.device)
        return self.top(torch.cat([x, inter[:, i, j]], dim=1)).squeeze(1)


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--steps", type=int, default=20)
    args = p.parse_args()
    torch.manual_seed(0)
    tables = (1000, 500, 2000, 100)
    model = DLRM(tables).to(args.device)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    batch = 256
    for step in range(args.steps):
        dense = torch.randn(batch, 13, device=args.device)
        indices, offsets = [], []
        for n in tables:
            lengths = torch.randint(1, 6, (batch,))
            # popular items: a few ids take most lookups, as click logs have
            ids = (torch.rand(int(lengths.sum())) ** 4 * n).long()
            indices.append(ids.to(args.device))
            offsets.append(torch.cat([torch.zeros(1, dtype=torch.long), lengths.cumsum(0)[:-1]]).to(args.device))
        labels = torch.randint(0, 2, (batch,), device=args.device).float()
        loss = F.binary_cross_entropy_with_logits(model(dense, indices, offsets), labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 10 == 0:
            print(f"step {step} loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
