"""A graph attention network (GAT, Velickovic et al.) written without a graph library, the
way PyTorch Geometric's GATConv computes it: per-edge scores from index_select, a softmax
over each node's incoming edges with scatter_reduce("amax") and scatter_add, messages summed
with index_add_, on a random graph with skewed degrees; node classification with Adam."""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F


class GATLayer(nn.Module):
    def __init__(self, cin, cout, heads, concat=True, dropout=0.2):
        super().__init__()
        self.heads, self.cout, self.concat = heads, cout, concat
        self.lin = nn.Linear(cin, heads * cout, bias=False)
        self.att_src = nn.Parameter(torch.randn(1, heads, cout) * 0.1)
        self.att_dst = nn.Parameter(torch.randn(1, heads, cout) * 0.1)
        self.bias = nn.Parameter(torch.zeros(heads * cout if concat else cout))
        self.dropout = dropout

    def forward(self, x, edge_index):
        src, dst = edge_index
        n = x.size(0)
        h = self.lin(x).view(n, self.heads, self.cout)
        alpha = (h * self.att_src).sum(-1).index_select(0, src) + (h * self.att_dst).sum(-1).index_select(0, dst)
        alpha = F.leaky_relu(alpha, 0.2)
        amax = torch.full((n, self.heads), float("-inf"), device=x.device, dtype=alpha.dtype)
        amax = amax.scatter_reduce(0, dst[:, None].expand_as(alpha), alpha, reduce="amax", include_self=True)
        alpha = (alpha - amax.index_select(0, dst)).exp()
        denom = torch.zeros(n, self.heads, device=x.device, dtype=alpha.dtype)
        denom = denom.scatter_add(0, dst[:, None].expand_as(alpha), alpha)
        alpha = alpha / (denom.index_select(0, dst) + 1e-16)
        alpha = F.dropout(alpha, self.dropout, self.training)
        msg = h.index_select(0, src) * alpha[..., None]
        out = torch.zeros_like(h).index_add_(0, dst, msg)
        out = out.reshape(n, -1) if self.concat else out.mean(1)
        return out + self.bias


class GAT(nn.Module):
    def __init__(self, cin, hidden, classes, heads=8):
        super().__init__()
        self.conv1 = GATLayer(cin, hidden, heads)
        self.conv2 = GATLayer(hidden * heads, classes, 1, concat=False)

    def forward(self, x, edge_index):
        x = F.dropout(x, 0.6, self.training)
        x = F.elu(self.conv1(x, edge_index))
        x = F.dropout(x, 0.6, self.training)
        return self.conv2(x, edge_index)


def random_graph(n, edges):
    """A graph whose in-degrees follow a power law, with self-loops, as GATConv adds them."""
    weights = torch.arange(1, n + 1).float().pow(-1.2)
    dst = torch.multinomial(weights, edges, replacement=True)
    src = torch.randint(0, n, (edges,))
    loops = torch.arange(n)
    return torch.stack([torch.cat([src, loops]), torch.cat([dst, loops])])


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--seed", type=int, default=12345)
    args = p.parse_args()
    torch.manual_seed(args.seed)
    n, feats, classes = 2708, 256, 7
    x = torch.randn(n, feats).to(args.device)
    y = torch.randint(0, classes, (n,)).to(args.device)
    edge_index = random_graph(n, 10_556).to(args.device)
    train_mask = torch.zeros(n, dtype=torch.bool, device=args.device)
    train_mask[:640] = True
    model = GAT(feats, 8, classes).to(args.device)
    opt = torch.optim.Adam(model.parameters(), lr=0.005, weight_decay=5e-4)
    for step in range(args.steps):
        model.train()
        out = model(x, edge_index)
        loss = F.cross_entropy(out[train_mask], y[train_mask])
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 10 == 0:
            print(f"step {step} loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
