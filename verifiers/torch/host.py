"""Records for any device whose mechanism lives on the host: DataLoader worker seeding and
resize_ of a quantized tensor (uninitialized memory). Both run on the CPU wherever they run."""

from __future__ import annotations

from verifiers import verifier

SAMPLES, BATCH = 256, 32


class _Augmented:
    """A map-style dataset with random augmentation from the three generators a DataLoader
    worker seeds: torch (noise), Python's random (flip) and NumPy's global RNG (scale).
    Module-level, so that it pickles under any multiprocessing start method."""

    def __init__(self, data) -> None:
        self.data = data

    def __len__(self) -> int:
        return len(self.data)

    def __getitem__(self, i: int):
        import random

        import numpy as np
        import torch

        x = self.data[i] + torch.rand(self.data[i].shape)
        if random.random() < 0.5:
            x = x.flip(-1)
        return x * float(np.random.uniform(0.5, 2.0)), i


def _seed_worker(worker_id: int) -> None:
    """The worker_init_fn of PT_DLSEED (the PyTorch randomness notes' seed_worker)."""
    import random

    import numpy as np
    import torch

    seed = torch.initial_seed() % 2**32
    np.random.seed(seed)
    random.seed(seed)


@verifier("torch.data_loader_workers", framework="pytorch", device="any", handles=("PT_DLSEED",), solutions=("PT_DLSEED",))
def data_loader_workers(ctx):
    """One epoch of a DataLoader with num_workers=2, shuffle=True and random augmentation in the
    dataset. Each call stands for a fresh run of a program that seeds nothing: torch.seed() gives
    the global generator a new non-deterministic seed, as interpreter start does, and the shuffle
    and the workers' base_seed are drawn from it. PT_DLSEED (applied here) passes a generator
    seeded with 0 and the seed_worker worker_init_fn, which fixes both."""
    import torch

    gen = torch.Generator().manual_seed(ctx.seed)
    data = torch.randn(ctx.size(SAMPLES, 2 * BATCH), 3, 8, 8, generator=gen)
    dataset = _Augmented(data)
    practice = ctx.has("PT_DLSEED")

    def run():
        torch.seed()
        extra = {}
        if practice:
            extra = {"generator": torch.Generator().manual_seed(0), "worker_init_fn": _seed_worker}
        loader = torch.utils.data.DataLoader(dataset, batch_size=BATCH, shuffle=True, num_workers=2, **extra)
        xs, idx = zip(*loader)
        return {"x": torch.cat(xs), "index": torch.cat(idx)}

    return run


@verifier("torch.quantized_resize", framework="pytorch", device="any", solutions=("PT_DET",))
def quantized_resize(ctx):
    """resize_ of a quantized (quint8) tensor from 64 to 4096 elements: the new elements are
    uninitialized and show whatever the allocator's previous user left there. Each call first
    allocates and frees a buffer of that size filled from the global generator (it advances
    every call), standing for what a program did with that memory before. Quantized tensors
    live on the CPU (resize_ has only a QuantizedCPU kernel), so this runs there on any machine."""
    import torch

    gen = torch.Generator().manual_seed(ctx.seed)
    x = torch.randn(64, generator=gen)
    size = 4096

    def run():
        scratch = torch.randint(0, 256, (size,), dtype=torch.uint8)
        del scratch
        q = torch.quantize_per_tensor(x, 0.05, 128, torch.quint8)
        q.resize_(size)
        return q.int_repr()

    return run


@verifier("torch.reseed_after_manual_seed", framework="pytorch", device="any", handles=("SEED",), solutions=("SEED",))
def reseed_after_manual_seed(ctx):
    """A program that seeds with torch.manual_seed(0) and then calls torch.seed(), as
    benchmarks/check_corpus/mlp_dropout_reseed.py does: the dropout masks and the numbers drawn
    after it come from a seed torch.seed() takes from a non-deterministic source, so each run
    (each call stands for one) differs. SEED (applied here) is what kb check does: torch.seed()
    held to the fixed seed."""
    import torch

    gen = torch.Generator().manual_seed(ctx.seed)
    x = torch.randn(ctx.size(64, 8), 32, generator=gen)
    practice = ctx.has("SEED")

    def run():
        torch.manual_seed(0)
        if practice:
            torch.manual_seed(0)  # the reseed held to the program's seed
        else:
            torch.seed()
        return {"dropout": torch.nn.functional.dropout(x, 0.2, training=True), "draw": torch.rand(16)}

    return run
