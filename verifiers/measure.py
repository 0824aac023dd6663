"""Run a verifier's callable N times and compare the results bit for bit (in the child).

Per mode it reports: how many distinct result hashes out of N, the largest absolute and
ULP difference from the first run, the median wall time per run (with device work
synchronised), and the short hashes themselves. Evidence is asymmetric: one differing
run proves non-determinism; `distinct == 1` only says "0 of N differed".
"""

from __future__ import annotations

import hashlib
import statistics
import sys
import time
from typing import Any

import numpy as np


def to_numpy(value: Any) -> np.ndarray:
    if hasattr(value, "detach"):  # torch
        value = value.detach()
        if str(value.dtype) in ("torch.bfloat16", "torch.float16"):
            value = value.float()
        return value.cpu().numpy()
    if hasattr(value, "numpy") and not isinstance(value, np.ndarray):  # tensorflow eager tensor
        return np.asarray(value.numpy())
    return np.asarray(value)


def arrays(result: Any) -> dict[str, np.ndarray]:
    if isinstance(result, dict):
        return {str(k): to_numpy(v) for k, v in sorted(result.items())}
    if isinstance(result, (tuple, list)):
        return {str(i): to_numpy(v) for i, v in enumerate(result)}
    return {"out": to_numpy(result)}


def digest(values: dict[str, np.ndarray]) -> str:
    h = hashlib.sha256()
    for name, array in values.items():
        array = np.ascontiguousarray(array)
        h.update(f"{name}:{array.dtype.str}:{array.shape};".encode())
        h.update(array.tobytes())
    return h.hexdigest()[:16]


def _ordered(array: np.ndarray) -> np.ndarray:
    """Float bits as integers ordered like the floats, so |a-b| counts ULPs between them."""
    width: type[np.signedinteger] = {2: np.int16, 4: np.int32, 8: np.int64}[array.dtype.itemsize]  # type: ignore[assignment]
    bits = array.view(width).astype(np.int64)
    return np.where(bits < 0, np.iinfo(width).min - bits, bits)


def differences(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> tuple[float, int]:
    max_abs, max_ulp = 0.0, 0
    for name, x in a.items():
        y = b.get(name)
        if y is None or y.shape != x.shape or y.dtype != x.dtype:
            return float("inf"), -1
        if x.size == 0:
            continue
        if np.issubdtype(x.dtype, np.floating):
            with np.errstate(invalid="ignore", over="ignore"):
                diff = np.abs(x.astype(np.float64) - y.astype(np.float64))
            finite = diff[np.isfinite(diff)]
            if finite.size:
                max_abs = max(max_abs, float(finite.max()))
            max_ulp = max(max_ulp, int(np.abs(_ordered(x) - _ordered(y)).max()))
        else:
            diff = np.abs(x.astype(np.int64) - y.astype(np.int64))
            max_abs = max(max_abs, float(diff.max()))
            max_ulp = max(max_ulp, int(diff.max()))
    return max_abs, max_ulp


def _sync(result: Any) -> None:
    if hasattr(result, "block_until_ready"):
        result.block_until_ready()
    elif isinstance(result, dict):
        for value in result.values():
            if hasattr(value, "block_until_ready"):
                value.block_until_ready()
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available() and torch.cuda.is_initialized():
        torch.cuda.synchronize()


def collect(run, n: int) -> tuple[list[dict[str, np.ndarray]], list[float]]:
    """Call `run` n times: the results copied to host memory and the wall time of each."""
    times: list[float] = []
    kept: list[dict[str, np.ndarray]] = []
    for _ in range(n):
        start = time.perf_counter()
        result = run()
        _sync(result)
        times.append(time.perf_counter() - start)
        kept.append(arrays(result))
        del result
    return kept, times


def summarize(kept: list[dict[str, np.ndarray]], times: list[float]) -> dict[str, Any]:
    """Distinct hashes, largest differences from the first run, median time."""
    hashes: list[str] = []
    first = kept[0]
    max_abs, max_ulp = 0.0, 0
    for values in kept:
        hashes.append(digest(values))
        if values is not first:
            a, u = differences(first, values)
            max_abs, max_ulp = max(max_abs, a), max(max_ulp, u)
    return {
        "distinct": len(set(hashes)),
        "max_abs_diff": max_abs,
        "max_ulp_diff": max_ulp,
        "median_s": round(statistics.median(times), 6),
        "hashes": sorted(set(hashes)),
    }


def repeat(run, n: int, timed_done=None) -> dict[str, Any]:
    """Call `run` n times; the mode's measurement (outcome filled in by the caller).

    The results are copied to host memory inside the loop, but hashed and compared only after
    it, once `timed_done()` has told the harness that this child no longer needs the device to
    itself: hashing and ULP differences of large gradients take longer than the op.
    """
    kept, times = collect(run, n)
    if timed_done is not None:
        timed_done()
    return summarize(kept, times)
