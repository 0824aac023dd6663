"""BERT-style masked language modelling with nn.TransformerEncoder (batch_first, GELU,
norm_first): 15% of tokens masked with torch.rand, padding mask, cross-entropy that ignores
unmasked positions (-100), AdamW with a linear warm-up."""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F


class MLM(nn.Module):
    def __init__(self, vocab=1000, d=128, heads=4, layers=2, maxlen=64):
        super().__init__()
        self.tok = nn.Embedding(vocab, d, padding_idx=0)
        self.pos = nn.Embedding(maxlen, d)
        layer = nn.TransformerEncoderLayer(d, heads, 4 * d, dropout=0.1, activation="gelu", batch_first=True,
                                           norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.head = nn.Linear(d, vocab)

    def forward(self, tokens, pad_mask):
        pos = torch.arange(tokens.shape[1], device=tokens.device)
        h = self.encoder(self.tok(tokens) + self.pos(pos), src_key_padding_mask=pad_mask)
        return self.head(h)


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--steps", type=int, default=20)
    args = p.parse_args()
    torch.manual_seed(42)
    model = MLM().to(args.device)
    opt = torch.optim.AdamW(model.parameters(), lr=5e-4)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / 10))
    for step in range(args.steps):
        tokens = torch.randint(5, 1000, (32, 64), device=args.device)
        lengths = torch.randint(32, 65, (32,), device=args.device)
        pad = torch.arange(64, device=args.device)[None] >= lengths[:, None]
        tokens = tokens.masked_fill(pad, 0)
        chosen = (torch.rand(tokens.shape, device=args.device) < 0.15) & ~pad
        labels = torch.where(chosen, tokens, torch.full_like(tokens, -100))
        inputs = tokens.masked_fill(chosen, 4)  # [MASK]
        logits = model(inputs, pad)
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), labels.view(-1), ignore_index=-100)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        if step % 10 == 0:
            print(f"step {step} loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
