"""Does this fusedops build fit the installed torch and GPU? Pure functions.

The loader calls `check_torch` before loading the library, so a mismatch is an
ImportError that names both builds and the pip command for the right wheel,
never a bare "undefined symbol". `doctor` calls the same functions. Everything
here takes plain values (no torch import) so it is tested without a GPU or a
second torch.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from . import _variant
from ._variant import STABLE_ABI_MIN_TORCH, Variant

# Where the per-CUDA indexes are published (docs/INSTALL.md); override for mirrors.
DEFAULT_INDEX_URL = "https://fusedops.github.io/fusedops"


def index_url() -> str:
    return os.environ.get("FUSEDOPS_INDEX_URL", DEFAULT_INDEX_URL).rstrip("/")


def wheel_for(base_version: str, torch_version: str, torch_cuda: str | None) -> str:
    """The fusedops version (with local suffix) that fits this torch."""
    abi = _variant.default_abi(torch_version)
    variant = Variant.of_torch(torch_cuda)
    return f"{base_version}+{_variant.local_version(variant, abi, torch_version)}"


def pip_command(base_version: str, torch_version: str, torch_cuda: str | None) -> str:
    """The pip command that installs the right wheel without touching torch.

    Stable wheels live in the per-variant index; classic wheels (torch < 2.10)
    only on their torch's find-links page, which the variant index does not list.
    """
    version = wheel_for(base_version, torch_version, torch_cuda)
    variant = Variant.of_torch(torch_cuda)
    if _variant.default_abi(torch_version) == "stable":
        where = f"--index-url {index_url()}/{variant}"
    else:
        where = f"-f {index_url()}/{_variant.find_links_page(variant, torch_version)}"
    return f'pip install --force-reinstall --no-deps "fusedops=={version}" {where}'


def reinstall_command(version: str | None) -> str:
    """The pip command that puts back the same fusedops build (a damaged install)."""
    if not version:
        return "pip install --force-reinstall --no-deps fusedops"
    local = version.partition("+")[2]
    match = re.match(r"cu\d+|cpu", local)
    if not match:  # the public (PyPI) version
        return f'pip install --force-reinstall --no-deps "fusedops=={version}"'
    return (
        f'pip install --force-reinstall --no-deps "fusedops=={version}" '
        f"--index-url {index_url()}/{match.group(0)}"
    )


# The one PyPI wheel carries a library per family (fusedops/_lib/<family>/); this
# variable forces one instead of the family of torch.version.cuda.
VARIANT_ENV = "FUSEDOPS_VARIANT"
_FAMILY = re.compile(r"^(cpu|cu\d{2,})$")


@dataclass(frozen=True)
class Selection:
    """Which library of the wheel to load, and why."""

    family: str | None  # None: a wheel with a single library (fusedops/_C*.so)
    info: dict[str, Any]  # the build info of that library
    why: str
    forced: bool = False  # chosen by FUSEDOPS_VARIANT


class SelectionError(ValueError):
    """No library of this wheel fits; the message says which exist and what to do."""


def select_library(
    info: Mapping[str, Any], torch_cuda: str | None, override: str | None
) -> Selection:
    """Pick the library to load before anything is loaded (a CUDA library cannot load into a CPU torch)."""
    parts = info.get("variants")
    if not parts:
        note = f" ({VARIANT_ENV} ignored: this wheel has one library)" if override else ""
        return Selection(None, dict(info), f"the wheel's only library{note}")
    available = sorted(parts)
    if override:
        family = override.strip().lower()
        if not _FAMILY.match(family):
            raise SelectionError(
                f"{VARIANT_ENV}={override!r} is not a library family: use one of "
                f"{', '.join(available)} (or unset it to follow torch)"
            )
        if family not in parts:
            raise SelectionError(
                f"{VARIANT_ENV}={override} asks for a library this wheel does not carry; it has "
                f"{', '.join(available)} (unset {VARIANT_ENV} to follow torch)"
            )
        why, forced = f"{VARIANT_ENV}={override}", True
    else:
        family = Variant.of_torch(torch_cuda).family
        why = f"torch.version.cuda is {torch_cuda}" if torch_cuda else "torch is a CPU-only build"
        forced = False
        if family not in parts:
            raise SelectionError(
                f"this fusedops wheel carries libraries for {', '.join(available)}, but {why}, "
                f"which needs {family}"
            )
    return Selection(family, {**parts[family], "version": info["version"]}, why, forced)


def describe_build(info: Mapping[str, object]) -> str:
    cuda = f"CUDA {info['cuda']}" if info.get("cuda") else "CPU only"
    return f"fusedops {info['version']} ({info['abi']} ABI, built against torch {info['torch']}, {cuda})"


def describe_torch(torch_version: str, torch_cuda: str | None) -> str:
    return f"torch {torch_version} ({'CUDA ' + torch_cuda if torch_cuda else 'CPU only'})"


def torch_mismatch(
    info: Mapping[str, object], torch_version: str, torch_cuda: str | None
) -> str | None:
    """Why this build cannot load into this torch, or None when it can."""
    built = _variant.minor_of(str(info["torch"]))
    running = _variant.minor_of(torch_version)
    if info["abi"] == "stable" and running < STABLE_ABI_MIN_TORCH:
        return "this stable-ABI wheel needs torch >= 2.10"
    if info["abi"] == "classic" and running != built:
        return (
            f"this classic-ABI wheel was compiled for torch {built[0]}.{built[1]}.x only "
            "(its C++ ABI changes with every torch minor release)"
        )
    wheel_cuda = info.get("cuda")
    if wheel_cuda and not torch_cuda:
        return "this wheel has CUDA kernels but the installed torch is a CPU-only build"
    if wheel_cuda and torch_cuda and str(wheel_cuda).split(".")[0] != torch_cuda.split(".")[0]:
        return (
            f"this wheel was built for CUDA {wheel_cuda} but torch uses CUDA {torch_cuda}; "
            "CUDA major versions do not mix"
        )
    return None


def mismatch_message(
    info: Mapping[str, object], torch_version: str, torch_cuda: str | None, reason: str
) -> str:
    base = str(info["version"]).split("+")[0]
    return (
        f"fusedops cannot load: {reason}.\n"
        f"  installed wheel: {describe_build(info)}\n"
        f"  installed torch: {describe_torch(torch_version, torch_cuda)}\n"
        f"  fix: {pip_command(base, torch_version, torch_cuda)}\n"
        "  (or run `python -m fusedops doctor` for the full report)"
    )


@dataclass(frozen=True)
class ArchVerdict:
    covered: bool
    how: str  # "SASS sm_90", "PTX compute_80 (JIT)", or why not


def _arch_tuple(arch: str) -> tuple[int, int]:
    major, minor = arch.removesuffix("+PTX").split(".")
    return int(major), int(minor)


def arch_coverage(capability: tuple[int, int], arch_list: Sequence[str]) -> ArchVerdict:
    """Can a GPU of this compute capability run code from this arch list?

    SASS for sm_XY runs on sm_XZ with Z >= Y (same major); PTX for compute_XY
    is compiled by the driver for any newer GPU.
    """
    if not arch_list:
        return ArchVerdict(False, "this build has no CUDA kernels (CPU-only wheel)")
    sass = [_arch_tuple(a) for a in arch_list]
    exact = [a for a in sass if a[0] == capability[0] and a[1] <= capability[1]]
    if exact:
        best = max(exact)
        return ArchVerdict(True, f"SASS sm_{best[0]}{best[1]}")
    ptx = [_arch_tuple(a) for a in arch_list if a.endswith("+PTX")]
    usable = [a for a in ptx if a <= capability]
    if usable:
        best = max(usable)
        return ArchVerdict(
            True, f"PTX compute_{best[0]}{best[1]} (compiled by the driver at first use)"
        )
    archs = " ".join(arch_list)
    return ArchVerdict(
        False,
        f"GPU compute capability {capability[0]}.{capability[1]} is not covered by this "
        f"wheel's archs ({archs})",
    )
