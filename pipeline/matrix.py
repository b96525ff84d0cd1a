"""The build matrix: matrix.json parsed strictly and expanded into Cells.

matrix.json is the only place that names torch releases, CUDA versions, Python
versions and platforms. `load()` validates it (every error names the entry),
`expand()` turns it into cells (one cell = one wheel), `select()` filters them
and `find()` answers "which cell serves this torch/CUDA/Python?".

    python -m pipeline matrix                      # table of the release matrix
    python -m pipeline matrix --github [filters]   # {"include": [...]} for GitHub Actions
    python -m pipeline matrix --find --cuda 13.0 --torch 2.14.1 --python 3.11
    python -m pipeline matrix --install-table      # the user table of docs/MATRIX.md
"""

from __future__ import annotations

import json
import platform as _platform
import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from . import rules
from .archs import ArchList, ArchListError
from .cell import Cell, Platform
from .rules import Variant

DATA_FILE = Path(__file__).resolve().with_name("matrix.json")
GITHUB_MAX_JOBS = 256  # GitHub Actions refuses larger matrices
# Canonical versions only: '2.14', not '02.14' or '2.14.0.0'.
_MINOR = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)$")
_FULL = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$")
_PLATFORM = re.compile(r"^linux_(x86_64|aarch64)$")
# A tag (":latest", ":2026.10.21-1") can be moved; only a digest pins the image.
_PINNED_IMAGE = re.compile(r"^[^\s@]+@sha256:[0-9a-f]{64}$")


class MatrixError(ValueError):
    """matrix.json is malformed; the message names the entry and what was expected."""


# ---- the data, typed -------------------------------------------------------------


@dataclass(frozen=True)
class CudaToolkit:
    version: str  # "13.0"
    archs: ArchList
    gcc: int


@dataclass(frozen=True)
class TorchRelease:
    minor: str  # "2.14"
    version: Version  # the patch release built against
    python: tuple[str, ...]
    cuda: dict[str, tuple[str, ...]]  # platform -> ("12.6", "13.0", "cpu")
    pypi_cuda: dict[str, str]  # platform -> CUDA of torch's PyPI wheel ("cpu" if none)

    @property
    def stable(self) -> bool:
        return (self.version.major, self.version.minor) >= rules.STABLE_ABI_MIN_TORCH


@dataclass(frozen=True)
class Matrix:
    torch: tuple[TorchRelease, ...]  # oldest first
    cuda: dict[str, CudaToolkit]
    platforms: dict[str, Platform]
    build_python: str
    pins: dict[str, str]  # variant -> torch minor
    pypi_parts: tuple[Variant, ...]  # the stable cells whose libraries make the PyPI wheel
    pypi_platforms: tuple[str, ...]

    def release(self, minor: str) -> TorchRelease:
        return next(t for t in self.torch if t.minor == minor)

    def toolkit(self, cuda: str) -> CudaToolkit:
        """The entry for a CUDA version, else the newest listed one of its major."""
        if cuda in self.cuda:
            return self.cuda[cuda]
        major = cuda.split(".")[0]
        same = [v for v in self.cuda if v.split(".")[0] == major]
        if not same:
            raise MatrixError(f"CUDA {cuda}: no entry of CUDA {major}.x in matrix.json 'cuda'")
        return self.cuda[max(same, key=Version)]

    @property
    def stable_releases(self) -> list[TorchRelease]:
        return [t for t in self.torch if t.stable]


# ---- strict parsing -----------------------------------------------------------------


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [k for k, _ in pairs]
    if dupes := sorted({k for k in keys if keys.count(k) > 1}):
        raise MatrixError(f"duplicate key(s) {dupes} in one object (JSON keeps only the last)")
    return dict(pairs)


def _obj(value: Any, where: str, required: Iterable[str], optional: Iterable[str] = ()) -> dict:
    if not isinstance(value, dict):
        raise MatrixError(f"{where}: expected an object, got {type(value).__name__}")
    allowed = {*required, *optional, "_comment"}
    if unknown := sorted(set(value) - allowed):
        raise MatrixError(f"{where}: unknown key(s) {unknown}; allowed: {sorted(allowed)}")
    if missing := sorted(set(required) - set(value)):
        raise MatrixError(f"{where}: missing key(s) {missing}")
    return {k: v for k, v in value.items() if k != "_comment"}


def _keyed(value: Any, where: str, key_pattern: re.Pattern[str], what: str) -> dict:
    """An object whose keys are data (versions, platforms)."""
    if not isinstance(value, dict):
        raise MatrixError(f"{where}: expected an object, got {type(value).__name__}")
    out = {k: v for k, v in value.items() if k != "_comment"}
    for key in out:
        if not key_pattern.match(key):
            raise MatrixError(f"{where}: key {key!r} is not {what}")
    return out


def _str(value: Any, where: str, pattern: re.Pattern[str] | None = None, what: str = "") -> str:
    if not isinstance(value, str) or (pattern and not pattern.match(value)):
        raise MatrixError(f"{where}: expected {what or 'a string'}, got {value!r}")
    return value


def _list(value: Any, where: str) -> list:
    if not isinstance(value, list) or not value:
        raise MatrixError(f"{where}: expected a non-empty list, got {value!r}")
    return value


def _ascending(items: Sequence[str], where: str) -> None:
    keys = [Version(i) for i in items]
    if keys != sorted(set(keys)):
        raise MatrixError(f"{where}: must be sorted ascending without duplicates, got {items}")


def _parse_cuda(raw: Any) -> dict[str, CudaToolkit]:
    out = {}
    for version, entry in _keyed(raw, "cuda", _MINOR, "a CUDA version like '13.0'").items():
        where = f"cuda[{version!r}]"
        entry = _obj(entry, where, ["archs", "gcc"])
        try:
            archs = ArchList.parse(_str(entry["archs"], f"{where}.archs"))
            archs.check_cuda(Variant.parse(version).cuda)
        except ArchListError as e:
            raise MatrixError(f"{where}.archs: {e}") from None
        gcc = entry["gcc"]
        if not isinstance(gcc, int) or isinstance(gcc, bool) or not 9 <= gcc <= 30:
            raise MatrixError(f"{where}.gcc: expected a GCC major version like 14, got {gcc!r}")
        out[version] = CudaToolkit(version, archs, gcc)
    _ascending(list(out), "cuda")
    return out


def _parse_torch(minor: str, raw: Any, cuda: dict, platforms: dict) -> TorchRelease:
    where = f"torch[{minor!r}]"
    raw = _obj(raw, where, ["version", "python", "cuda", "pypi_cuda", "source"])
    version = _str(raw["version"], f"{where}.version", _FULL, "a version like '2.14.1'")
    if not version.startswith(minor + "."):
        raise MatrixError(f"{where}.version: {version} is not a {minor}.x release")
    pythons = _list(raw["python"], f"{where}.python")
    for py in pythons:
        _str(py, f"{where}.python", _MINOR, "Python versions like '3.12'")
        if Version(py) < Version("{}.{}".format(*rules.STABLE_MIN_PYTHON)):
            raise MatrixError(f"{where}.python: {py} is below fusedops' minimum Python")
    _ascending(pythons, f"{where}.python")
    _str(raw["source"], f"{where}.source", re.compile(r"\S"), "where these facts come from")
    ships = _obj(raw["cuda"], f"{where}.cuda", platforms)
    pypi = _obj(raw["pypi_cuda"], f"{where}.pypi_cuda", platforms)
    for plat, variants in ships.items():
        w = f"{where}.cuda.{plat}"
        for c in _list(variants, w):
            if c != "cpu" and c not in cuda:
                raise MatrixError(f"{w}: {c!r} is not 'cpu' or a CUDA X.Y listed under 'cuda'")
        if variants[-1:] != ["cpu"] or variants.count("cpu") != 1:
            raise MatrixError(f"{w}: must end with 'cpu' (every torch ships a CPU build)")
        _ascending(variants[:-1], w)
        if pypi[plat] not in variants:
            raise MatrixError(f"{where}.pypi_cuda.{plat}: {pypi[plat]!r} is not one of {variants}")
    return TorchRelease(
        minor=minor,
        version=Version(version),
        python=tuple(pythons),
        cuda={p: tuple(ships[p]) for p in platforms},
        pypi_cuda={p: pypi[p] for p in platforms},
    )


def parse(raw: Any) -> Matrix:
    """Validate matrix.json's data; raise MatrixError naming the bad entry."""
    raw = _obj(raw, "matrix", ["stable_abi", "cuda", "platforms", "torch"])
    stable = _obj(
        raw["stable_abi"], "stable_abi", ["build_python", "build_torch_pins", "pypi_wheel"]
    )
    build_python = _str(stable["build_python"], "stable_abi.build_python", _MINOR, "'3.11'")
    pypi = _obj(stable["pypi_wheel"], "stable_abi.pypi_wheel", ["parts", "platforms"])
    cuda = _parse_cuda(raw["cuda"])
    platforms = {}
    for name, entry in _keyed(
        raw["platforms"], "platforms", _PLATFORM, "linux_x86_64 or linux_aarch64"
    ).items():
        entry = _obj(entry, f"platforms.{name}", ["runner", "manylinux_image"])
        platforms[name] = Platform(
            name,
            _str(entry["runner"], f"platforms.{name}.runner"),
            _str(
                entry["manylinux_image"],
                f"platforms.{name}.manylinux_image",
                _PINNED_IMAGE,
                "an image pinned by digest (NAME@sha256:<64 hex>)",
            ),
        )
    releases = tuple(
        _parse_torch(k, v, cuda, platforms)
        for k, v in sorted(
            _keyed(raw["torch"], "torch", _MINOR, "a torch minor like '2.14'").items(),
            key=lambda kv: Version(kv[0]),
        )
    )
    pins = _keyed(
        stable["build_torch_pins"],
        "stable_abi.build_torch_pins",
        re.compile(r"^(cpu|cu\d+)$"),
        "a variant like cu130",
    )
    try:
        pypi_parts = tuple(
            Variant.parse(_str(v, "stable_abi.pypi_wheel.parts"))
            for v in _list(pypi["parts"], "stable_abi.pypi_wheel.parts")
        )
    except ValueError as e:
        raise MatrixError(f"stable_abi.pypi_wheel.parts: {e}") from None
    m = Matrix(
        torch=releases,
        cuda=cuda,
        platforms=platforms,
        build_python=build_python,
        pins=pins,
        pypi_parts=pypi_parts,
        pypi_platforms=tuple(_list(pypi["platforms"], "stable_abi.pypi_wheel.platforms")),
    )
    _check_stable(m)
    return m


def _check_stable(m: Matrix) -> None:
    """Every stable variant resolves to a build torch that ships it and the build Python."""
    shipped = {
        str(Variant.parse(c)) for t in m.stable_releases for cs in t.cuda.values() for c in cs
    }
    for variant, minor in m.pins.items():
        if variant not in shipped:
            raise MatrixError(f"stable_abi.build_torch_pins: no stable torch ships {variant!r}")
        if minor not in {t.minor for t in m.stable_releases}:
            raise MatrixError(
                f"stable_abi.build_torch_pins.{variant}: {minor!r} is not a stable-ABI torch minor"
            )
    for plat in m.platforms:
        for cuda in _stable_cudas(m, plat):
            torch = stable_build_torch(m, Variant.parse(cuda))
            if cuda not in torch.cuda[plat]:
                raise MatrixError(
                    f"stable_abi.build_torch_pins: torch {torch.minor} lacks {Variant.parse(cuda)} on {plat}"
                )
            if m.build_python not in torch.python:
                raise MatrixError(
                    f"stable_abi.build_python: torch {torch.minor} has no Python {m.build_python}"
                )
    if not set(m.pypi_platforms) <= set(m.platforms):
        raise MatrixError(
            f"stable_abi.pypi_wheel.platforms: {list(m.pypi_platforms)} are not all platforms"
        )
    for part in m.pypi_parts:
        if str(part) not in shipped:
            raise MatrixError(f"stable_abi.pypi_wheel.parts: {part} is not a stable cell")
    families = [p.family for p in m.pypi_parts]
    if len(set(families)) != len(families):
        raise MatrixError(f"stable_abi.pypi_wheel.parts: one library per family, got {families}")


def load(path: str | Path | None = None) -> Matrix:
    """Read and validate matrix.json (default: the one in this package)."""
    path = Path(path) if path else DATA_FILE
    try:
        raw = json.loads(path.read_text(), object_pairs_hook=_no_duplicates)
    except json.JSONDecodeError as e:
        raise MatrixError(f"{path.name}: not valid JSON: {e}") from None
    except MatrixError as e:
        raise MatrixError(f"{path.name}: {e}") from None
    except OSError as e:
        raise MatrixError(f"cannot read {path}: {e.strerror}") from None
    return parse(raw)


# ---- expansion -------------------------------------------------------------------------


def _stable_cudas(m: Matrix, plat: str) -> list[str]:
    found = {c for t in m.stable_releases for c in t.cuda[plat]}
    return [*sorted(found - {"cpu"}, key=Version), "cpu"] if found else []


def stable_build_torch(m: Matrix, variant: Variant) -> TorchRelease:
    """The pinned minor, else the newest stable torch that ships `variant` anywhere."""
    if str(variant) in m.pins:
        return m.release(m.pins[str(variant)])
    ships = [
        t
        for t in m.stable_releases
        if any(variant == Variant.parse(c) for cs in t.cuda.values() for c in cs)
    ]
    return ships[-1]


def make_cell(
    m: Matrix, *, abi: str, cuda: str, platform: str, torch: TorchRelease, python: str
) -> Cell:
    variant = Variant.parse(cuda)
    toolkit = None if variant.is_cpu else m.toolkit(cuda)
    tests = [str(torch.version)]
    if abi == "stable":
        floor = next(t for t in m.stable_releases if cuda in t.cuda[platform])
        tests = list(dict.fromkeys([str(floor.version), str(torch.version)]))
    return Cell(
        abi=abi,
        variant=variant,
        torch=torch.version,
        python=python,
        platform=m.platforms[platform],
        archs=toolkit.archs if toolkit else None,
        gcc=toolkit.gcc if toolkit else None,
        pypi_part=abi == "stable" and variant in m.pypi_parts and platform in m.pypi_platforms,
        # classic cells of torch >= 2.10 are optional: the stable wheel serves those torches
        release=abi == "stable" or not torch.stable,
        test_torches=tuple(tests),
    )


def expand(m: Matrix | None = None, *, include_optional: bool = False) -> list[Cell]:
    """Stable cells, then classic ones (torch < 2.10, plus >= 2.10 if include_optional)."""
    m = m or load()
    cells = [
        make_cell(
            m,
            abi="stable",
            cuda=c,
            platform=p,
            torch=stable_build_torch(m, Variant.parse(c)),
            python=m.build_python,
        )
        for p in m.platforms
        for c in _stable_cudas(m, p)
    ]
    cells += [
        make_cell(m, abi="classic", cuda=c, platform=p, torch=t, python=py)
        for t in m.torch
        for p in m.platforms
        for c in t.cuda[p]
        for py in t.python
    ]
    cells = [c for c in cells if c.release or include_optional]
    ids = [c.id for c in cells]
    if len(ids) != len(set(ids)):
        raise MatrixError(
            f"cell ids are not unique: {sorted({i for i in ids if ids.count(i) > 1})}"
        )
    return cells


# ---- selection -------------------------------------------------------------------------


def this_platform() -> str:
    return f"{sys.platform}_{_platform.machine().lower()}"


def normalize_platform(text: str) -> str:
    """'x86_64', 'linux_x86_64', 'arm64' -> 'linux_<machine>'."""
    value = text.strip().lower().replace("-", "_").replace("arm64", "aarch64")
    return value if value.startswith("linux_") else f"linux_{value}"


def pypi_cells(m: Matrix | None = None, *, buildable_here: bool = False) -> list[Cell]:
    """The stable cells whose libraries make the PyPI wheel (of this platform, if buildable_here)."""
    cells = [c for c in expand(m or load()) if c.pypi_part]
    return [c for c in cells if not buildable_here or buildable_on(c, this_platform())]


def buildable_on(cell: Cell, plat: str) -> bool:
    """A machine builds cpu and PyPI-nvcc (CUDA 13) cells of its own platform."""
    return cell.platform.name == plat and cell.toolkit_source in ("none", "pypi")


def select(
    cells: Iterable[Cell],
    *,
    abi: str | None = None,
    variant: Variant | None = None,
    platform: str | None = None,
    torch: str | None = None,
    python: str | None = None,
    buildable_here: bool = False,
) -> list[Cell]:
    """Cells that match every given filter; torch/python match what the wheel serves."""
    platform = platform and normalize_platform(platform)
    return [
        c
        for c in cells
        if (abi is None or c.abi == abi)
        and (variant is None or c.variant == variant)
        and (platform is None or c.platform.name == platform)
        and (torch is None or SpecifierSet(c.torch_requirement).contains(torch, prereleases=True))
        and (
            python is None or SpecifierSet(c.python_requirement).contains(python, prereleases=True)
        )
        and (not buildable_here or buildable_on(c, this_platform()))
    ]


def by_id(cell_id: str, m: Matrix | None = None) -> Cell:
    """The cell with this id (optional cells included), or LookupError with close ids."""
    cells = expand(m or load(), include_optional=True)
    for cell in cells:
        if cell.id == cell_id:
            return cell
    close = [c.id for c in cells if set(c.id.split("-")) & set(cell_id.split("-"))][:8]
    raise LookupError(
        f"no cell {cell_id!r} in matrix.json" + (f"; close: {', '.join(close)}" if close else "")
    )


def find(
    variant: Variant,
    torch: str,
    python: str,
    abi: str | None = None,
    platform: str | None = None,
    *,
    m: Matrix | None = None,
) -> Cell:
    """The cell whose wheel serves this torch/python/variant (optional classic cells included)."""
    m = m or load()
    want = {
        "abi": abi or rules.default_abi(torch),
        "variant": variant,
        "platform": normalize_platform(platform or this_platform()),
        "torch": torch,
        "python": python,
    }
    found = select(expand(m, include_optional=True), **want)
    if len(found) == 1:
        return found[0]
    asked = " ".join(f"{k}={v}" for k, v in want.items())
    if found:
        raise LookupError(f"ambiguous matrix lookup for {asked}: {[c.id for c in found]}")
    lines = [f"no matrix cell for {asked}"]
    minor = "{}.{}".format(*Version(torch).release[:2])
    if minor not in [t.minor for t in m.torch]:
        lines.append(
            f"  torch {minor} is not in the matrix (it has {', '.join(t.minor for t in m.torch)})"
        )
    else:
        t = m.release(minor)
        lines.append(
            f"  torch {minor} ships {', '.join(t.cuda.get(want['platform'], ())) or 'nothing'} on {want['platform']}, for Python {', '.join(t.python)}"
        )
    raise LookupError("\n".join(lines))
