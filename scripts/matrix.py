#!/usr/bin/env python3
"""The fusedops build matrix: scripts/matrix.json expanded into wheel build cells.

matrix.json is the only place that names torch releases, CUDA versions, Python
versions and platforms. This script validates it and expands it into cells (one
cell = one wheel to build); CI, nox and the docs all read cells from here.

    python scripts/matrix.py                     # table of the release matrix
    python scripts/matrix.py --github [filters]  # {"include": [...]} for GitHub Actions
    python scripts/matrix.py --find --cuda 13.0 --torch 2.14.1 --python 3.11
    python scripts/matrix.py --install-table     # the user table of docs/MATRIX.md

Importable (scripts/ on sys.path): load_matrix, expand, select, find_cell.
Standard library only, so a CI job can run it before installing anything.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import platform as _platform
import re
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

DATA_FILE = Path(__file__).resolve().with_name("matrix.json")
TORCH_INDEX = "https://download.pytorch.org/whl"
GITHUB_MAX_JOBS = 256  # GitHub Actions refuses larger matrices
# First CUDA release able to target an arch newer than CUDA 12.0 knows.
ARCH_FIRST_CUDA = {(10, 0): (12, 8), (10, 3): (12, 9), (11, 0): (13, 0), (12, 0): (12, 8)}
CUDA13_MIN_ARCH = (7, 5)  # CUDA 13 dropped sm_50..sm_72

_ARCH = re.compile(r"^\d+\.\d+$")
_MINOR = re.compile(r"^\d+\.\d+$")
_FULL = re.compile(r"^\d+\.\d+\.\d+$")


class MatrixError(ValueError):
    """matrix.json is malformed; the message names the entry and what was expected."""


# ---- data loading and validation ---------------------------------------------------


@dataclasses.dataclass(frozen=True)
class TorchRelease:
    minor: str  # "2.14"
    version: str  # newest patch we build against, "2.14.1"
    python: tuple[str, ...]
    cuda: dict[str, tuple[str, ...]]  # platform -> ("12.6", "13.0", "cpu")
    pypi_cuda: dict[str, str]  # platform -> CUDA of torch's PyPI wheel ("cpu" if none)


@dataclasses.dataclass(frozen=True)
class Matrix:
    torch: tuple[TorchRelease, ...]  # oldest first
    arch_lists: dict[str, str]
    platforms: dict[str, dict[str, str]]
    stable_min_torch: str
    stable_min_python: str
    stable_build_python: str
    stable_pins: dict[str, str]  # variant -> torch minor
    pypi_variant: str
    pypi_platforms: tuple[str, ...]

    def release(self, minor: str) -> TorchRelease:
        return next(t for t in self.torch if t.minor == minor)


def vtuple(version: str) -> tuple[int, ...]:
    """'2.14.1+cu130' -> (2, 14, 1); compare versions as tuples, never as strings."""
    match = re.match(r"\d+(\.\d+)*", version.strip())
    if not match:
        raise ValueError(f"not a version: {version!r}")
    return tuple(int(p) for p in match.group().split("."))


def _obj(value: Any, where: str, required: Iterable[str], optional: Iterable[str] = ()) -> dict:
    if not isinstance(value, dict):
        raise MatrixError(f"{where}: expected an object, got {type(value).__name__}")
    allowed = {*required, *optional, "_comment"}
    if unknown := sorted(set(value) - allowed):
        raise MatrixError(f"{where}: unknown key(s) {unknown}; allowed: {sorted(allowed)}")
    if missing := sorted(set(required) - set(value)):
        raise MatrixError(f"{where}: missing key(s) {missing}")
    return value


def _map(value: Any, where: str) -> dict:
    """An object whose keys are data (versions, platforms); '_comment' is dropped."""
    return {
        k: v
        for k, v in _obj(value, where, [], value if isinstance(value, dict) else ()).items()
        if k != "_comment"
    }


def _str(value: Any, where: str, pattern: re.Pattern[str] | None = None, what: str = "") -> str:
    if not isinstance(value, str) or (pattern and not pattern.match(value)):
        raise MatrixError(f"{where}: expected {what or 'a string'}, got {value!r}")
    return value


def _list(value: Any, where: str) -> list:
    if not isinstance(value, list) or not value:
        raise MatrixError(f"{where}: expected a non-empty list, got {value!r}")
    return value


def _ascending(items: Sequence[str], where: str, key=vtuple) -> None:
    keys = [key(i) for i in items]
    if keys != sorted(set(keys)):
        raise MatrixError(f"{where}: must be sorted ascending without duplicates, got {items}")


def parse_arch_list(arch_list: str, cuda: str, where: str = "arch list") -> list[tuple[int, int]]:
    """'7.5 8.0 12.0+PTX' -> [(7, 5), (8, 0), (12, 0)], checked against what `cuda` can target."""
    tokens = arch_list.split()
    if not tokens or any("+PTX" in t for t in tokens[:-1]):
        raise MatrixError(
            f"{where}: expected e.g. '7.5 8.0 9.0+PTX' (+PTX last only), got {arch_list!r}"
        )
    archs = []
    for token in tokens:
        base = token.removesuffix("+PTX")
        if not _ARCH.match(base):
            raise MatrixError(f"{where}: {token!r} is not an arch like 8.0 or 9.0+PTX")
        archs.append(vtuple(base)[:2])
    _ascending([f"{a}.{b}" for a, b in archs], where)
    cuda_v = (*vtuple(cuda), 0)[:2]
    for arch in archs:
        if cuda_v >= (13, 0) and arch < CUDA13_MIN_ARCH:
            raise MatrixError(
                f"{where}: CUDA {cuda} cannot target sm_{arch[0]}{arch[1]} (needs >= 7.5)"
            )
        if cuda_v < ARCH_FIRST_CUDA.get(arch, (0, 0)):
            need = ".".join(map(str, ARCH_FIRST_CUDA[arch]))
            raise MatrixError(f"{where}: sm_{arch[0]}{arch[1]} needs CUDA >= {need}, not {cuda}")
    return archs


def _parse_torch(minor: str, raw: Any, m: dict) -> TorchRelease:
    where = f"torch[{minor!r}]"
    raw = _obj(raw, where, ["version", "python", "cuda", "pypi_cuda", "source"])
    version = _str(raw["version"], f"{where}.version", _FULL, "a version like '2.14.1'")
    if vtuple(version)[:2] != vtuple(minor):
        raise MatrixError(f"{where}.version: {version} is not a {minor}.x release")
    pythons = _list(raw["python"], f"{where}.python")
    for py in pythons:
        _str(py, f"{where}.python", _MINOR, "Python versions like '3.12'")
        if vtuple(py) < vtuple(m["stable_abi"]["min_python"]):
            raise MatrixError(f"{where}.python: {py} is below fusedops' minimum Python")
    _ascending(pythons, f"{where}.python")
    _str(raw["source"], f"{where}.source", re.compile(r"\S"), "where these facts come from")
    cuda = _obj(raw["cuda"], f"{where}.cuda", m["platforms"])
    pypi = _obj(raw["pypi_cuda"], f"{where}.pypi_cuda", m["platforms"])
    for plat, variants in cuda.items():
        w = f"{where}.cuda.{plat}"
        for c in _list(variants, w):
            if c != "cpu" and not (_MINOR.match(str(c)) and c in m["arch_lists"]):
                raise MatrixError(f"{w}: {c!r} is not 'cpu' or a CUDA X.Y listed in arch_lists")
        if variants[-1:] != ["cpu"] or variants.count("cpu") != 1:
            raise MatrixError(f"{w}: must end with 'cpu' (every torch ships a CPU build)")
        _ascending(variants[:-1], w)
        if pypi[plat] not in variants:
            raise MatrixError(f"{where}.pypi_cuda.{plat}: {pypi[plat]!r} is not one of {variants}")
    return TorchRelease(
        minor=minor,
        version=version,
        python=tuple(pythons),
        cuda={p: tuple(cuda[p]) for p in m["platforms"]},
        pypi_cuda={p: pypi[p] for p in m["platforms"]},
    )


def parse_matrix(raw: Any) -> Matrix:
    """Validate the JSON data of matrix.json; raise MatrixError naming the bad entry."""
    raw = _obj(raw, "matrix", ["stable_abi", "arch_lists", "platforms", "torch"])
    stable = _obj(
        raw["stable_abi"],
        "stable_abi",
        ["min_torch", "min_python", "build_python", "build_torch_pins", "pypi_default"],
    )
    for key in ("min_torch", "min_python", "build_python"):
        _str(stable[key], f"stable_abi.{key}", _MINOR, "a version like '3.11'")
    pypi = _obj(stable["pypi_default"], "stable_abi.pypi_default", ["variant", "platforms"])
    arch_lists = _map(raw["arch_lists"], "arch_lists")
    for cuda, archs in arch_lists.items():
        _str(cuda, "arch_lists", re.compile(r"^\d+(\.\d+)?$"), "CUDA versions like '13.0'")
        parse_arch_list(_str(archs, f"arch_lists[{cuda!r}]"), cuda, f"arch_lists[{cuda!r}]")
    platforms = _map(raw["platforms"], "platforms")
    for plat in platforms:
        _str(plat, "platforms", re.compile(r"^linux_\w+$"), "names like 'linux_x86_64'")
        _obj(platforms[plat], f"platforms.{plat}", ["runner", "manylinux_image"])
    m = {**raw, "arch_lists": arch_lists, "platforms": platforms}
    torch_raw = _map(raw["torch"], "torch")
    for minor in torch_raw:
        _str(minor, "torch", _MINOR, "torch minors like '2.14'")
    releases = tuple(_parse_torch(k, torch_raw[k], m) for k in sorted(torch_raw, key=vtuple))
    matrix = Matrix(
        torch=releases,
        arch_lists=arch_lists,
        platforms={
            p: {k: v[k] for k in ("runner", "manylinux_image")} for p, v in platforms.items()
        },
        stable_min_torch=stable["min_torch"],
        stable_min_python=stable["min_python"],
        stable_build_python=stable["build_python"],
        stable_pins=_map(stable["build_torch_pins"], "stable_abi.build_torch_pins"),
        pypi_variant=_str(pypi["variant"], "stable_abi.pypi_default.variant"),
        pypi_platforms=tuple(_list(pypi["platforms"], "stable_abi.pypi_default.platforms")),
    )
    _check_stable(matrix)
    return matrix


def _check_stable(m: Matrix) -> None:
    """Every stable variant resolves to a build torch that ships it and the build Python."""
    shipped = {variant_of(c) for t in stable_releases(m) for cs in t.cuda.values() for c in cs}
    for variant, minor in m.stable_pins.items():
        if variant not in shipped:
            raise MatrixError(f"stable_abi.build_torch_pins: no stable torch ships {variant!r}")
        if minor not in {t.minor for t in stable_releases(m)}:
            raise MatrixError(
                f"stable_abi.build_torch_pins.{variant}: {minor!r} is not a stable-ABI torch minor"
            )
    for plat in m.platforms:
        for cuda in _stable_cudas(m, plat):
            torch, variant = stable_build_torch(m, variant_of(cuda)), variant_of(cuda)
            if cuda not in torch.cuda[plat]:
                where = "stable_abi.build_torch_pins"
                raise MatrixError(f"{where}: torch {torch.minor} lacks {variant} on {plat}")
            if m.stable_build_python not in torch.python:
                where, py = "stable_abi.build_python", m.stable_build_python
                raise MatrixError(f"{where}: torch {torch.minor} has no Python {py}")
    if m.pypi_variant not in shipped or not set(m.pypi_platforms) <= set(m.platforms):
        pypi = f"{m.pypi_variant} on {list(m.pypi_platforms)}"
        raise MatrixError(f"stable_abi.pypi_default: {pypi} is not a stable cell")


def load_matrix(path: str | Path | None = None) -> Matrix:
    """Read and validate matrix.json (default: the one next to this script)."""
    path = Path(path) if path else DATA_FILE
    try:
        raw = json.loads(path.read_text())
    except json.JSONDecodeError as e:
        raise MatrixError(f"{path.name}: not valid JSON: {e}") from None
    return parse_matrix(raw)


# ---- expansion ------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Cell:
    """One wheel to build. to_dict() is what `--github` prints per matrix entry."""

    id: str
    abi: str  # "stable" | "classic"
    cuda: str  # "13.0" | "cpu"
    variant: str  # "cu130" | "cpu": the index directory and local-version prefix
    torch: str  # torch version built against
    python: str  # Python version built with
    platform: str  # "linux_x86_64" | "linux_aarch64"
    torch_requirement: str  # PEP 440 specifier the wheel's Requires-Dist states
    python_requirement: str
    arch_list: str  # default TORCH_CUDA_ARCH_LIST, "" for cpu
    local_version: str  # "cu130" (stable) or "cu130torch2.9" (classic)
    wheel_tag: str  # python-abi part of the wheel name: "cp310-abi3" | "cp312-cp312"
    runner: str  # GitHub Actions runs-on label
    manylinux_image: str
    cuda_source: str  # "pypi" (CUDA 13: cuda-toolkit wheels) | "nvidia-repo" (12.x) | "none"
    torch_index_url: str  # where CI installs `torch` from
    pypi_default: bool  # uploaded to PyPI with the local suffix stripped
    release: bool  # in the default release matrix (classic builds for torch >= 2.10 are not)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def variant_of(cuda: str) -> str:
    """'13.0' -> 'cu130', 'cpu' -> 'cpu'."""
    return "cpu" if cuda == "cpu" else "cu" + "".join(cuda.split(".")[:2])


def normalize_cuda(text: str) -> str:
    """Accept '13.0', '13.0.2', 'cu130' or 'cpu'; return '13.0' or 'cpu'."""
    value = text.strip().lower()
    if value == "cpu":
        return "cpu"
    if m := re.fullmatch(r"cu(\d+)(\d)", value):
        return f"{m.group(1)}.{m.group(2)}"
    if m := re.fullmatch(r"(\d+)\.(\d+)(\.\d+)?", value):
        return f"{m.group(1)}.{m.group(2)}"
    raise ValueError(f"CUDA {text!r}: expected e.g. 13.0, cu130 or cpu")


def normalize_platform(text: str) -> str:
    """Accept 'x86_64' or 'linux_x86_64' (also aarch64/arm64); return 'linux_<machine>'."""
    value = text.strip().lower().replace("-", "_").replace("arm64", "aarch64")
    return value if value.startswith("linux_") else f"linux_{value}"


def this_platform() -> str:
    return f"{sys.platform}_{_platform.machine().lower()}"


def stable_releases(m: Matrix) -> list[TorchRelease]:
    return [t for t in m.torch if vtuple(t.minor) >= vtuple(m.stable_min_torch)]


def _stable_cudas(m: Matrix, plat: str) -> list[str]:
    found = {c for t in stable_releases(m) for c in t.cuda[plat]}
    return [*sorted(found - {"cpu"}, key=vtuple), "cpu"] if found else []


def stable_build_torch(m: Matrix, variant: str) -> TorchRelease:
    """The pinned minor, else the newest stable torch that ships `variant` anywhere."""
    if variant in m.stable_pins:
        return m.release(m.stable_pins[variant])
    ships = [
        t
        for t in stable_releases(m)
        if any(variant in map(variant_of, cs) for cs in t.cuda.values())
    ]
    return ships[-1]


def _cell(m: Matrix, *, abi: str, cuda: str, plat: str, torch: TorchRelease, python: str) -> Cell:
    variant, arch = variant_of(cuda), plat.split("_", 1)[1]
    if abi == "stable":
        ident, local = f"stable-{variant}-{arch}", variant
        torch_req, py_req = f">={m.stable_min_torch}", f">={m.stable_min_python}"
        tag = f"cp{m.stable_min_python.replace('.', '')}-abi3"
    else:
        ident = f"classic-torch{torch.minor}-{variant}-py{python}-{arch}"
        local = f"{variant}torch{torch.minor}"
        torch_req, py_req = f"=={torch.minor}.*", f"=={python}.*"
        tag = f"cp{python.replace('.', '')}-cp{python.replace('.', '')}"
    major = 0 if cuda == "cpu" else vtuple(cuda)[0]
    return Cell(
        id=ident,
        abi=abi,
        cuda=cuda,
        variant=variant,
        torch=torch.version,
        python=python,
        platform=plat,
        torch_requirement=torch_req,
        python_requirement=py_req,
        arch_list="" if cuda == "cpu" else m.arch_lists[cuda],
        local_version=local,
        wheel_tag=tag,
        runner=m.platforms[plat]["runner"],
        manylinux_image=m.platforms[plat]["manylinux_image"],
        # CUDA 13 nvcc installs from PyPI; 12.x nvcc only from NVIDIA's package repos.
        cuda_source="none" if cuda == "cpu" else ("pypi" if major >= 13 else "nvidia-repo"),
        torch_index_url=f"{TORCH_INDEX}/{variant}",
        pypi_default=abi == "stable" and variant == m.pypi_variant and plat in m.pypi_platforms,
        release=abi == "stable" or vtuple(torch.minor) < vtuple(m.stable_min_torch),
    )


def expand(matrix: Matrix | None = None, *, include_optional: bool = False) -> list[Cell]:
    """Stable cells, then classic ones: torch < 2.10, plus >= 2.10 if include_optional."""
    m = matrix or load_matrix()
    cells = [
        _cell(
            m,
            abi="stable",
            cuda=c,
            plat=p,
            torch=stable_build_torch(m, variant_of(c)),
            python=m.stable_build_python,
        )
        for p in m.platforms
        for c in _stable_cudas(m, p)
    ]
    for t in m.torch:
        for p in m.platforms:
            cells += [
                _cell(m, abi="classic", cuda=c, plat=p, torch=t, python=py)
                for c in t.cuda[p]
                for py in t.python
            ]
    cells = [c for c in cells if c.release or include_optional]
    ids = [c.id for c in cells]
    assert len(ids) == len(set(ids)), "cell ids must be unique"
    return cells


# ---- selection --------------------------------------------------------------------------


def satisfies(version: str, requirement: str) -> bool:
    """Does `version` meet one of our own specifiers ('>=2.10', '==2.9.*')?"""
    v = vtuple(version)
    if requirement.startswith(">="):
        return v >= vtuple(requirement[2:])
    if requirement.startswith("==") and requirement.endswith(".*"):
        prefix = vtuple(requirement[2:-2])
        return v[: len(prefix)] == prefix
    raise ValueError(f"unsupported requirement {requirement!r}")


def buildable_on(cell: Cell, plat: str) -> bool:
    """A machine builds cpu and CUDA 13.x cells of its platform (12.x nvcc is not on PyPI)."""
    return cell.platform == plat and (cell.cuda == "cpu" or vtuple(cell.cuda)[0] >= 13)


def select(
    cells: Iterable[Cell],
    *,
    abi: str | None = None,
    cuda: str | None = None,
    platform: str | None = None,
    torch: str | None = None,
    python: str | None = None,
    buildable_here: bool = False,
) -> list[Cell]:
    """Cells that match every given filter; torch/python match the cell's requirements."""
    cuda = cuda and normalize_cuda(cuda)
    platform = platform and normalize_platform(platform)
    return [
        c
        for c in cells
        if (abi is None or c.abi == abi)
        and (cuda is None or c.cuda == cuda)
        and (platform is None or c.platform == platform)
        and (torch is None or satisfies(torch, c.torch_requirement))
        and (python is None or satisfies(python, c.python_requirement))
        and (not buildable_here or buildable_on(c, this_platform()))
    ]


def default_abi(torch: str, matrix: Matrix | None = None) -> str:
    """CONTRACT.md: stable when building against torch >= 2.10, else classic."""
    m = matrix or load_matrix()
    return "stable" if vtuple(torch)[:2] >= vtuple(m.stable_min_torch) else "classic"


def find_cell(
    cuda: str,
    torch: str,
    python: str,
    abi: str | None = None,
    platform: str | None = None,
    *,
    matrix: Matrix | None = None,
) -> Cell:
    """The cell whose wheel serves this torch/python/CUDA (optional classic cells included).

    abi defaults as setup.py does; platform defaults to this machine's. A stable cell
    matches every torch/python its requirements accept, so its own `torch`/`python`
    (what CI builds with) may differ from the ones asked for.
    """
    if abi not in (None, "stable", "classic"):
        raise ValueError(f"abi {abi!r}: expected 'stable', 'classic' or None")
    m = matrix or load_matrix()
    want = {
        "abi": abi or default_abi(torch, m),
        "cuda": normalize_cuda(cuda),
        "platform": normalize_platform(platform or this_platform()),
        "torch": torch,
        "python": python,
    }
    cells = expand(m, include_optional=True)
    found = select(cells, **want)
    if len(found) == 1:
        return found[0]
    raise LookupError(_explain(m, cells, want, found))


def _explain(m: Matrix, cells: list[Cell], want: dict[str, str], found: list[Cell]) -> str:
    asked = " ".join(f"{k}={v}" for k, v in want.items())
    if found:
        return f"ambiguous matrix lookup for {asked}: {[c.id for c in found]}"
    lines = [f"no matrix cell for {asked}"]
    minor = ".".join(want["torch"].split(".")[:2])
    known = [t.minor for t in m.torch]
    if minor not in known:
        lines.append(f"  torch {minor} is not in the matrix (it has {', '.join(known)})")
    else:
        t = m.release(minor)
        ships = ", ".join(t.cuda.get(want["platform"], ())) or "nothing"
        pythons = ", ".join(t.python)
        lines.append(f"  torch {minor} ships {ships} on {want['platform']}, for Python {pythons}")

    def misses(c: Cell) -> list[str]:
        checks = [
            (c.abi == want["abi"], f"abi {c.abi}"),
            (c.cuda == want["cuda"], f"cuda {c.cuda}"),
            (c.platform == want["platform"], f"platform {c.platform}"),
            (satisfies(want["torch"], c.torch_requirement), f"torch {c.torch_requirement}"),
            (satisfies(want["python"], c.python_requirement), f"python {c.python_requirement}"),
        ]
        return [why for ok, why in checks if not ok]

    closest = sorted(cells, key=lambda c: len(misses(c)))[:5]
    lines.append("  closest cells (and how they differ):")
    lines += [f"    {c.id}: {', '.join(misses(c))}" for c in closest]
    return "\n".join(lines)


# ---- rendering ----------------------------------------------------------------------


def format_table(cells: Sequence[Cell]) -> str:
    cols = ["id", "torch", "python", "torch_requirement", "python_requirement", "arch_list"]
    rows = [cols] + [[str(getattr(c, k)) for k in cols] for c in cells]
    widths = [max(len(r[i]) for r in rows) for i in range(len(cols))]
    lines = ["  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    return "\n".join(lines) + f"\n{len(cells)} cells"


def _span(versions: Sequence[str]) -> str:
    return versions[0] if len(versions) == 1 else f"{versions[0]}-{versions[-1]}"


def install_table(m: Matrix) -> str:
    """Markdown: for each torch minor and variant, the fusedops wheel and index to use."""
    head = ["torch", "Python", "torch's CUDA variant", "platforms", "fusedops wheel", "index URL"]
    rows = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for t in reversed(m.torch):
        stable = vtuple(t.minor) >= vtuple(m.stable_min_torch)
        for cuda in dict.fromkeys(c for p in m.platforms for c in t.cuda[p]):
            variant = variant_of(cuda)
            plats = [p for p in m.platforms if cuda in t.cuda[p]]
            pypi = [p.split("_", 1)[1] for p in plats if t.pypi_cuda[p] == cuda]
            shown = variant + (f" (torch's PyPI default on {', '.join(pypi)})" if pypi else "")
            wheel = (
                f"`+{variant}`, cp310-abi3"
                if stable
                else f"`+{variant}torch{t.minor}`, one per Python"
            )
            arches = ", ".join(p.split("_", 1)[1] for p in plats)
            cols = [t.minor, _span(t.python), shown, arches, wheel, f"`<base>/{variant}/`"]
            rows.append("| " + " | ".join(cols) + " |")
    return "\n".join(rows)


# ---- command line -------------------------------------------------------------------


def _arg(parse: Callable[[str], str]) -> Callable[[str], str]:
    """argparse shows an ArgumentTypeError's message; a ValueError's it replaces."""

    def convert(text: str) -> str:
        try:
            return parse(text)
        except ValueError as e:
            raise argparse.ArgumentTypeError(str(e)) from None

    return convert


def _version(text: str) -> str:
    vtuple(text)
    return text


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    out = p.add_mutually_exclusive_group()
    out.add_argument("--github", action="store_true", help='print {"include": [cells]} on one line')
    out.add_argument(
        "--find", action="store_true", help="print the one cell for --cuda/--torch/--python"
    )
    out.add_argument("--install-table", action="store_true", help="print the user table (markdown)")
    p.add_argument("--abi", choices=["stable", "classic", "all"], default="all")
    p.add_argument(
        "--include-classic-for-stable",
        action="store_true",
        help="add the optional classic cells for torch >= 2.10 (not in the release matrix)",
    )
    p.add_argument("--cuda", type=_arg(normalize_cuda), help="13.0, cu130 or cpu")
    p.add_argument("--platform", type=normalize_platform, help="linux_x86_64, aarch64, ...")
    p.add_argument("--torch", type=_arg(_version), help="cells whose wheel serves this torch")
    p.add_argument("--python", type=_arg(_version), help="cells whose wheel serves this Python")
    p.add_argument(
        "--buildable-here", action="store_true", help="only cells this machine can build"
    )
    p.add_argument(
        "--data",
        type=Path,
        default=DATA_FILE,
        help="matrix JSON (default: matrix.json next to this script)",
    )
    args = p.parse_args(argv)
    if args.find and not (args.cuda and args.torch and args.python):
        p.error("--find needs --cuda, --torch and --python")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    abi = None if args.abi == "all" else args.abi
    try:
        m = load_matrix(args.data)
        if args.find:
            cell = find_cell(args.cuda, args.torch, args.python, abi, args.platform, matrix=m)
            print(json.dumps(cell.to_dict(), indent=2))
            return 0
        if args.install_table:
            print(install_table(m))
            return 0
        cells = select(
            expand(m, include_optional=args.include_classic_for_stable),
            abi=abi,
            cuda=args.cuda,
            platform=args.platform,
            torch=args.torch,
            python=args.python,
            buildable_here=args.buildable_here,
        )
    except (MatrixError, LookupError) as e:
        print(f"matrix.py: {e}", file=sys.stderr)
        return 2
    if not cells:
        hint = (
            ""
            if args.include_classic_for_stable
            else " (classic cells for torch >= 2.10 need --include-classic-for-stable)"
        )
        print(f"matrix.py: no cell matches these filters{hint}", file=sys.stderr)
        return 1
    if args.github:
        if len(cells) > GITHUB_MAX_JOBS:
            limit = f"GitHub's {GITHUB_MAX_JOBS}-job limit"
            print(f"matrix.py: {len(cells)} cells exceed {limit}; filter more", file=sys.stderr)
            return 1
        print(json.dumps({"include": [c.to_dict() for c in cells]}, separators=(",", ":")))
    else:
        print(format_table(cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
