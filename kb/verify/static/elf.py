"""A minimal ELF64 little-endian reader: sections, dynamic symbols and PLT/GOT slots.

Only what the call-site scan needs (x86-64 shared libraries from Linux wheels). A full ELF
library is not a dependency of the knowledge base, and the few tables read here are fixed by
the System V ABI, so a small reader is enough and keeps the scan dependency-free.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass


class ElfError(ValueError):
    """The bytes are not an ELF64 little-endian x86-64 object that this reader understands."""


@dataclass(frozen=True)
class Section:
    name: str
    kind: int
    addr: int
    offset: int
    size: int
    link: int
    entsize: int


_SHT_SYMTAB, _SHT_RELA, _SHT_DYNSYM = 2, 4, 11
_R_X86_64_GLOB_DAT, _R_X86_64_JUMP_SLOT = 6, 7


class Elf:
    """Sections and symbols of one shared library held in memory."""

    def __init__(self, data: bytes) -> None:
        if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
            raise ElfError("not an ELF64 little-endian file")
        self.data = data
        (shoff,) = struct.unpack_from("<Q", data, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
        raw = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
        names = raw[shstrndx] if shnum else None
        self.sections: list[Section] = []
        for name_off, kind, _flags, addr, offset, size, link, _info, _align, entsize in raw:
            name = _cstr(data, names[4] + name_off) if names else ""
            self.sections.append(Section(name, kind, addr, offset, size, link, entsize))

    def section(self, name: str) -> Section | None:
        return next((s for s in self.sections if s.name == name), None)

    def file_offset(self, addr: int) -> int | None:
        """The file offset of a virtual address inside a section with file contents."""
        for sec in self.sections:
            if sec.kind != 8 and sec.addr and sec.addr <= addr < sec.addr + sec.size:
                return sec.offset + (addr - sec.addr)
        return None

    def symbols(self) -> list[tuple[int, str, int]]:
        """(index, name, value) of every dynamic symbol (the dynamic table is what stripped wheels keep)."""
        out: list[tuple[int, str, int]] = []
        for sec in self.sections:
            if sec.kind != _SHT_DYNSYM:
                continue
            strtab = self.sections[sec.link]
            for i in range(sec.size // 24):
                name_off, _info, _other, _shndx, value, _size = struct.unpack_from("<IBBHQQ", self.data, sec.offset + i * 24)
                out.append((i, _cstr(self.data, strtab.offset + name_off), value))
        return out

    def got_slots(self, symbol_indices: set[int]) -> set[int]:
        """Addresses of the GOT slots that the dynamic linker fills with these symbols."""
        slots: set[int] = set()
        for sec in self.sections:
            if sec.kind != _SHT_RELA or self.sections[sec.link].kind != _SHT_DYNSYM:
                continue
            for i in range(sec.size // 24):
                offset, info, _addend = struct.unpack_from("<QQq", self.data, sec.offset + i * 24)
                if info & 0xFFFFFFFF in (_R_X86_64_JUMP_SLOT, _R_X86_64_GLOB_DAT) and info >> 32 in symbol_indices:
                    slots.add(offset)
        return slots


def _cstr(data: bytes, offset: int) -> str:
    end = data.index(b"\0", offset)
    return data[offset:end].decode("utf-8", "replace")
