"""What the end-to-end children (verifiers/e2e_*.py) share: the data, the hash, the CLI.

One data set for every framework, so the three proofs train the same problem: images
(N, 1, 28, 28) whose class shifts their mean (learnable), token ids for the embedding, and
labels, drawn from numpy's seeded generator; nothing is downloaded. The frameworks import
nothing from here at module level, so the parent (`kb verify --e2e`) can read a child's
PRACTICES and NOT_APPLICABLE without importing torch, tensorflow or jax.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Callable, Iterable

BATCH = 128
EPOCHS = 3
CLASSES = 10
VOCAB = 50
TOKENS = 8


def sizes(scale: float) -> tuple[int, int]:
    """(train, test) sample counts; train is a whole number of batches so that a jitted step
    never sees a second shape. Scale 1 gives 3584 + 512, the size e2e_torch always used."""
    train = max(2, int(28 * scale)) * BATCH
    test = max(BATCH, int(512 * scale))
    return train, test


def data(scale: float):
    """(images float32 NCHW, tokens int64, labels int64, n_train): the first n_train are for training."""
    import numpy as np

    train, test = sizes(scale)
    n = train + test
    rng = np.random.default_rng(0)
    images = rng.standard_normal((n, 1, 28, 28)).astype(np.float32)
    tokens = rng.integers(0, VOCAB, (n, TOKENS))
    labels = rng.integers(0, CLASSES, n)
    images += labels.reshape(-1, 1, 1, 1).astype(np.float32) * np.float32(0.1)
    return images, tokens, labels, train


def digest(named_arrays: Iterable[tuple[str, object]]) -> str:
    """Short sha256 of the final weights, names included, so that a reordering also shows."""
    import numpy as np

    h = hashlib.sha256()
    for name, array in named_arrays:
        h.update(name.encode())
        h.update(np.ascontiguousarray(np.asarray(array)).tobytes())
    return h.hexdigest()[:16]


def main(train: Callable[[list[str], str, float], dict]) -> None:
    """`python -m verifiers.e2e_X RESULT.json CODES DEVICE [SCALE]`: train once, write the result.

    The result is written only on success; the parent reads a missing file as an error and
    quotes the child's stderr."""
    codes = [c for c in sys.argv[2].split(",") if c]
    device = sys.argv[3] if len(sys.argv) > 3 else "cpu"
    scale = float(sys.argv[4]) if len(sys.argv) > 4 else 1.0
    out = train(codes, device, scale)
    with open(sys.argv[1], "w", encoding="utf-8") as handle:
        json.dump(out, handle)
