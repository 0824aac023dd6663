"""Fingerprints and samples of large tensors, computed where the tensor lives.

Copying 1 GB outputs to the host to hash them would cost more than the collectives. Instead a
tensor's bits are summed with position weights in 64-bit integers on the device: integer
addition wraps modulo 2**64 and is associative, so the sum is the same whatever order the
device adds in, and two tensors that differ anywhere give different sums except by chance
(two independent weightings: about 2**-128). Position weights use the element's place in the
whole logical result (`offset`), so the pieces held by several ranks (reduce_scatter,
all_to_all) add up to the fingerprint of the whole, whatever the rank count.
"""

from __future__ import annotations

MOD = 1 << 64


def fingerprint(torch, tensor, offset: int = 0) -> tuple[int, int]:
    """Two 64-bit position-weighted sums of the tensor's bit patterns (mod 2**64)."""
    flat = tensor.detach().reshape(-1)
    if flat.dtype in (torch.bfloat16, torch.float16):
        bits = flat.view(torch.int16).to(torch.int64) & 0xFFFF
    elif flat.dtype == torch.float32:
        bits = flat.view(torch.int32).to(torch.int64) & 0xFFFFFFFF
    elif flat.dtype == torch.float64:
        bits = flat.view(torch.int64) & 0xFFFFFFFF  # the low half only: enough for a fingerprint
    else:
        bits = flat.to(torch.int64) & 0xFFFFFFFF
    index = torch.arange(offset, offset + flat.numel(), dtype=torch.int64, device=flat.device)
    first = (index * 2654435761 + 40503) & 0x7FFFFFFF
    second = ((index ^ 0x5DEECE66D) * 40503 + 1013904223) & 0x7FFFFFFF
    mixed = (bits * 0x9E3779B1) & 0xFFFFFFFF
    return int((bits * first).sum().item()) % MOD, int((mixed * second).sum().item()) % MOD


def combine(parts) -> tuple[int, int]:
    """The fingerprint of a whole from the fingerprints of its pieces (with their offsets)."""
    return sum(p[0] for p in parts) % MOD, sum(p[1] for p in parts) % MOD


def text(fp) -> str:
    return f"{fp[0]:016x}{fp[1]:016x}"


def sample(torch, tensor, span: int, count: int = 1024) -> list[float]:
    """Up to `count` values from the first `span` elements (first 256, then evenly spaced), as
    Python floats (exact for float32 and bfloat16): enough to say how large a difference is."""
    flat = tensor.detach().reshape(-1)[: max(1, min(span, tensor.numel()))]
    n = flat.numel()
    if n <= count:
        picked = flat
    else:
        head = torch.arange(256, device=flat.device)
        rest = torch.linspace(256, n - 1, count - 256, device=flat.device).long()
        picked = flat[torch.cat([head, rest])]
    return [float(v) for v in picked.float().cpu().tolist()]


def ulps(a: float, b: float, dtype: str) -> int:
    """Units in the last place between two values of `dtype` (float32 or bfloat16)."""
    import struct

    def ordered(x: float) -> int:
        bits = struct.unpack("<i", struct.pack("<f", x))[0]
        if dtype == "bfloat16":
            bits >>= 16
            return bits if bits >= 0 else -(1 << 15) - bits
        return bits if bits >= 0 else -(1 << 31) - bits

    if a != a or b != b:
        return 0 if (a != a) == (b != b) else -1
    return abs(ordered(a) - ordered(b))


def compare(first: list[float] | None, other: list[float] | None, dtype: str) -> dict | None:
    """Largest absolute and ULP difference over two samples, and how many of their values differ."""
    if not first or not other or len(first) != len(other):
        return None
    pairs = [(a, b) for a, b in zip(first, other) if a != b and not (a != a and b != b)]
    if not pairs:
        return {"max_abs_diff": 0.0, "max_ulp_diff": 0, "differing": 0, "sampled": len(first)}
    return {"max_abs_diff": max(abs(a - b) for a, b in pairs), "max_ulp_diff": max(ulps(a, b, dtype) for a, b in pairs),
            "differing": len(pairs), "sampled": len(first)}
