"""The rules the installed package and the build pipeline share, defined once.

A *variant* names what a wheel's kernels were compiled for: ``cpu`` or a CUDA
toolkit ``cuXY`` (``cu130`` is CUDA 13.0). It is the local version prefix
(``0.1.0+cu130``) and the directory of the per-variant pip index. The
*local version* adds the torch minor for classic-ABI wheels, whose C++ ABI
changes with every torch release (``0.1.0+cu130torch2.9``).

This module is standard library only and imports nothing from fusedops: the
build pipeline (``pipeline/``) loads it by file path, so both sides ask the
same functions and no rule is kept twice by hand.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# torch >= 2.10 carries the LibTorch stable ABI that stable wheels target.
STABLE_ABI_MIN_TORCH = (2, 10)
# TORCH_TARGET_VERSION for that floor: 0xMMmmPP... (2.10.0). 0x0210... would mean 2.16.
STABLE_TARGET_VERSION = "0x020a000000000000"
# CPython's limited API floor of stable wheels: the tag cp310-abi3.
STABLE_MIN_PYTHON = (3, 10)

# cu130 -> 13.0, cu128 -> 12.8: the last digit is the minor, the major has two digits
# (CUDA >= 10), so "cu13" is an error rather than CUDA 1.3.
_VARIANT = re.compile(r"^(?:cpu|cu(\d{2,})(\d))$")
_CUDA = re.compile(r"^(\d+)\.(\d+)(?:\.\d+)*$")
# PEP 440's release segment at the start of a version, e.g. "2.14.1" in
# "2.14.1rc1+cu130"; the package cannot depend on `packaging` at run time.
_RELEASE = re.compile(r"^\s*v?(\d+(?:\.\d+)*)")


@dataclass(frozen=True, order=True)
class Variant:
    """``cpu`` or a CUDA toolkit version. ``Variant.parse(str(v)) == v`` for every v."""

    cuda: tuple[int, int] | None  # None for the CPU variant

    @classmethod
    def parse(cls, text: str) -> Variant:
        """'cu130' -> CUDA 13.0, 'cpu' -> CPU. Also accepts a CUDA version, '13.0'."""
        value = text.strip().lower()
        if value == "cpu":
            return cls(None)
        if m := _VARIANT.match(value):
            return cls((int(m.group(1)), int(m.group(2))))
        if m := _CUDA.match(value):
            return cls((int(m.group(1)), int(m.group(2))))
        raise ValueError(f"variant {text!r}: expected 'cpu', 'cuXY' (cu130) or a CUDA X.Y (13.0)")

    @classmethod
    def of_torch(cls, torch_cuda: str | None) -> Variant:
        """The variant of a torch build from `torch.version.cuda` (None: a CPU build)."""
        return cls(None) if not torch_cuda else cls.parse(torch_cuda)

    @property
    def is_cpu(self) -> bool:
        return self.cuda is None

    @property
    def cuda_version(self) -> str | None:
        """'13.0', or None for cpu."""
        return None if self.cuda is None else f"{self.cuda[0]}.{self.cuda[1]}"

    @property
    def cuda_major(self) -> int | None:
        return None if self.cuda is None else self.cuda[0]

    @property
    def family(self) -> str:
        """The library family a multi-variant wheel selects by: 'cpu', 'cu12', 'cu13'."""
        return "cpu" if self.cuda is None else f"cu{self.cuda[0]}"

    def __str__(self) -> str:
        return "cpu" if self.cuda is None else f"cu{self.cuda[0]}{self.cuda[1]}"


def release(version: str) -> tuple[int, ...]:
    """The release numbers of a PEP 440 version: '2.14.1rc1+cu130' -> (2, 14, 1)."""
    m = _RELEASE.match(version)
    if not m:
        raise ValueError(f"not a version: {version!r}")
    return tuple(int(p) for p in m.group(1).split("."))


def minor_of(version: str) -> tuple[int, int]:
    """'2.14.1+cu130' -> (2, 14)."""
    parts = (*release(version), 0)
    return parts[0], parts[1]


def default_abi(torch_version: str) -> str:
    """The ABI a build against this torch gets by default."""
    return "stable" if minor_of(torch_version) >= STABLE_ABI_MIN_TORCH else "classic"


def local_version(variant: Variant, abi: str, torch_version: str) -> str:
    """The local version label: 'cu130' (stable) or 'cu130torch2.9' (classic)."""
    if abi == "stable":
        return str(variant)
    if abi == "classic":
        major, minor = minor_of(torch_version)
        return f"{variant}torch{major}.{minor}"
    raise ValueError(f"abi {abi!r}: expected 'stable' or 'classic'")


def torch_requirement(abi: str, torch_version: str) -> str:
    """The specifier of a wheel's `Requires-Dist: torch`."""
    if abi == "stable":
        return ">={}.{}".format(*STABLE_ABI_MIN_TORCH)
    major, minor = minor_of(torch_version)
    return f"=={major}.{minor}.*"


def find_links_page(variant: Variant, torch_version: str) -> str:
    """The find-links page (under the index root) of one torch minor's wheels.

    Classic wheels are listed there, not in the per-variant index: PEP 440 orders
    '+cu130torch2.9' above '+cu130', so pip would pick a wheel for another torch.
    """
    major, minor = minor_of(torch_version)
    return f"whl/torch-{major}.{minor}.0+{variant}.html"
