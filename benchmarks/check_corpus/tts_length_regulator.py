"""A FastSpeech-style text-to-speech acoustic model: phoneme embeddings, a 1-D convolutional
encoder, a duration predictor, the length regulator (repeat_interleave of each phoneme's
encoding by its duration), a convolutional decoder to mel frames, L1 plus duration MSE loss."""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F


class ConvStack(nn.Module):
    def __init__(self, d, layers=2):
        super().__init__()
        self.convs = nn.ModuleList(nn.Conv1d(d, d, 5, padding=2) for _ in range(layers))
        self.norms = nn.ModuleList(nn.LayerNorm(d) for _ in range(layers))

    def forward(self, x):  # (time, d)
        for conv, norm in zip(self.convs, self.norms):
            x = norm(x + F.relu(conv(x.t().unsqueeze(0)).squeeze(0).t()))
        return x


class FastSpeech(nn.Module):
    def __init__(self, phonemes=64, d=128, mels=80):
        super().__init__()
        self.emb = nn.Embedding(phonemes, d)
        self.encoder = ConvStack(d)
        self.duration = nn.Sequential(nn.Linear(d, d), nn.ReLU(), nn.Linear(d, 1))
        self.decoder = ConvStack(d)
        self.mel = nn.Linear(d, mels)

    def forward(self, text, durations):
        h = self.encoder(self.emb(text))
        log_dur = self.duration(h).squeeze(-1)
        frames = torch.repeat_interleave(h, durations, dim=0)  # the length regulator
        return self.mel(self.decoder(frames)), log_dur


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--steps", type=int, default=20)
    args = p.parse_args()
    torch.manual_seed(0)
    model = FastSpeech().to(args.device)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for step in range(args.steps):
        text = torch.randint(0, 64, (120,), device=args.device)
        durations = torch.randint(1, 12, (120,), device=args.device)
        mel_target = torch.randn(int(durations.sum()), 80, device=args.device)
        mel, log_dur = model(text, durations)
        loss = F.l1_loss(mel, mel_target) + F.mse_loss(log_dur, torch.log(durations.float()))
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 10 == 0:
            print(f"step {step} loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
