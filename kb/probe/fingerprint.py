"""The fingerprint of a tensor's exact bytes, defined once so that every framework and the
tests compute the same number.

Why this shape: the probe must hash tensors where they live (a GPU) without copying them to
the host, so the hash has to be a parallel reduction whose result does not depend on the
order in which threads add. Integer addition modulo 2**64 is associative and commutative,
so a weighted sum of the raw 32-bit words is exact and order-independent. Every weight is
odd, hence invertible modulo 2**32: changing any single word (any bits of it) always changes
the fingerprint; changes spread over several words collide with probability about 2**-32
(the weights are fixed pseudo-random numbers, not chosen against any data).

Word i of a tensor with n words (the bytes in logical order, read as little-endian int32,
or each 1- or 2-byte element widened to one word when the bytes are not a whole number of
aligned words) sits in row r = i // WIDTH and column c = i % WIDTH, and
    fingerprint = sum_i  wrap32(word_i * col[c]) * row[r]      (mod 2**64)
where wrap32 reads the 32-bit product as a signed integer. `reference` below is the
definition in numpy; the adapters compute the same number on the device.
"""

from __future__ import annotations

WIDTH = 4096
_MASK64 = (1 << 64) - 1


def col_weights() -> list[int]:
    """WIDTH odd 32-bit weights (as signed int32 values)."""
    out = []
    for c in range(WIDTH):
        w = ((c * 0x9E3779B1 + 0x7F4A7C15) & 0xFFFFFFFF) | 1
        out.append(w - (1 << 32) if w >= 1 << 31 else w)
    return out


def row_weight(r: int) -> int:
    """The odd 64-bit weight of row r (as a signed int64 value)."""
    w = ((r * 0x9E3779B97F4A7C15 + 0xD1B54A32D192ED03) & _MASK64) | 1
    return w - (1 << 64) if w >= 1 << 63 else w


def hexdigest(value: int) -> str:
    """The record's `hash` field for a fingerprint (an int64 read as unsigned)."""
    return f"fp{value & _MASK64:016x}"


def reference(words) -> int:
    """The fingerprint of a 1-D numpy int32 array of words, by the definition (slow, exact)."""
    import numpy as np

    words = np.asarray(words, dtype=np.int64)
    cols = np.asarray(col_weights(), dtype=np.int64)
    total = 0
    for r in range(0, (len(words) + WIDTH - 1) // WIDTH):
        chunk = words[r * WIDTH:(r + 1) * WIDTH]
        prod = (chunk * cols[:len(chunk)]) & 0xFFFFFFFF
        prod = np.where(prod >= 1 << 31, prod - (1 << 32), prod)
        total = (total + int(prod.sum()) * row_weight(r)) & _MASK64
    return total - (1 << 64) if total >= 1 << 63 else total
