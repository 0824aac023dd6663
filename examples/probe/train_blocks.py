"""Two small PyTorch models, each with exactly one non-deterministic call on a CUDA GPU:
`kb probe run -- python examples/probe/train_blocks.py`.

MODEL=attention: float features -> Linear -> a block whose forward calls
    F.scaled_dot_product_attention (flash backend forced where the GPU has it) -> Linear ->
    cross-entropy. On CUDA the flash backward accumulates the query gradient with atomics.
MODEL=embedding: token ids -> Embedding -> Linear -> cross-entropy. On CUDA the embedding
    backward accumulates repeated ids with atomics (32 distinct ids, 65,536 lookups a step).
DETERMINISTIC=1 applies the PyTorch recipe (torch.use_deterministic_algorithms(True),
CUBLAS_WORKSPACE_CONFIG=:4096:8). PLANT=1 makes the second run (KB_PROBE_RUN=2) add 1e-6 to
the gradient arriving at the one non-deterministic call's input from step PLANT_STEP on
(default 1): the CPU stand-in, where these calls are deterministic.
"""

import contextlib
import os

import torch
import torch.nn.functional as F

from kb import probe

MODEL = os.environ.get("MODEL", "attention")
DEVICE = os.environ.get("DEVICE", "cpu")
STEPS = int(os.environ.get("STEPS", "3"))
PLANT = os.environ.get("PLANT") == "1" and os.environ.get("KB_PROBE_RUN") == "2"
PLANT_STEP = int(os.environ.get("PLANT_STEP", "1"))
if os.environ.get("DETERMINISTIC") == "1":
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    torch.use_deterministic_algorithms(True)
DTYPE = torch.bfloat16 if DEVICE == "cuda" else torch.float32
BATCH, SEQ, HEADS, DIM = (4, 1024, 8, 64) if DEVICE == "cuda" else (2, 64, 2, 16)
# the embedding's atomic backward kernel is the one for few distinct ids repeated many times
# (as in the KB's verifier for it: 32 ids, 65,536 lookups)
TOKENS, EMB_BATCH = (32, 64) if DEVICE == "cuda" else (1000, BATCH)


def _plant(t: torch.Tensor) -> None:
    if PLANT and probe.current_step() >= PLANT_STEP and t.requires_grad:
        t.register_hook(lambda g: g + 1e-6)


class Attention(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.qkv = torch.nn.Linear(HEADS * DIM, 3 * HEADS * DIM)
        self.proj = torch.nn.Linear(HEADS * DIM, HEADS * DIM)

    def forward(self, x):
        b, s, _ = x.shape
        q, k, v = self.qkv(x).view(b, s, 3, HEADS, DIM).permute(2, 0, 3, 1, 4).unbind(0)
        _plant(q)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.proj(y.transpose(1, 2).reshape(b, s, HEADS * DIM))


class AttentionModel(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.inp = torch.nn.Linear(32, HEADS * DIM)
        self.attn = Attention()
        self.head = torch.nn.Linear(HEADS * DIM, 100)

    def forward(self, x):
        return self.head(self.attn(self.inp(x)))


class EmbeddingModel(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embedding = torch.nn.Embedding(TOKENS, HEADS * DIM)  # as the verifier: a 32-row table
        self.head = torch.nn.Linear(HEADS * DIM, 100)

    def forward(self, tokens):
        x = self.embedding(tokens)
        _plant(x)
        return self.head(x)


def _flash():
    """Force the flash backend where the GPU has it (the attention demo is about its backward)."""
    if DEVICE != "cuda":
        return contextlib.nullcontext()
    from torch.nn.attention import SDPBackend, sdpa_kernel

    return sdpa_kernel([SDPBackend.FLASH_ATTENTION])


def main() -> None:
    torch.manual_seed(0)
    model = (AttentionModel() if MODEL == "attention" else EmbeddingModel()).to(DEVICE)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    probe.watch(model, opt)
    g = torch.Generator().manual_seed(1)
    for _ in range(STEPS):
        if MODEL == "attention":
            x = torch.randn(BATCH, SEQ, 32, generator=g).to(DEVICE)
        else:
            x = torch.randint(0, TOKENS, (EMB_BATCH, SEQ), generator=g).to(DEVICE)
        target = torch.randint(0, 100, (x.shape[0] * SEQ,), generator=g).to(DEVICE)
        # Flash attention needs bf16; the embedding model stays in fp32: gradients rounded to bf16
        # have so few mantissa bits that 2,048 of them add up exactly in fp32 in any order, and the
        # atomic backward would then show nothing (seen on the H100 with autocast on).
        with _flash(), torch.autocast(DEVICE, dtype=DTYPE, enabled=DEVICE == "cuda" and MODEL == "attention"):
            logits = model(x)
        loss = F.cross_entropy(logits.float().reshape(-1, 100), target)
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(f"loss {loss.item():.8f}")


if __name__ == "__main__":
    main()
