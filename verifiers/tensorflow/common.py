"""Shared input builders: values of mixed magnitude colliding into few outputs (the probe:
small inputs often hide the contention that makes atomics order-dependent)."""

from __future__ import annotations

import numpy as np


def mixed(rng: np.random.Generator, shape) -> np.ndarray:
    """float32 values spanning 1e0..1e6, so the order of additions changes the rounding."""
    return (rng.standard_normal(shape) * 10.0 ** rng.integers(0, 6, shape)).astype(np.float32)


def device_name(ctx) -> str:
    return "/GPU:0" if ctx.device == "gpu" else "/CPU:0"
