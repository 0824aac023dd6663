"""A graph convolutional network written with plain PyTorch, as PyG's MessagePassing does
under the hood: messages gathered along edges (index_select), summed into nodes with
index_add_, degrees counted with scatter_add_, node classification with cross-entropy."""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F


class GCNLayer(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.lin = nn.Linear(cin, cout)

    def forward(self, x, edge_index):
        src, dst = edge_index
        n = x.shape[0]
        deg = torch.zeros(n, device=x.device).scatter_add_(0, dst, torch.ones_like(dst, dtype=x.dtype))
        norm = deg.clamp(min=1).rsqrt()
        h = self.lin(x)
        msg = h.index_select(0, src) * (norm[src] * norm[dst]).unsqueeze(1)
        return torch.zeros_like(h).index_add_(0, dst, msg)


class GCN(nn.Module):
    def __init__(self, cin=32, hidden=64, classes=7):
        super().__init__()
        self.l1 = GCNLayer(cin, hidden)
        self.l2 = GCNLayer(hidden, classes)

    def forward(self, x, edge_index):
        h = F.dropout(F.relu(self.l1(x, edge_index)), p=0.5, training=self.training)
        return self.l2(h, edge_index)


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--steps", type=int, default=20)
    args = p.parse_args()
    torch.manual_seed(0)
    n, e = 2000, 40000
    x = torch.randn(n, 32, device=args.device)
    # a power-law graph: a few hubs receive most edges
    dst = (torch.rand(e) ** 3 * n).long()
    src = torch.randint(0, n, (e,))
    edge_index = torch.stack([src, dst]).to(args.device)
    y = torch.randint(0, 7, (n,), device=args.device)
    model = GCN().to(args.device)
    opt = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)
    for step in range(args.steps):
        loss = F.cross_entropy(model(x, edge_index), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 10 == 0:
            print(f"step {step} loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
