"""A two-tower retrieval model as recommendation tutorials write it: user and item id
embeddings with nn.Embedding(sparse=True) trained by SparseAdam, dense feature towers
trained by Adam, and an in-batch sampled softmax over the item tower's outputs."""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F


class Tower(nn.Module):
    def __init__(self, ids, feats, dim=64):
        super().__init__()
        self.emb = nn.Embedding(ids, dim, sparse=True)
        self.mlp = nn.Sequential(nn.Linear(dim + feats, 128), nn.ReLU(), nn.Linear(128, dim))

    def forward(self, ids, feats):
        return F.normalize(self.mlp(torch.cat([self.emb(ids), feats], dim=1)), dim=1)


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--batch-size", type=int, default=512)
    p.add_argument("--seed", type=int, default=2024)
    args = p.parse_args()
    torch.manual_seed(args.seed)
    users, items = 20_000, 5_000
    user_tower, item_tower = Tower(users, 8).to(args.device), Tower(items, 16).to(args.device)
    sparse = [user_tower.emb.weight, item_tower.emb.weight]
    dense = [p for m in (user_tower, item_tower) for n, p in m.named_parameters() if not n.startswith("emb.")]
    opt_sparse = torch.optim.SparseAdam(sparse, lr=1e-2)
    opt_dense = torch.optim.Adam(dense, lr=1e-3)
    user_feats, item_feats = torch.randn(users, 8), torch.randn(items, 16)
    # popular items appear in many interactions (a Zipf-like draw)
    popularity = 1.0 / torch.arange(1, items + 1).float()
    temperature = 0.05
    for step in range(args.steps):
        u = torch.randint(0, users, (args.batch_size,))
        i = torch.multinomial(popularity, args.batch_size, replacement=True)
        qu = user_tower(u.to(args.device), user_feats[u].to(args.device))
        qi = item_tower(i.to(args.device), item_feats[i].to(args.device))
        logits = qu @ qi.t() / temperature
        # correct for sampling popular items more often (logQ correction)
        logits = logits - torch.log(popularity[i] / popularity.sum()).to(args.device)[None, :]
        loss = F.cross_entropy(logits, torch.arange(args.batch_size, device=args.device))
        opt_sparse.zero_grad()
        opt_dense.zero_grad()
        loss.backward()
        opt_sparse.step()
        opt_dense.step()
        if step % 10 == 0:
            print(f"step {step} loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
