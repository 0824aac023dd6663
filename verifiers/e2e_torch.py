"""End-to-end recipe proof for PyTorch (GTC 2019 closing slide, seed 000), in one child.

    python -m verifiers.e2e_torch RESULT.json CODES   (run by `kb verify --e2e`)

A small model with convolution + bias, max pooling, an embedding, dropout, trained on
synthetic data in shuffled batches; the parent trains it twice without and twice with the
recipe (each in a fresh process) and compares final weights and test predictions (churn).
Synthetic data only: nothing is downloaded.
"""

from __future__ import annotations

import hashlib
import json
import sys
import time


def train(codes: list[str], device: str) -> dict:
    import numpy as np
    import torch

    from verifiers.solutions import resolve

    for call in resolve("pytorch", tuple(codes), ())[1]:
        call()
    torch.manual_seed(0)  # identical init and dropout masks: only the kernels can differ
    rng = np.random.default_rng(0)
    n, classes = 4096, 10
    images = torch.tensor(rng.standard_normal((n, 1, 28, 28)).astype(np.float32))
    tokens = torch.tensor(rng.integers(0, 50, (n, 8)))
    labels = torch.tensor(rng.integers(0, classes, n))
    images += labels.view(-1, 1, 1, 1).float() * 0.1

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = torch.nn.Conv2d(1, 32, 3, bias=True)
            self.emb = torch.nn.Embedding(50, 16)
            self.drop = torch.nn.Dropout(0.25)
            self.fc = torch.nn.Linear(32 * 13 * 13 + 16, classes)

        def forward(self, x, t):
            x = torch.nn.functional.max_pool2d(torch.relu(self.conv(x)), 2).flatten(1)
            return self.fc(self.drop(torch.cat([x, self.emb(t).mean(1)], 1)))

    dev = "cuda" if device == "gpu" else "cpu"
    model = Net().to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    gen = torch.Generator().manual_seed(0)
    start = time.perf_counter()
    for _ in range(3):
        order = torch.randperm(3584, generator=gen)
        for b in range(0, 3584, 128):
            i = order[b:b + 128]
            opt.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(images[i].to(dev), tokens[i].to(dev)), labels[i].to(dev))
            loss.backward()
            opt.step()
    if dev == "cuda":
        torch.cuda.synchronize()
    seconds = time.perf_counter() - start
    model.eval()
    with torch.no_grad():
        preds = model(images[3584:].to(dev), tokens[3584:].to(dev)).argmax(1).cpu().tolist()
    h = hashlib.sha256()
    for name, p in sorted(model.state_dict().items()):
        h.update(name.encode())
        h.update(p.detach().cpu().numpy().tobytes())
    return {"weights": h.hexdigest()[:16], "preds": preds, "train_s": round(seconds, 3)}


if __name__ == "__main__":
    out = train([c for c in sys.argv[2].split(",") if c], sys.argv[3])
    with open(sys.argv[1], "w", encoding="utf-8") as handle:
        json.dump(out, handle)
