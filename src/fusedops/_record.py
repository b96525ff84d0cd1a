"""The installed wheel's RECORD: what each installed file should be.

pip writes RECORD into the dist-info directory next to the package: one line
per installed file with its sha256 and size. The loader compares the compiled
library's size with it before loading it (a stat and a small read: cheap enough
for every import), because a truncated library is not an error to dlopen but a
SIGBUS later. `python -m fusedops doctor --verify` checks every file's hash.

Nothing here imports torch: the doctor must run on a broken install.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import struct
import sys
from dataclasses import dataclass
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
SITE_DIR = PACKAGE_DIR.parent


@dataclass(frozen=True)
class Entry:
    path: str  # as written in RECORD, relative to the directory holding the package
    sha256: str | None  # urlsafe base64 without padding, as in RECORD
    size: int | None


@dataclass(frozen=True)
class Record:
    path: Path
    entries: dict[str, Entry]

    @property
    def dist_version(self) -> str | None:
        """The version in the dist-info directory's name (fusedops-<version>.dist-info)."""
        name = self.path.parent.name.removesuffix(".dist-info")
        return name.partition("-")[2] or None


class RecordError(Exception):
    """RECORD exists but cannot be read or parsed."""


def find_record(version: str | None = None) -> Path | None:
    """The RECORD of the wheel this package was installed from, or None.

    None for a source tree or an editable install, which have no dist-info
    next to the package. With the version known, one stat finds it; the
    directory scan is the fallback (a partial build info has no version).
    """
    if version:
        direct = SITE_DIR / f"fusedops-{version}.dist-info" / "RECORD"
        if direct.is_file():
            return direct
    found = [
        p / "RECORD" for p in SITE_DIR.glob("fusedops-*.dist-info") if (p / "RECORD").is_file()
    ]
    return found[0] if len(found) == 1 else None


def read_record(path: Path) -> Record:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise RecordError(f"cannot read {path}: {err}") from None
    entries: dict[str, Entry] = {}
    for number, row in enumerate(csv.reader(io.StringIO(text)), start=1):
        if not row:
            continue
        if len(row) != 3:
            raise RecordError(f"{path}, line {number}: expected 'path,hash,size', got {row!r}")
        name, digest, size = row
        sha = digest.removeprefix("sha256=") if digest.startswith("sha256=") else None
        try:
            entries[name] = Entry(name, sha, int(size) if size else None)
        except ValueError:
            raise RecordError(f"{path}, line {number}: size {size!r} is not a number") from None
    return Record(path, entries)


def relative_name(path: Path) -> str:
    """How RECORD names an installed file."""
    return path.resolve().relative_to(SITE_DIR).as_posix()


def sha256_b64(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return base64.urlsafe_b64encode(digest.digest()).rstrip(b"=").decode("ascii")


# ---- the loader's pre-dlopen check ---------------------------------------------------
_PT_LOAD = 1


def elf_problem(path: Path) -> str | None:
    """Why `path` cannot be a complete ELF shared library, or None.

    Reads the headers only. A library cut short keeps a valid header, and dlopen
    maps its segments past the end of the file: touching them raises SIGBUS.
    So every segment and the section header table must lie inside the file.
    """
    if not sys.platform.startswith("linux"):
        return None
    try:
        size = path.stat().st_size
        with path.open("rb") as f:
            header = f.read(64)
            if header[:4] != b"\x7fELF":
                return f"it is not an ELF shared library ({size} bytes)"
            if header[4] != 2 or header[5] != 1:  # only 64-bit little-endian is checked
                return None
            phoff, shoff = struct.unpack_from("<QQ", header, 0x20)
            phentsize, phnum, shentsize, shnum = struct.unpack_from("<HHHH", header, 0x36)
            if phoff + phnum * phentsize > size:
                return f"it is cut short: its program headers end past its {size} bytes"
            f.seek(phoff)
            table = f.read(phnum * phentsize)
    except OSError as err:
        return f"it cannot be read ({err})"
    except struct.error:
        return f"it is cut short: {size} bytes is less than an ELF header"
    for i in range(phnum):
        kind, _, offset, _, _, filesz = struct.unpack_from("<IIQQQQ", table, i * phentsize)
        if kind == _PT_LOAD and offset + filesz > size:
            return f"it is cut short: a segment ends at byte {offset + filesz}, the file at {size}"
    if shoff and shoff + shnum * shentsize > size:
        return f"it is cut short: its section headers end past its {size} bytes"
    return None


def library_problem(library: Path, record: Record | None) -> str | None:
    """Why the compiled library must not be loaded, or None (size and ELF checks)."""
    if record is not None:
        entry = record.entries.get(relative_name(library))
        if entry is None:
            return f"it is not listed in the installed wheel's RECORD ({record.path})"
        actual = library.stat().st_size
        if entry.size is not None and actual != entry.size:
            return f"it is {actual} bytes but the wheel's RECORD ({record.path}) says {entry.size}"
    return elf_problem(library)


# ---- doctor --verify ---------------------------------------------------------------
def verify(record: Record) -> tuple[int, list[str]]:
    """Checks every file RECORD lists (hash and size) and looks for unlisted files
    in the package. Returns (files checked, problems)."""
    problems: list[str] = []
    checked = 0
    for name, entry in sorted(record.entries.items()):
        if entry.sha256 is None:  # RECORD itself and bytecode pip compiled: no hash by design
            continue
        path = SITE_DIR / name
        checked += 1
        if not path.is_file():
            problems.append(f"{name}: missing")
            continue
        size = path.stat().st_size
        if entry.size is not None and size != entry.size:
            problems.append(f"{name}: {size} bytes, RECORD says {entry.size}")
        elif sha256_b64(path) != entry.sha256:
            problems.append(f"{name}: sha256 differs from RECORD (the file was modified)")
    for path in sorted(PACKAGE_DIR.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            name = relative_name(path)
            if name not in record.entries:
                problems.append(f"{name}: not listed in RECORD (not from the installed wheel)")
    return checked, problems
