"""End-to-end recipe proof for PyTorch (GTC 2019 closing slide, seed 000), in one child.

    python -m verifiers.e2e_torch RESULT.json CODES DEVICE [SCALE]   (run by `kb verify --e2e`)

A small model with convolution + bias, max pooling, an embedding, dropout, trained on
synthetic data in shuffled batches; the parent trains it twice without and twice with the
recipe (each in a fresh process) and compares final weights and test predictions (churn).
Synthetic data only: nothing is downloaded.
"""

from __future__ import annotations

import time

from verifiers.e2e_common import BATCH, CLASSES, EPOCHS, VOCAB, data, digest, main

FRAMEWORK = "pytorch"

# Practice codes (solutions.py) and what this child does about each; the parent passes both
# tables' keys to resolve() as handled and records the text in the run file.
PRACTICES: dict[str, str] = {}
NOT_APPLICABLE = {
    "PT_DLSEED": "no DataLoader: batches are indexed in the main process, so there are no workers to seed",
}


def train(codes: list[str], device: str, scale: float = 1.0) -> dict:
    import torch

    from verifiers.solutions import resolve

    for call in resolve(FRAMEWORK, tuple(codes), tuple(PRACTICES) + tuple(NOT_APPLICABLE))[1]:
        call()
    torch.manual_seed(0)  # identical init and dropout masks: only the kernels can differ
    arrays = data(scale)
    images, tokens, labels = (torch.tensor(a) for a in arrays[:3])
    n_train, classes = arrays[3], CLASSES

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = torch.nn.Conv2d(1, 32, 3, bias=True)
            self.emb = torch.nn.Embedding(VOCAB, 16)
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
    for _ in range(EPOCHS):
        order = torch.randperm(n_train, generator=gen)
        for b in range(0, n_train, BATCH):
            i = order[b:b + BATCH]
            opt.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(images[i].to(dev), tokens[i].to(dev)), labels[i].to(dev))
            loss.backward()
            opt.step()
    if dev == "cuda":
        torch.cuda.synchronize()
    seconds = time.perf_counter() - start
    model.eval()
    with torch.no_grad():
        preds = model(images[n_train:].to(dev), tokens[n_train:].to(dev)).argmax(1).cpu()
    return {
        "weights": digest((name, p.detach().cpu().numpy()) for name, p in sorted(model.state_dict().items())),
        "preds": preds.tolist(),
        "train_s": round(seconds, 3),
        "test_acc": round(float((preds == labels[n_train:]).float().mean()), 4),
        "backend": str(next(model.parameters()).device),
    }


if __name__ == "__main__":
    main(train)
