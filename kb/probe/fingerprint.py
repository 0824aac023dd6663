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
