"""A GRU encoder-decoder for sequence-to-sequence learning as the PyTorch translation
tutorials write it: variable-length source batches through pack_padded_sequence, a
decoder with Bahdanau-style additive attention, teacher forcing, and NLL loss ignoring pads."""
import argparse
import random

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

PAD, SOS, VOCAB = 0, 1, 200


class Encoder(nn.Module):
    def __init__(self, hidden=128):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, hidden, padding_idx=PAD)
        self.gru = nn.GRU(hidden, hidden, batch_first=True, bidirectional=True)
        self.proj = nn.Linear(2 * hidden, hidden)

    def forward(self, src, lengths):
        packed = pack_padded_sequence(self.emb(src), lengths.cpu(), batch_first=True, enforce_sorted=False)
        out, h = self.gru(packed)
        out, _ = pad_packed_sequence(out, batch_first=True, total_length=src.size(1))
        return self.proj(out), torch.tanh(self.proj(torch.cat([h[0], h[1]], dim=1)))


class AttnDecoder(nn.Module):
    def __init__(self, hidden=128):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, hidden, padding_idx=PAD)
        self.wq, self.wk, self.v = nn.Linear(hidden, hidden), nn.Linear(hidden, hidden), nn.Linear(hidden, 1)
        self.gru = nn.GRUCell(2 * hidden, hidden)
        self.out = nn.Linear(hidden, VOCAB)
        self.drop = nn.Dropout(0.1)

    def forward(self, enc, mask, h, tgt, teacher_forcing):
        token = torch.full((tgt.size(0),), SOS, dtype=torch.long, device=tgt.device)
        keys = self.wk(enc)
        logps = []
        for t in range(tgt.size(1)):
            scores = self.v(torch.tanh(self.wq(h)[:, None] + keys)).squeeze(2).masked_fill(~mask, -1e9)
            context = torch.bmm(F.softmax(scores, dim=1)[:, None], enc).squeeze(1)
            h = self.gru(torch.cat([self.drop(self.emb(token)), context], dim=1), h)
            logp = F.log_softmax(self.out(h), dim=1)
            logps.append(logp)
            token = tgt[:, t] if teacher_forcing else logp.argmax(1)
        return torch.stack(logps, dim=1)


def batch(size, device):
    lengths = torch.randint(4, 21, (size,))
    src = torch.zeros(size, 20, dtype=torch.long)
    tgt = torch.zeros(size, 21, dtype=torch.long)
    for b, n in enumerate(lengths.tolist()):
        seq = torch.randint(3, VOCAB, (n,))
        src[b, :n] = seq
        tgt[b, :n] = seq.flip(0)
        tgt[b, n] = 2  # end of sequence
    return src.to(device), lengths, tgt.to(device)


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--teacher-forcing", type=float, default=0.5)
    p.add_argument("--seed", type=int, default=3)
    args = p.parse_args()
    random.seed(args.seed)
    torch.manual_seed(args.seed)
    enc, dec = Encoder().to(args.device), AttnDecoder().to(args.device)
    opt = torch.optim.Adam(list(enc.parameters()) + list(dec.parameters()), lr=1e-3)
    for step in range(args.steps):
        src, lengths, tgt = batch(32, args.device)
        memory, h = enc(src, lengths)
        mask = torch.arange(20, device=args.device)[None, :] < lengths.to(args.device)[:, None]
        logp = dec(memory, mask, h, tgt, random.random() < args.teacher_forcing)
        loss = F.nll_loss(logp.reshape(-1, VOCAB), tgt.reshape(-1), ignore_index=PAD)
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(list(enc.parameters()) + list(dec.parameters()), 5.0)
        opt.step()
        if step % 10 == 0:
            print(f"step {step} loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
