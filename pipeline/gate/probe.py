"""The gate's I/O: read the wheel, and run the tools that look inside it.

Everything here turns files and tool output into data (WheelContents, DT_NEEDED
lists, fatbin bytes, cuobjdump listings, JSON reports); the judging is done by
the pure checks in checks.py, native.py and record.py.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from ..elf import ElfReadError, dt_needed
from ..repair import auditwheel_env, auditwheel_show
from .report import GateInputError

BUILD_INFO_MEMBER = "fusedops/_build_info.py"


@dataclass(frozen=True)
class Member:
    name: str
    sha256: str  # RECORD style: urlsafe base64, no padding
    size: int


@dataclass(frozen=True)
class WheelContents:
    path: Path
    names: tuple[str, ...]  # every zip entry, duplicates included
    members: tuple[Member, ...]  # the files (not directories) that could be read
    unreadable: tuple[str, ...]  # entries whose data fails the zip's own CRC
    dist_infos: tuple[str, ...]  # top-level *.dist-info directories
    metadata: str | None
    wheel_text: str | None
    record_text: str | None
    build_info_source: str | None

    @property
    def dist_info(self) -> str | None:
        return self.dist_infos[0] if len(self.dist_infos) == 1 else None


def _digest(stream) -> tuple[str, int]:
    h, size = hashlib.sha256(), 0
    for chunk in iter(lambda: stream.read(1 << 20), b""):
        h.update(chunk)
        size += len(chunk)
    return base64.urlsafe_b64encode(h.digest()).rstrip(b"=").decode(), size


def read_wheel(path: Path) -> WheelContents:
    """Hash every member and read the text files the checks need.

    Raises GateInputError when ``path`` is not a readable zip file at all.
    """
    if not path.is_file():
        raise GateInputError(f"wheel not found: {path}")
    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise GateInputError(f"{path.name} is not a readable wheel (zip): {exc}") from None
    with zf:
        infos = zf.infolist()
        members, unreadable = [], []
        for info in infos:
            if info.is_dir():
                continue
            try:
                with zf.open(info) as stream:
                    members.append(Member(info.filename, *_digest(stream)))
            except (zipfile.BadZipFile, OSError, EOFError) as exc:
                unreadable.append(f"{info.filename} ({exc})")
        dist_infos = sorted({n.split("/")[0] for n in zf.namelist() if ".dist-info/" in n})
        dist_infos = [d for d in dist_infos if d.endswith(".dist-info")]

        def text(name: str | None) -> str | None:
            if name is None or name not in zf.namelist():
                return None
            try:
                return zf.read(name).decode("utf-8", errors="replace")
            except (zipfile.BadZipFile, OSError):
                return None

        one = dist_infos[0] if len(dist_infos) == 1 else None
        return WheelContents(
            path=path,
            names=tuple(i.filename for i in infos),
            members=tuple(members),
            unreadable=tuple(unreadable),
            dist_infos=tuple(dist_infos),
            metadata=text(one and f"{one}/METADATA"),
            wheel_text=text(one and f"{one}/WHEEL"),
            record_text=text(one and f"{one}/RECORD"),
            build_info_source=text(BUILD_INFO_MEMBER),
        )


def extract(path: Path, members: Iterable[str], dest: Path) -> list[Path]:
    with zipfile.ZipFile(path) as zf:
        return [Path(zf.extract(m, dest)) for m in members]


# --- ELF -------------------------------------------------------------------------


class ElfError(ValueError):
    """A file the gate expected to be a shared library is not a readable ELF file."""


def elf_needed(so: Path) -> list[str]:
    """DT_NEEDED entries, read by pipeline.elf: the same reader setup.py runs on a
    fresh build, standard library only, so the gate needs neither pyelftools nor
    readelf for it."""
    try:
        return dt_needed(so)
    except ElfReadError as exc:
        raise ElfError(f"{exc}: not a readable ELF file") from None


def fatbin_section(so: Path) -> bytes:
    """Raw ``.nv_fatbin`` section (empty when absent)."""
    try:
        from elftools.common.exceptions import ELFError
        from elftools.elf.elffile import ELFFile
    except ImportError:
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "fatbin"
            cmd = ["objcopy", "-O", "binary", "--only-section=.nv_fatbin", str(so), str(out)]
            subprocess.run(cmd, capture_output=True, check=False)
            return out.read_bytes() if out.exists() else b""
    try:
        with so.open("rb") as f:
            section = ELFFile(f).get_section_by_name(".nv_fatbin")
            return section.data() if section is not None else b""
    except (ELFError, EOFError, ValueError) as exc:
        raise ElfError(f"{so.name} is not a readable ELF file: {exc}") from None


# --- external tools ------------------------------------------------------------------

CUOBJDUMP_HINT = (
    "pip install nvidia-cuda-cuobjdump (it lands in site-packages/nvidia/cu13/bin), "
    "or set $CUOBJDUMP / put a CUDA toolkit's bin on PATH"
)


def find_cuobjdump(env: Mapping[str, str] | None = None) -> Path | None:
    """cuobjdump from $CUOBJDUMP, PATH, $CUDA_HOME/bin or an installed nvidia/cu13/bin."""
    env = os.environ if env is None else env
    candidates: list[Path] = []
    if env.get("CUOBJDUMP"):
        candidates.append(Path(env["CUOBJDUMP"]))
    if found := shutil.which("cuobjdump", path=env.get("PATH", "")):
        candidates.append(Path(found))
    for var in ("CUDA_HOME", "CUDA_PATH"):
        if env.get(var):
            candidates.append(Path(env[var]) / "bin" / "cuobjdump")
    candidates += nvidia_package_bins()
    return next((c for c in candidates if c.is_file() and os.access(c, os.X_OK)), None)


def nvidia_package_bins() -> list[Path]:
    """cuobjdump inside the importable ``nvidia`` namespace package (PyPI wheels)."""
    spec = importlib.util.find_spec("nvidia")
    roots = list(spec.submodule_search_locations or []) if spec else []
    subs = ("cu13", "cu12", "cuda_cuobjdump")
    return [Path(r) / sub / "bin" / "cuobjdump" for r in roots for sub in subs]


def cuobjdump_list(tool: Path, so: Path, what: str) -> str:
    """``cuobjdump --list-elf|--list-ptx``; a file without device code lists nothing."""
    proc = subprocess.run(
        [str(tool), f"--list-{what}", str(so)], capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        if "does not contain device code" in proc.stderr + proc.stdout:
            return ""
        raise RuntimeError(f"cuobjdump --list-{what} {so.name} failed: {proc.stderr.strip()}")
    return proc.stdout


def run_abi3audit(wheel: Path) -> tuple[dict[str, object] | None, int, str]:
    """abi3audit --strict --report on the wheel (its cp310-abi3 tag sets the baseline)."""
    cmd = [sys.executable, "-m", "abi3audit", "--strict", "--report", str(wheel)]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    try:
        report = json.loads(proc.stdout)
    except json.JSONDecodeError:
        report = None
    return report, proc.returncode, proc.stderr + proc.stdout


def have_module(name: str) -> bool:
    return importlib.util.find_spec(name) is not None


def show(wheel: Path) -> dict[str, object]:
    """``auditwheel show --json`` (repair's own call); RuntimeError when it fails."""
    return auditwheel_show(wheel, auditwheel_env(None))
