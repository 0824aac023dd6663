"""An encoder-decoder translation Transformer as the PyTorch "language translation with
nn.Transformer" tutorial writes it: sinusoidal positions, nn.Transformer with causal and
padding masks, label-smoothed cross-entropy, bfloat16 autocast, gradient clipping, and
the inverse-square-root warm-up schedule."""
import argparse
import math

import torch
import torch.nn as nn

PAD, BOS, EOS = 0, 1, 2


class PositionalEncoding(nn.Module):
    def __init__(self, d, dropout=0.1, max_len=256):
        super().__init__()
        pos = torch.arange(max_len)[:, None]
        div = torch.exp(torch.arange(0, d, 2) * (-math.log(10000.0) / d))
        pe = torch.zeros(max_len, d)
        pe[:, 0::2], pe[:, 1::2] = torch.sin(pos * div), torch.cos(pos * div)
        self.register_buffer("pe", pe[None])
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        return self.dropout(x + self.pe[:, :x.size(1)])


class Seq2SeqTransformer(nn.Module):
    def __init__(self, src_vocab=1000, tgt_vocab=1000, d=128, heads=4, layers=2):
        super().__init__()
        self.d = d
        self.src_emb, self.tgt_emb = nn.Embedding(src_vocab, d), nn.Embedding(tgt_vocab, d)
        self.pos = PositionalEncoding(d)
        self.transformer = nn.Transformer(d, heads, layers, layers, dim_feedforward=4 * d, dropout=0.1,
                                          batch_first=True)
        self.generator = nn.Linear(d, tgt_vocab)

    def forward(self, src, tgt_in):
        causal = self.transformer.generate_square_subsequent_mask(tgt_in.size(1), device=src.device)
        h = self.transformer(self.pos(self.src_emb(src) * math.sqrt(self.d)),
                             self.pos(self.tgt_emb(tgt_in) * math.sqrt(self.d)),
                             tgt_mask=causal, src_key_padding_mask=src == PAD, tgt_key_padding_mask=tgt_in == PAD,
                             memory_key_padding_mask=src == PAD)
        return self.generator(h)


def make_batch(size, device):
    src = torch.full((size, 32), PAD, dtype=torch.long)
    tgt = torch.full((size, 34), PAD, dtype=torch.long)
    for b in range(size):
        n = int(torch.randint(8, 33, ()))
        seq = torch.randint(3, 1000, (n,))
        src[b, :n] = seq
        tgt[b, 0], tgt[b, 1:n + 1], tgt[b, n + 1] = BOS, (seq * 7 + 3) % 997 + 3, EOS
    return src.to(device), tgt.to(device)


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--warmup", type=int, default=400)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    torch.manual_seed(args.seed)
    model = Seq2SeqTransformer().to(args.device)
    for param in model.parameters():
        if param.dim() > 1:
            nn.init.xavier_uniform_(param)
    opt = torch.optim.Adam(model.parameters(), lr=1.0, betas=(0.9, 0.98), eps=1e-9)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: 128 ** -0.5 * min((s + 1) ** -0.5, (s + 1) * args.warmup ** -1.5))
    criterion = nn.CrossEntropyLoss(ignore_index=PAD, label_smoothing=0.1)
    use_bf16 = args.device == "cuda"
    for step in range(args.steps):
        src, tgt = make_batch(32, args.device)
        with torch.autocast(device_type=args.device, dtype=torch.bfloat16, enabled=use_bf16):
            logits = model(src, tgt[:, :-1])
            loss = criterion(logits.reshape(-1, logits.size(-1)), tgt[:, 1:].reshape(-1))
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        if step % 10 == 0:
            print(f"step {step} loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
