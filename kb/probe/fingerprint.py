"""The fingerprint of a tensor's exact bytes, defined once so that every framework and the
tests compute the same number.

Why this shape: the probe must hash tensors where they live (a GPU) without copying them to
the host, so the hash has to be a parallel reduction whose result does not depend on the
order in which threads add. Integer addition modulo 2**64 is associative and commutative,
so a weighted sum of the raw 32-bit words is exact and order-independent. Every weight is an
odd 64-bit number, hence invertible modulo 2**64: changing any single word (any bits of it)
always changes the fingerprint. Flipping bit k of a word moves the sum by 2**k times a
weight, which keeps 64 - k >= 33 pseudo-random bits, so two different changes cancel with
probability about 2**-33 (products modulo 2**32 would not do: every flip of a sign bit would
move the sum by the same 2**31). The weights are fixed pseudo-random numbers, not chosen
against any data.

Word i of a tensor with n words (the bytes in logical order, read as little-endian int32,
or each 1- or 2-byte element widened to one word when the bytes are not a whole number of
aligned words) sits in row r = i // WIDTH and column c = i % WIDTH, and
    fingerprint = sum_r row[r] * (sum_c word_(r,c) * col[c])      (mod 2**64)
with the words read as signed int32. `reference` below is the definition in numpy; the
adapters compute the same number on the device.
"""

from __future__ import annotations

WIDTH = 4096
_MASK64 = (1 << 64) - 1


def _mix(x: int) -> int:
    """splitmix64's finalizer: well-spread 64-bit numbers from a counter."""
    x = (x + 0x9E3779B97F4A7C15) & _MASK64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _MASK64
    return x ^ (x >> 31)


def _signed(w: int) -> int:
    return w - (1 << 64) if w >= 1 << 63 else w


def col_weights() -> list[int]:
    """WIDTH odd 64-bit weights (as signed int64 values)."""
    return [_signed(_mix(c) | 1) for c in range(WIDTH)]


def row_weight(r: int) -> int:
    """The odd 64-bit weight of row r (as a signed int64 value)."""
    return _signed(_mix(r + (1 << 40)) | 1)


def hexdigest(value: int) -> str:
    """The record's `hash` field for a fingerprint (an int64 read as unsigned)."""
    return f"fp{value & _MASK64:016x}"


def reference(words) -> int:
    """The fingerprint of a 1-D numpy int32 array of words, by the definition (slow, exact)."""
    import numpy as np

    words = np.asarray(words, dtype=np.int32).astype(np.int64).view(np.uint64)
    cols = np.asarray(col_weights(), dtype=np.int64).view(np.uint64)
    total = 0
    with np.errstate(over="ignore"):
        for r in range(0, (len(words) + WIDTH - 1) // WIDTH):
            chunk = words[r * WIDTH:(r + 1) * WIDTH]
            row_sum = int((chunk * cols[:len(chunk)]).sum(dtype=np.uint64))
            total = (total + row_sum * (row_weight(r) & _MASK64)) & _MASK64
    return _signed(total)


# --- the 32-bit-lane variant, for frameworks that compute in 32-bit integers (JAX without
# x64, TensorFlow): each word is offset by a position weight and passed through a bijective
# mixer (lowbias32), and the mixed words are summed modulo 2**32, in two lanes with different
# offsets. A bijection changes whenever its input does, so any change of a single word
# always changes both lanes; the mixer spreads every bit (a sign-bit flip included) over the
# whole word, so different changes collide with probability about 2**-64.

LANE_SEEDS = (0x85EBCA6B, 0xC2B2AE35)
GOLDEN32 = 0x9E3779B1


def mix32(x):
    """lowbias32 (C. Wellons): a bijection of 32-bit words; works on ints and numpy uint32."""
    x ^= x >> 16
    x = (x * 0x7FEB352D) & 0xFFFFFFFF
    x ^= x >> 15
    x = (x * 0x846CA68B) & 0xFFFFFFFF
    x ^= x >> 16
    return x


def reference_lanes(words) -> tuple[int, int]:
    """Both lanes of a 1-D array of 32-bit words, by the definition."""
    import numpy as np

    w = np.asarray(words).astype(np.uint32).astype(np.uint64)
    index = np.arange(len(w), dtype=np.uint64)
    out = []
    for seed in LANE_SEEDS:
        x = (w + ((index * GOLDEN32 + seed) & 0xFFFFFFFF)) & 0xFFFFFFFF
        out.append(int(mix32(x).sum() & 0xFFFFFFFF))
    return out[0], out[1]


def lanes_hexdigest(a: int, b: int) -> str:
    return f"lx{a & 0xFFFFFFFF:08x}{b & 0xFFFFFFFF:08x}"
