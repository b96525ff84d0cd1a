"""What a setup.py build produces: a Cell (ABI, variant, torch, archs) plus notes.

Pure functions of (torch version, torch's CUDA, toolkit, environment, matrix),
so every rule and every error message is unit-tested without compiling.
setup.py learns the cell in one of two ways:
- FUSEDOPS_CELL=<cell id> (what the pipeline, nox and cibuildwheel pass): the
  cell from matrix.json, checked against the torch and toolkit actually present;
- the knobs (FUSEDOPS_ABI, FUSEDOPS_CUDA, TORCH_CUDA_ARCH_LIST) for a plain
  `pip wheel --no-build-isolation .`: the cell is derived from what is installed.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from packaging.version import InvalidVersion, Version

from . import matrix as matrix_mod
from .archs import ArchList, ArchListError
from .cell import Cell, Platform
from .rules import STABLE_ABI_MIN_TORCH, Variant, default_abi

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


class ConfigError(ValueError):
    """The build was asked for something it cannot produce."""


def env_flag(env: Mapping[str, str], name: str) -> bool | None:
    """True/False for an explicit setting, None when unset. '0' means off."""
    value = env.get(name)
    if value is None or value == "":
        return None
    low = value.strip().lower()
    if low in _TRUE:
        return True
    if low in _FALSE:
        return False
    raise ConfigError(f"{name}={value!r}: expected one of 1/0, true/false, yes/no, on/off")


@dataclass(frozen=True)
class BuildPlan:
    cell: Cell
    base_version: str
    notes: tuple[str, ...] = field(default_factory=tuple)  # printed by setup.py

    @property
    def version(self) -> str:
        return self.cell.version(self.base_version)

    @property
    def requirement(self) -> str:
        return "torch" + self.cell.torch_requirement

    def build_info(self, git_sha: str | None) -> dict[str, object]:
        """What the loader and `doctor` read back (src/fusedops/_build_info.py)."""
        c = self.cell
        return {
            "version": self.version,
            "torch": str(c.torch),
            "cuda": c.variant.cuda_version,
            "variant": str(c.variant),
            "abi": c.abi,
            "arch_list": c.archs.as_list() if c.archs else [],
            "git_sha": git_sha,
        }


def _torch(version: str) -> Version:
    try:
        return Version(Version(version).public)
    except InvalidVersion:
        raise ConfigError(
            f"torch reports version {version!r}, which is not a PEP 440 version"
        ) from None


def _variant(
    env: Mapping[str, str],
    torch_version: str,
    torch_cuda: str | None,
    toolkit: str | None,
    notes: list[str],
) -> Variant:
    want = env_flag(env, "FUSEDOPS_CUDA")
    if want is False:
        return Variant(None)
    if toolkit is None:
        if want:
            raise ConfigError(
                "FUSEDOPS_CUDA=1 but no CUDA toolkit was found (set CUDA_HOME, put nvcc on PATH, or install /usr/local/cuda)"
            )
        notes.append("no CUDA toolkit found: building a CPU-only (+cpu) wheel")
        return Variant(None)
    if torch_cuda is None:
        if want:
            raise ConfigError(
                f"FUSEDOPS_CUDA=1 but torch {torch_version} is a CPU-only build; install a CUDA build of torch to build CUDA kernels"
            )
        notes.append(f"torch {torch_version} is CPU-only: building a CPU-only (+cpu) wheel")
        return Variant(None)
    kit, theirs = Variant.parse(toolkit), Variant.parse(torch_cuda)
    if kit.cuda_major != theirs.cuda_major:
        raise ConfigError(
            f"CUDA toolkit {toolkit} and torch's CUDA {torch_cuda} differ in major version; torch refuses "
            f"to mix them. Use a toolkit of CUDA {theirs.cuda_major}.x (CUDA_HOME=...) or FUSEDOPS_CUDA=0"
        )
    if kit != theirs:
        notes.append(
            f"toolkit CUDA {toolkit} vs torch CUDA {torch_cuda}: minor versions of one major mix at run time"
        )
    return kit


def _from_knobs(m, env, torch: Version, torch_cuda, toolkit, notes, python: str) -> Cell:
    abi = env.get("FUSEDOPS_ABI", "").strip().lower() or default_abi(str(torch))
    if abi not in ("stable", "classic"):
        raise ConfigError(f"FUSEDOPS_ABI={env['FUSEDOPS_ABI']!r}: expected 'stable' or 'classic'")
    if abi == "stable" and (torch.major, torch.minor) < STABLE_ABI_MIN_TORCH:
        raise ConfigError(
            f"FUSEDOPS_ABI=stable needs torch >= {'.'.join(map(str, STABLE_ABI_MIN_TORCH))} to build against, "
            f"found {torch}; use FUSEDOPS_ABI=classic or a newer torch"
        )
    variant = _variant(env, str(torch), torch_cuda, toolkit, notes)
    plat = matrix_mod.this_platform()
    platform = m.platforms.get(plat) or Platform(plat, runner="", manylinux_image="")
    kit = None if variant.is_cpu else m.toolkit(variant.cuda_version)
    return Cell(
        abi, variant, torch, python, platform, kit.archs if kit else None, kit.gcc if kit else None
    )


def _from_cell_id(m, cell_id: str, torch: Version, torch_cuda, toolkit, python: str) -> Cell:
    try:
        cell = matrix_mod.by_id(cell_id, m)
    except LookupError as err:
        raise ConfigError(f"FUSEDOPS_CELL={cell_id}: {err}") from None
    if not cell.variant.is_cpu:
        if toolkit is None or Variant.parse(toolkit) != cell.variant:
            raise ConfigError(
                f"cell {cell_id} needs CUDA {cell.cuda}, but the toolkit found is {toolkit or 'none'}; set CUDA_HOME"
            )
        if torch_cuda is None or Variant.parse(torch_cuda).cuda_major != cell.variant.cuda_major:
            raise ConfigError(
                f"cell {cell_id} needs a CUDA {cell.variant.cuda_major}.x torch, found torch {torch} ({torch_cuda or 'CPU only'})"
            )
    if cell.abi == "classic" and (torch.major, torch.minor) != (cell.torch.major, cell.torch.minor):
        raise ConfigError(
            f"cell {cell_id} builds against torch {cell.torch_minor}.x, found torch {torch}"
        )
    if cell.abi == "stable" and (torch.major, torch.minor) < STABLE_ABI_MIN_TORCH:
        raise ConfigError(
            f"cell {cell_id} is a stable-ABI cell and needs torch >= 2.10, found {torch}"
        )
    return cell.built_with(torch=str(torch), python=python)


def decide(
    *,
    base_version: str,
    torch_version: str,
    torch_cuda: str | None,
    toolkit_version: str | None,
    env: Mapping[str, str],
    matrix: matrix_mod.Matrix | None = None,
    python: str | None = None,
) -> BuildPlan:
    """The build plan, or ConfigError saying what to change."""
    m = matrix or matrix_mod.load()
    torch = _torch(torch_version)
    python = python or "{}.{}".format(*sys.version_info[:2])
    notes: list[str] = []
    cell_id = env.get("FUSEDOPS_CELL", "").strip()
    if cell_id:
        cell = _from_cell_id(m, cell_id, torch, torch_cuda, toolkit_version, python)
    else:
        cell = _from_knobs(m, env, torch, torch_cuda, toolkit_version, notes, python)
    requested = env.get("TORCH_CUDA_ARCH_LIST", "").strip()
    if requested and not cell.variant.is_cpu:
        try:
            archs = ArchList.parse(requested)
            archs.check_cuda(cell.variant.cuda)
        except ArchListError as err:
            raise ConfigError(f"TORCH_CUDA_ARCH_LIST={requested!r}: {err}") from None
        cell = replace(cell, archs=archs)
    return BuildPlan(cell=cell, base_version=base_version, notes=tuple(notes))
