"""A model compiled with torch.compile, as the PyTorch 2 tutorials write it: a small
pre-norm transformer encoder (LayerNorm, multi-head attention through nn.MultiheadAttention,
a GELU MLP) over token embeddings, mean pooling, a classifier, AdamW."""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F


class Encoder(nn.Module):
    def __init__(self, vocab=1000, d=64, heads=4, classes=4):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.ln1 = nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
        self.ln2 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))
        self.cls = nn.Linear(d, classes)

    def forward(self, tokens):
        x = self.emb(tokens)
        h = self.ln1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        x = x + self.mlp(self.ln2(x))
        return self.cls(x.mean(dim=1))


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--steps", type=int, default=20)
    args = p.parse_args()
    torch.manual_seed(0)
    model = Encoder().to(args.device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    model = torch.compile(model)
    for step in range(args.steps):
        tokens = torch.randint(0, 1000, (32, 64), device=args.device)
        labels = torch.randint(0, 4, (32,), device=args.device)
        loss = F.cross_entropy(model(tokens), labels)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % 10 == 0:
            print(f"step {step} loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
