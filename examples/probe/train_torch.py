"""A small PyTorch model with probes: `kb probe run -- python examples/probe/train_torch.py`.

PLANT=forward|backward makes the second run (KB_PROBE_RUN=2) differ inside the `mix` layer
from step PLANT_STEP on (default 1): a stand-in for a non-deterministic op on CPU, where real
ones are rare. DEVICE=cuda uses the GPU, where the embedding backward and index_add_ are
non-deterministic by themselves; DETERMINISTIC=1 applies the recipe.
"""

import os

import torch

from kb import probe

PLANT = os.environ.get("PLANT", "")
PLANT_STEP = int(os.environ.get("PLANT_STEP", "1"))
DEVICE = os.environ.get("DEVICE", "cpu")
STEPS = int(os.environ.get("STEPS", "3"))
if os.environ.get("DETERMINISTIC") == "1":
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    torch.use_deterministic_algorithms(True)


class Planted(torch.autograd.Function):
    """Identity that adds 1e-6 to its output (forward) or its gradient (backward) in run 2."""

    @staticmethod
    def forward(ctx, x, on):
        ctx.on = on
        return x + 1e-6 if on == "forward" else x.clone()

    @staticmethod
    def backward(ctx, g):
        return (g + 1e-6 if ctx.on == "backward" else g), None


class Mix(torch.nn.Module):
    """Scatter-add of token features into buckets: index_add_ (non-deterministic on CUDA)."""

    def __init__(self, buckets: int) -> None:
        super().__init__()
        self.buckets = buckets

    def forward(self, x, index):
        out = torch.zeros(self.buckets, x.shape[1], device=x.device, dtype=x.dtype)
        out.index_add_(0, index, x)
        on = PLANT if os.environ.get("KB_PROBE_RUN") == "2" and probe.current_step() >= PLANT_STEP else ""
        return Planted.apply(out, on)


class Model(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embedding = torch.nn.Embedding(1000, 64)
        self.mix = Mix(256)
        self.head = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU(), torch.nn.Linear(64, 1))

    def forward(self, tokens, buckets):
        return self.head(self.mix(self.embedding(tokens), buckets))


def main() -> None:
    torch.manual_seed(0)
    model = Model().to(DEVICE)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    probe.watch(model, opt)  # every module, forward + backward; steps counted by opt.step()
    g = torch.Generator().manual_seed(1)
    for _ in range(STEPS):
        tokens = torch.randint(0, 1000, (4096,), generator=g).to(DEVICE)
        buckets = torch.randint(0, 256, (4096,), generator=g).to(DEVICE)
        target = torch.randn(256, 1, generator=g).to(DEVICE)
        loss = torch.nn.functional.mse_loss(model(tokens, buckets), target)
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(f"loss {loss.item():.8f}")


if __name__ == "__main__":
    main()
