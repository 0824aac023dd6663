"""A CTC speech recognizer (DeepSpeech-style): a 1-D convolutional front end over
filterbank features, a bidirectional LSTM, a linear classifier, log_softmax and CTC loss
with padded int64 targets of varying length."""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F


class Recognizer(nn.Module):
    def __init__(self, feats=40, hidden=128, vocab=29):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv1d(feats, hidden, 5, stride=2, padding=2), nn.BatchNorm1d(hidden), nn.GELU())
        self.rnn = nn.LSTM(hidden, hidden, num_layers=2, bidirectional=True, batch_first=True)
        self.fc = nn.Linear(2 * hidden, vocab)

    def forward(self, x):  # x: (batch, feats, time)
        h = self.conv(x).transpose(1, 2)
        h, _ = self.rnn(h)
        return F.log_softmax(self.fc(h), dim=-1)  # (batch, time, vocab)


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--steps", type=int, default=20)
    args = p.parse_args()
    torch.manual_seed(0)
    model = Recognizer().to(args.device)
    ctc = nn.CTCLoss(blank=0, zero_infinity=True)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    batch, frames = 8, 200
    for step in range(args.steps):
        x = torch.randn(batch, 40, frames, device=args.device)
        target_lengths = torch.randint(10, 30, (batch,), dtype=torch.long)
        targets = torch.randint(1, 29, (batch, 30), dtype=torch.long, device=args.device)
        log_probs = model(x).transpose(0, 1)  # (time, batch, vocab)
        input_lengths = torch.full((batch,), log_probs.shape[0], dtype=torch.long)
        loss = ctc(log_probs, targets, input_lengths, target_lengths)
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 400)
        opt.step()
        if step % 10 == 0:
            print(f"step {step} loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
