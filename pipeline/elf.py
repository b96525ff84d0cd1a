"""What a built extension links, read with the standard library alone (setup.py has no
pyelftools), and the one link fault that must stop a build: a private libstdc++.

An extension that does not list libstdc++.so.6 in DT_NEEDED carries its own static
copy of the C++ runtime (some toolchains link it that way, e.g. a GCC installed
without its shared libstdc++). Its exceptions and iostreams then meet torch's
libstdc++ in one process: seen on a GPU machine, a wheel built with such a GCC 13
segfaulted in std::ostream::operator<<(long) while formatting its first error
message, because its locale facets came from the other runtime.
"""

from __future__ import annotations

import struct
from pathlib import Path

LIBSTDCXX = "libstdc++.so.6"
_PT_LOAD, _PT_DYNAMIC = 1, 2
_DT_NULL, _DT_NEEDED, _DT_STRTAB = 0, 1, 5


class ElfReadError(ValueError):
    """Not an ELF file with a readable dynamic section."""


class UnsupportedElf(ElfReadError):
    """An ELF file of a class or byte order this reader does not parse (32-bit, big-endian)."""


def dt_needed(path: Path) -> list[str]:
    """The DT_NEEDED entries of a 64-bit little-endian ELF shared library, in order."""
    data = path.read_bytes()
    if data[:4] != b"\x7fELF" or len(data) < 64:
        raise ElfReadError(f"{path.name} does not start with the ELF magic number")
    if data[4] != 2 or data[5] != 1:
        raise UnsupportedElf(f"{path.name} is not a 64-bit little-endian ELF file")
    try:
        (phoff,) = struct.unpack_from("<Q", data, 0x20)
        phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
        loads: list[tuple[int, int, int]] = []  # (vaddr, offset, filesz)
        dynamic: tuple[int, int] | None = None
        for i in range(phnum):
            kind, _, offset, vaddr, _, filesz = struct.unpack_from(
                "<IIQQQQ", data, phoff + i * phentsize
            )
            if kind == _PT_LOAD:
                loads.append((vaddr, offset, filesz))
            elif kind == _PT_DYNAMIC:
                dynamic = (offset, filesz)
        if dynamic is None:
            raise ElfReadError(f"{path.name} has no dynamic section (not a shared library)")
        needed: list[int] = []
        strtab_vaddr = None
        for at in range(dynamic[0], dynamic[0] + dynamic[1] - 15, 16):  # whole entries only
            tag, value = struct.unpack_from("<qQ", data, at)
            if tag == _DT_NULL:
                break
            if tag == _DT_NEEDED:
                needed.append(value)
            elif tag == _DT_STRTAB:
                strtab_vaddr = value
    except struct.error:
        raise ElfReadError(f"{path.name} is cut short inside its headers") from None
    if strtab_vaddr is None:
        raise ElfReadError(f"{path.name} has no dynamic string table")
    strtab = next(
        (off + strtab_vaddr - va for va, off, size in loads if va <= strtab_vaddr < va + size),
        None,
    )
    if strtab is None:
        raise ElfReadError(f"{path.name}: its string table lies outside every loaded segment")
    names = []
    for index in needed:
        start = strtab + index
        end = data.find(b"\0", start)
        if end < 0:
            raise ElfReadError(f"{path.name} is cut short inside its string table")
        names.append(data[start:end].decode(errors="replace"))
    return names


def private_libstdcxx_problem(needed: list[str]) -> str | None:
    """Why an extension with these DT_NEEDED entries must not ship, or None."""
    if LIBSTDCXX in needed:
        return None
    return (
        f"it does not link {LIBSTDCXX}: the C++ runtime is linked into it statically, and its "
        "exceptions and iostreams then crash against torch's libstdc++ (a segfault formatting "
        "an error message). Build with a compiler that links the shared libstdc++ "
        "(e.g. CC=gcc CXX=g++ of the system toolchain or a gcc-toolset)"
    )
