"""A sparse mixture-of-experts feed-forward layer in a small language model, in the style
of Switch/Mixtral reference code: a linear router, torch.topk top-2 routing with softmax
gates, tokens gathered per expert with index_select and combined with index_add_, and an
auxiliary load-balancing loss."""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F


class MoE(nn.Module):
    def __init__(self, d, experts=8, k=2, hidden=256):
        super().__init__()
        self.k, self.experts = k, experts
        self.router = nn.Linear(d, experts, bias=False)
        self.w1 = nn.ModuleList(nn.Linear(d, hidden) for _ in range(experts))
        self.w2 = nn.ModuleList(nn.Linear(hidden, d) for _ in range(experts))

    def forward(self, x):
        shape = x.shape
        x = x.reshape(-1, shape[-1])
        probs = F.softmax(self.router(x), dim=-1)
        gates, chosen = torch.topk(probs, self.k, dim=-1)
        gates = gates / gates.sum(-1, keepdim=True)
        out = torch.zeros_like(x)
        for e in range(self.experts):
            token, slot = torch.where(chosen == e)
            if token.numel() == 0:
                continue
            h = self.w2[e](F.silu(self.w1[e](x.index_select(0, token))))
            out.index_add_(0, token, h * gates[token, slot, None])
        # fraction of tokens routed to each expert times its mean router probability
        load = F.one_hot(chosen[:, 0], self.experts).float().mean(0)
        aux = self.experts * (load * probs.mean(0)).sum()
        return out.reshape(shape), aux


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.heads = heads
        self.moe = MoE(d)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        att = (q @ k.transpose(-2, -1)) / (d // self.heads) ** 0.5
        att = att.masked_fill(torch.triu(torch.ones(t, t, dtype=torch.bool, device=x.device), 1), float("-inf"))
        x = x + self.proj((att.softmax(-1) @ v).transpose(1, 2).reshape(b, t, d))
        h, aux = self.moe(self.ln2(x))
        return x + h, aux


class MoELM(nn.Module):
    def __init__(self, vocab=1024, d=128, heads=4, layers=2, block=64):
        super().__init__()
        self.tok, self.pos = nn.Embedding(vocab, d), nn.Embedding(block, d)
        self.blocks = nn.ModuleList(Block(d, heads) for _ in range(layers))
        self.ln, self.head = nn.LayerNorm(d), nn.Linear(d, vocab)

    def forward(self, idx):
        x = self.tok(idx) + self.pos(torch.arange(idx.size(1), device=idx.device))
        aux_total = 0.0
        for block in self.blocks:
            x, aux = block(x)
            aux_total = aux_total + aux
        return self.head(self.ln(x)), aux_total


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--aux-weight", type=float, default=0.01)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    torch.manual_seed(args.seed)
    model = MoELM().to(args.device)
    opt = torch.optim.AdamW(model.parameters(), lr=6e-4, betas=(0.9, 0.95), weight_decay=0.1)
    corpus = torch.randint(0, 1024, (50_000,))
    for step in range(args.steps):
        starts = torch.randint(0, len(corpus) - 65, (32,))
        chunk = torch.stack([corpus[s:s + 65] for s in starts]).to(args.device)
        logits, aux = model(chunk[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), chunk[:, 1:].reshape(-1))
        opt.zero_grad(set_to_none=True)
        (loss + args.aux_weight * aux).backward()
        opt.step()
        if step % 10 == 0:
            print(f"step {step} loss {loss.item():.4f} aux {aux.item():.4f}")


if __name__ == "__main__":
    main()
