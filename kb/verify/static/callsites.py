"""String-literal arguments of the calls to one function in an x86-64 shared library.

PyTorch names the kernel in `alertNotDeterministic("index_reduce_cuda")`; the compiled
library keeps the name as a bare string with nothing that marks it as an alert. What marks
it is the code: a `lea reg, [rip+name]` a few instructions before a call to the alert
function. Finding those pairs reads the call sites themselves, so a name that survives in
the library for another use (a dispatch label, an error message) is not counted as an alert.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from kb.verify.static.elf import Elf

if TYPE_CHECKING:
    import numpy as np

NEEDS = "reading a release's binaries needs NumPy: pip install 'kb-determinism[static]'"


def _numpy():
    """NumPy, imported when a binary is read: `kb --help` and every other command run without it."""
    try:
        import numpy
    except ImportError as exc:
        raise ImportError(NEEDS) from exc
    return numpy

WINDOW = 96  # bytes before the call searched for the argument's lea
WIDE_WINDOW = 256  # where the argument's length is computed at run time (a strlen loop), its lea comes earlier
_PRINTABLE = re.compile(rb"[\x20-\x7e]{2,400}")


def call_targets(elf: Elf, name_part: str, exclude: tuple[str, ...] = ()) -> tuple[set[int], set[int]]:
    """(direct targets, GOT slots) by which code can call a function whose symbol contains name_part."""
    wanted = [(i, v) for i, n, v in elf.symbols() if name_part in n and not any(x in n for x in exclude)]
    np = _numpy()
    direct = {v for _i, v in wanted if v}
    slots = elf.got_slots({i for i, _v in wanted})
    for sec in elf.sections:
        if not sec.name.startswith(".plt"):
            continue
        body = elf.data[sec.offset : sec.offset + sec.size]
        for match in re.finditer(rb"\xff\x25", body):
            pos = match.start()
            (disp,) = np.frombuffer(body, dtype="<i4", count=1, offset=pos + 2) if pos + 6 <= len(body) else (None,)
            if disp is None or sec.addr + pos + 6 + int(disp) not in slots:
                continue
            step = 8 if sec.name == ".plt.got" and sec.entsize == 8 else 16
            direct.add(sec.addr + (pos // step) * step)
    return direct, slots


def string_arguments(elf: Elf, name_part: str, exclude: tuple[str, ...] = ()) -> list[str]:
    """The string literal loaded nearest before each call to the function (sorted, deduplicated)."""
    direct, slots = call_targets(elf, name_part, exclude)
    if not direct and not slots:
        return []
    np = _numpy()
    found: set[str] = set()
    for sec in elf.sections:
        if sec.name != ".text":
            continue
        code = np.frombuffer(elf.data, dtype=np.uint8, count=sec.size, offset=sec.offset)
        for pos in _call_sites(code, sec.addr, direct, slots):
            text = _nearest_literal(elf, code, sec.addr, pos, WINDOW)
            if text is None:
                text = _nearest_literal(elf, code, sec.addr, pos, WIDE_WINDOW)
            if text is not None:
                found.add(text)
    return sorted(found)


def _rel32(code: np.ndarray, pos: np.ndarray) -> np.ndarray:
    np = _numpy()
    b = [code[pos + k].astype(np.int64) for k in range(4)]
    value = b[0] | (b[1] << 8) | (b[2] << 16) | (b[3] << 24)
    return np.where(value >= 1 << 31, value - (1 << 32), value)


def _call_sites(code: np.ndarray, base: int, direct: set[int], slots: set[int]) -> list[int]:
    np = _numpy()
    limit = len(code) - 6
    out: list[int] = []
    near = np.flatnonzero(code[:limit] == 0xE8)
    if direct and len(near):
        targets = base + near + 5 + _rel32(code, near + 1)
        out.extend(near[np.isin(targets, np.fromiter(direct, dtype=np.int64))].tolist())
    ff = np.flatnonzero(code[:limit] == 0xFF)
    if slots and len(ff):
        ff = ff[code[ff + 1] == 0x15]
        targets = base + ff + 6 + _rel32(code, ff + 2)
        out.extend(ff[np.isin(targets, np.fromiter(slots, dtype=np.int64))].tolist())
    return sorted(out)


def _nearest_literal(elf: Elf, code: np.ndarray, base: int, call: int, window: int) -> str | None:
    np = _numpy()
    start = max(0, call - window)
    for pos in range(call - 7, start - 1, -1):
        rex, op, modrm = int(code[pos]), int(code[pos + 1]), int(code[pos + 2])
        if rex not in (0x48, 0x4C) or op != 0x8D or modrm & 0xC7 != 0x05:
            continue
        disp = int(_rel32(code, np.array([pos + 3]))[0])
        offset = elf.file_offset(base + pos + 7 + disp)
        if offset is None:
            continue
        match = _PRINTABLE.match(elf.data, offset)
        if match and elf.data[match.end() : match.end() + 1] == b"\0":
            return match.group().decode("ascii")
    return None
