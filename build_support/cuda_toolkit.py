"""Find the CUDA toolkit to build with, robustly.

Order: $CUDA_HOME (or $CUDA_PATH), then the nvcc on PATH, then /usr/local/cuda.
The nvcc on PATH may be a wrapper script or a link outside the toolkit root
(as on some CI images), so its parent directory is never trusted blindly:
a candidate root must contain bin/nvcc and include/cuda_runtime.h, and when
the PATH guess fails we ask nvcc itself where its root is (`--dryrun -v`
prints `TOP=`).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path


class ToolkitError(RuntimeError):
    """The environment points at a CUDA toolkit that cannot be used."""


@dataclass(frozen=True)
class Toolkit:
    root: Path
    version: str  # "13.0"
    source: str  # how it was found, for the build log

    @property
    def variant(self) -> str:
        major, minor = self.version.split(".")[:2]
        return f"cu{major}{minor}"

    @property
    def nvcc(self) -> Path:
        return self.root / "bin" / "nvcc"


def _is_toolkit_root(root: Path) -> bool:
    include_dirs = [root / "include", *root.glob("targets/*/include")]
    has_header = any((d / "cuda_runtime.h").is_file() for d in include_dirs)
    return (root / "bin" / "nvcc").is_file() and has_header


def _nvcc_reported_root(nvcc: str) -> Path | None:
    try:
        out = subprocess.run(
            [nvcc, "--dryrun", "-v", "-c", "fusedops_probe.cu"],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    match = re.search(r"^#\$ TOP=(.+)$", out.stdout + out.stderr, re.MULTILINE)
    return Path(match.group(1).strip()).resolve() if match else None


def nvcc_version(nvcc: Path) -> str:
    out = subprocess.run([str(nvcc), "--version"], capture_output=True, text=True, check=False)
    match = re.search(r"release (\d+)\.(\d+)", out.stdout)
    if out.returncode != 0 or not match:
        raise ToolkitError(
            f"could not read the CUDA version from `{nvcc} --version`:\n{out.stdout}"
        )
    return f"{match.group(1)}.{match.group(2)}"


def find_toolkit(env: dict[str, str] | None = None) -> Toolkit | None:
    """The toolkit to build with, or None when there is none.

    An explicit $CUDA_HOME that is not a toolkit is an error, not a fallback:
    silently building against another toolkit is how wrong wheels are made.
    """
    env = dict(os.environ) if env is None else env
    for var in ("CUDA_HOME", "CUDA_PATH"):
        if env.get(var):
            root = Path(env[var]).resolve()
            if not _is_toolkit_root(root):
                raise ToolkitError(
                    f"${var}={env[var]} is not a CUDA toolkit (expected bin/nvcc and "
                    "include/cuda_runtime.h under it); unset it or point it at one"
                )
            return Toolkit(root, nvcc_version(root / "bin" / "nvcc"), f"${var}")

    nvcc = shutil.which("nvcc", path=env.get("PATH"))
    if nvcc:
        guess = Path(nvcc).resolve().parent.parent
        if _is_toolkit_root(guess):
            return Toolkit(guess, nvcc_version(guess / "bin" / "nvcc"), f"nvcc on PATH ({nvcc})")
        reported = _nvcc_reported_root(nvcc)
        if reported and _is_toolkit_root(reported):
            return Toolkit(
                reported,
                nvcc_version(reported / "bin" / "nvcc"),
                f"nvcc on PATH ({nvcc}, root reported by nvcc)",
            )

    default = Path("/usr/local/cuda")
    if _is_toolkit_root(default):
        return Toolkit(default.resolve(), nvcc_version(default / "bin" / "nvcc"), "/usr/local/cuda")
    return None
