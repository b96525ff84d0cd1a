"""Decide what a build produces: ABI, CUDA variant, version string, torch pin.

Pure functions of (torch version, torch's CUDA, toolkit, environment), so every
rule and every error message is unit-tested without compiling (tests/build).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

# torch >= 2.10 has the LibTorch stable ABI we target (TORCH_TARGET_VERSION).
STABLE_ABI_MIN_TORCH = (2, 10)
# 0xMMmmPP... : major 2, minor 10 (0x0a), patch 0. 0x0210... would mean 2.16.
STABLE_TARGET_VERSION = "0x020a000000000000"

MATRIX_FILE = Path(__file__).resolve().parent.parent / "scripts" / "matrix.json"

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


class ConfigError(ValueError):
    """The build was asked for something it cannot produce."""


def parse_version(text: str) -> tuple[int, int, int]:
    """'2.14.1+cu130' -> (2, 14, 1). Compare versions as tuples, never strings."""
    core = text.split("+")[0]
    parts = []
    for piece in core.split(".")[:3]:
        digits = "".join(ch for ch in piece if ch.isdigit()) or "0"
        parts.append(int(digits))
    while len(parts) < 3:
        parts.append(0)
    return parts[0], parts[1], parts[2]


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


def default_arch_list(cuda_version: str, matrix_file: Path = MATRIX_FILE) -> str:
    """TORCH_CUDA_ARCH_LIST for a CUDA version, from the matrix data."""
    table = json.loads(matrix_file.read_text())["arch_lists"]
    major_minor = ".".join(cuda_version.split(".")[:2])
    if major_minor in table:
        return table[major_minor]
    major = major_minor.split(".")[0]
    if major in table:
        return table[major]
    raise ConfigError(
        f"no default arch list for CUDA {cuda_version} in {matrix_file.name}; "
        "set TORCH_CUDA_ARCH_LIST or add the CUDA version to the matrix"
    )


def validate_arch_list(arch_list: str, cuda_version: str) -> tuple[str, ...]:
    archs = tuple(arch_list.replace(";", " ").split())
    if not archs:
        raise ConfigError("TORCH_CUDA_ARCH_LIST is empty")
    for arch in archs:
        base = arch.removesuffix("+PTX")
        try:
            major, minor = (int(p) for p in base.split("."))
        except ValueError:
            raise ConfigError(
                f"TORCH_CUDA_ARCH_LIST entry {arch!r} is not of the form 8.0 or 9.0+PTX"
            ) from None
        if int(cuda_version.split(".")[0]) >= 13 and (major, minor) < (7, 5):
            raise ConfigError(f"CUDA {cuda_version} cannot target sm_{major}{minor} (needs >= 7.5)")
    return archs


@dataclass(frozen=True)
class BuildConfig:
    base_version: str
    abi: str  # "stable" | "classic"
    torch_version: str  # the torch built against, e.g. "2.14.1"
    cuda: str | None  # toolkit version "13.0", None for a CPU-only build
    arch_list: tuple[str, ...] = field(default_factory=tuple)
    notes: tuple[str, ...] = field(default_factory=tuple)  # printed by setup.py

    @property
    def variant(self) -> str:
        if self.cuda is None:
            return "cpu"
        major, minor = self.cuda.split(".")[:2]
        return f"cu{major}{minor}"

    @property
    def torch_minor(self) -> str:
        major, minor, _ = parse_version(self.torch_version)
        return f"{major}.{minor}"

    @property
    def local_version(self) -> str:
        if self.abi == "stable":
            return self.variant
        return f"{self.variant}torch{self.torch_minor}"

    @property
    def version(self) -> str:
        return f"{self.base_version}+{self.local_version}"

    @property
    def torch_requirement(self) -> str:
        if self.abi == "stable":
            return "torch>={}.{}".format(*STABLE_ABI_MIN_TORCH)
        return f"torch=={self.torch_minor}.*"

    def build_info(self, git_sha: str | None) -> dict[str, object]:
        """What the loader and `doctor` read back (src/fusedops/_build_info.py)."""
        return {
            "version": self.version,
            "torch": self.torch_version,
            "cuda": self.cuda,
            "variant": self.variant,
            "abi": self.abi,
            "arch_list": list(self.arch_list),
            "git_sha": git_sha,
        }


def decide(
    *,
    base_version: str,
    torch_version: str,
    torch_cuda: str | None,
    toolkit_version: str | None,
    env: Mapping[str, str],
    matrix_file: Path = MATRIX_FILE,
) -> BuildConfig:
    """The build configuration, or ConfigError saying what to change."""
    torch_v = parse_version(torch_version)
    notes: list[str] = []

    abi = env.get("FUSEDOPS_ABI", "").strip().lower() or (
        "stable" if torch_v[:2] >= STABLE_ABI_MIN_TORCH else "classic"
    )
    if abi not in ("stable", "classic"):
        raise ConfigError(f"FUSEDOPS_ABI={env['FUSEDOPS_ABI']!r}: expected 'stable' or 'classic'")
    if abi == "stable" and torch_v[:2] < STABLE_ABI_MIN_TORCH:
        raise ConfigError(
            f"FUSEDOPS_ABI=stable needs torch >= 2.10 to build against, found {torch_version}; "
            "use FUSEDOPS_ABI=classic or a newer torch"
        )

    want_cuda = env_flag(env, "FUSEDOPS_CUDA")
    cuda: str | None = None
    if want_cuda is not False:
        if toolkit_version is None:
            if want_cuda:
                raise ConfigError(
                    "FUSEDOPS_CUDA=1 but no CUDA toolkit was found "
                    "(set CUDA_HOME, put nvcc on PATH, or install /usr/local/cuda)"
                )
            notes.append("no CUDA toolkit found: building a CPU-only (+cpu) wheel")
        elif torch_cuda is None:
            if want_cuda:
                raise ConfigError(
                    f"FUSEDOPS_CUDA=1 but torch {torch_version} is a CPU-only build; "
                    "install a CUDA build of torch to build CUDA kernels"
                )
            notes.append(f"torch {torch_version} is CPU-only: building a CPU-only (+cpu) wheel")
        elif toolkit_version.split(".")[0] != torch_cuda.split(".")[0]:
            raise ConfigError(
                f"CUDA toolkit {toolkit_version} and torch's CUDA {torch_cuda} differ in major "
                "version; torch refuses to mix them. Use a toolkit of CUDA "
                f"{torch_cuda.split('.')[0]}.x (CUDA_HOME=...) or FUSEDOPS_CUDA=0"
            )
        else:
            cuda = toolkit_version
            if toolkit_version != torch_cuda:
                notes.append(
                    f"toolkit CUDA {toolkit_version} vs torch CUDA {torch_cuda}: minor versions "
                    "of one major mix at run time"
                )

    archs: tuple[str, ...] = ()
    if cuda is not None:
        requested = env.get("TORCH_CUDA_ARCH_LIST", "").strip()
        archs = validate_arch_list(requested or default_arch_list(cuda, matrix_file), cuda)

    return BuildConfig(
        base_version=base_version,
        abi=abi,
        torch_version=torch_version.split("+")[0],
        cuda=cuda,
        arch_list=archs,
        notes=tuple(notes),
    )
