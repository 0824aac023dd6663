"""The word-level language model of the PyTorch examples: embedding, a two-layer LSTM with
dropout, a decoder tied to the embedding, truncated backpropagation through time, gradient
clipping, plain SGD."""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F


class RNNModel(nn.Module):
    def __init__(self, ntoken=2000, ninp=128, nlayers=2, dropout=0.2):
        super().__init__()
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = nn.LSTM(ninp, ninp, nlayers, dropout=dropout)
        self.decoder = nn.Linear(ninp, ntoken)
        self.decoder.weight = self.encoder.weight

    def forward(self, x, hidden):
        output, hidden = self.rnn(self.drop(self.encoder(x)), hidden)
        return self.decoder(self.drop(output)), hidden


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--steps", type=int, default=20)
    args = p.parse_args()
    torch.manual_seed(1111)
    corpus = torch.randint(0, 2000, (20 * 35 * 40,))
    data = corpus.view(20, -1).t().contiguous().to(args.device)  # (len, batch)
    model = RNNModel().to(args.device)
    hidden = tuple(torch.zeros(2, 20, 128, device=args.device) for _ in range(2))
    lr = 20.0
    for step in range(args.steps):
        i = (step * 35) % (data.shape[0] - 36)
        x, y = data[i:i + 35], data[i + 1:i + 36]
        hidden = tuple(h.detach() for h in hidden)
        model.zero_grad()
        out, hidden = model(x, hidden)
        loss = F.cross_entropy(out.view(-1, 2000), y.reshape(-1))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.25)
        with torch.no_grad():
            for param in model.parameters():
                param.add_(param.grad, alpha=-lr)
        if step % 10 == 0:
            print(f"step {step} loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
