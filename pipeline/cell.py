"""One wheel to build: a matrix cell. Every derived fact is a property, never a copy.

A Cell is built by pipeline.matrix from matrix.json; `to_github()` is what
`scripts/matrix.py --github` prints for a GitHub Actions job. Everything
downstream (toolchain, setup.py, repair, gate, index) takes the Cell and asks
it; only its id crosses process boundaries (FUSEDOPS_CELL), and the receiving
side looks the cell up again in the same data.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from packaging.version import Version

from . import rules
from .archs import ArchList
from .rules import Variant

TORCH_INDEX = "https://download.pytorch.org/whl"
# CUDA majors whose nvcc installs from PyPI (cuda-toolkit wheels). 12.x PyPI
# wheels ship ptxas only: those toolkits come from NVIDIA's package repository.
PYPI_NVCC_MAJORS = frozenset({13})
PROJECT = "fusedops"


@dataclass(frozen=True)
class Platform:
    name: str  # "linux_x86_64"
    runner: str  # GitHub Actions runs-on label
    manylinux_image: str  # the container cibuildwheel builds in (pinned)

    @property
    def machine(self) -> str:
        return self.name.split("_", 1)[1]


@dataclass(frozen=True)
class Cell:
    abi: str  # "stable" | "classic"
    variant: Variant
    torch: Version  # the torch built against
    python: str  # "3.11": the interpreter built with
    platform: Platform
    archs: ArchList | None  # None for cpu
    gcc: int | None  # GCC major the CUDA compile uses; None for cpu
    pypi_part: bool = False  # its library is one of the PyPI wheel's (pipeline/pypi_wheel.py)
    release: bool = True  # in the default release matrix
    # The torches the GPU job tests the wheel with: a stable wheel at the oldest
    # torch it claims to serve (of its variant) and at its build torch.
    test_torches: tuple[str, ...] = ()

    # ---- identity ------------------------------------------------------------
    @property
    def id(self) -> str:
        if self.abi == "stable":
            return f"stable-{self.variant}-{self.platform.machine}"
        return f"classic-torch{self.torch_minor}-{self.variant}-py{self.python}-{self.platform.machine}"

    @property
    def cuda(self) -> str:
        """'13.0' or 'cpu'."""
        return self.variant.cuda_version or "cpu"

    @property
    def torch_minor(self) -> str:
        return f"{self.torch.major}.{self.torch.minor}"

    # ---- the wheel -----------------------------------------------------------
    @property
    def local_version(self) -> str:
        return rules.local_version(self.variant, self.abi, str(self.torch))

    def version(self, base: str | None = None) -> str:
        return f"{base or rules.base_version()}+{self.local_version}"

    @property
    def python_tag(self) -> str:
        if self.abi == "stable":
            return "cp{}{}".format(*rules.STABLE_MIN_PYTHON)
        return "cp" + self.python.replace(".", "")

    @property
    def wheel_tag(self) -> str:
        """python-abi part of the wheel name: 'cp310-abi3' or 'cp312-cp312'."""
        return f"{self.python_tag}-{'abi3' if self.abi == 'stable' else self.python_tag}"

    def wheel_prefix(self, base: str | None = None) -> str:
        """The wheel filename up to its platform tag, which the repair decides."""
        return f"{PROJECT}-{self.version(base)}-{self.wheel_tag}-"

    def wheel_filename(self, platform_tag: str, base: str | None = None) -> str:
        return f"{self.wheel_prefix(base)}{platform_tag}.whl"

    @property
    def torch_requirement(self) -> str:
        return rules.torch_requirement(self.abi, str(self.torch))

    @property
    def python_requirement(self) -> str:
        if self.abi == "stable":
            return ">={}.{}".format(*rules.STABLE_MIN_PYTHON)
        return f"=={self.python}.*"

    @property
    def index_dir(self) -> str:
        """The per-variant index directory its wheel is listed in ('cu130')."""
        return str(self.variant)

    # ---- the toolchain -------------------------------------------------------
    @property
    def torch_index_url(self) -> str:
        return f"{TORCH_INDEX}/{self.variant}"

    @property
    def toolkit_source(self) -> str:
        """'pypi' (CUDA 13 nvcc wheels), 'nvidia-repo' (12.x, in the container) or 'none'."""
        if self.variant.is_cpu:
            return "none"
        return "pypi" if self.variant.cuda_major in PYPI_NVCC_MAJORS else "nvidia-repo"

    # ---- variations and output ----------------------------------------------
    def built_with(self, *, torch: str | None = None, python: str | None = None) -> Cell:
        """The same cell built against another torch/Python its wheel serves."""
        return replace(
            self,
            torch=Version(torch) if torch else self.torch,
            python=python or self.python,
        )

    def to_github(self) -> dict[str, Any]:
        """One GitHub Actions matrix entry (flat strings; the cell id is the key)."""
        out: dict[str, Any] = {
            "id": self.id,
            "abi": self.abi,
            "cuda": self.cuda,
            "variant": str(self.variant),
            "torch": str(self.torch),
            "python": self.python,
            "platform": self.platform.name,
            "torch_requirement": self.torch_requirement,
            "python_requirement": self.python_requirement,
            "local_version": self.local_version,
            "wheel_tag": self.wheel_tag,
            "arch_list": str(self.archs) if self.archs else "",
            "runner": self.platform.runner,
            "manylinux_image": self.platform.manylinux_image,
            "pypi_part": self.pypi_part,
            "test_torch": list(self.test_torches or (str(self.torch),)),
        }
        if self.gcc is not None:
            out["gcc"] = self.gcc
        return out
