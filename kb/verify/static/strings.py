"""Printable strings inside a binary that contain a keyword or match a name pattern.

Compilers store C string literals NUL-terminated, so a message is the printable run around
the keyword. Searching for the keyword first and widening to the run boundaries is linear in
the binary's size; a regular expression anchored on arbitrary printable runs is not.
"""

from __future__ import annotations

import re

_EDGE = 4096  # the longest message widened around a keyword


def containing(data: bytes, keyword: bytes) -> set[str]:
    """Every NUL-delimited printable string in data that contains keyword."""
    found: set[str] = set()
    start = data.find(keyword)
    while start != -1:
        left = start
        floor = max(0, start - _EDGE)
        while left > floor and 0x20 <= data[left - 1] <= 0x7E or left > floor and data[left - 1] in (9, 10):
            left -= 1
        right = data.find(b"\0", start, start + _EDGE)
        right = right if right != -1 else start + len(keyword)
        text = data[left:right]
        if all(0x20 <= b <= 0x7E or b in (9, 10) for b in text):
            found.add(text.decode("ascii"))
        start = data.find(keyword, right if right > start else start + 1)
    return found


def names(data: bytes, pattern: re.Pattern[bytes]) -> set[str]:
    """Every whole NUL-delimited string of data that the bytes pattern matches from end to end."""
    out: set[str] = set()
    for match in pattern.finditer(data):
        before = data[match.start() - 1 : match.start()] if match.start() else b"\0"
        after = data[match.end() : match.end() + 1]
        if before == b"\0" and after == b"\0":
            out.add(match.group().decode("ascii"))
    return out
