"""CUDA toolkits: find one, or assemble CUDA 13.x from PyPI; check the host compiler.

`cuda_home("13.2")` returns a CUDA_HOME: the system toolkit when its version
matches, otherwise (CUDA 13.x) nvcc from PyPI (`cuda-toolkit[nvcc,cudart,cccl]`)
assembled into a CUDA_HOME tree in the cache. CUDA 12.x nvcc is not on PyPI:
that is an error naming the container path, never a fake.

`find_toolkit()` is what setup.py uses: $CUDA_HOME (or $CUDA_PATH), then the
nvcc on PATH, then /usr/local/cuda. The nvcc on PATH may be a wrapper or a link
outside the toolkit root, so a candidate must contain bin/nvcc and
include/cuda_runtime.h, and nvcc is asked for its root (`--dryrun -v` prints TOP=).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ..rules import Variant
from . import (
    STAMP_FORMAT,
    STAMP_NAME,
    Log,
    ToolchainError,
    cache_root,
    locked,
    pip_install_target,
    probe_output,
    read_stamp,
    relative_symlink,
    write_stamp,
)

# CUDA majors whose nvcc PyPI ships, and where the wheels put the toolkit
# (relative to the pip --target directory). CUDA 12.x's `nvidia-cuda-nvcc-cu12`
# holds ptxas and libnvvm only: no nvcc, no cicc.
PYPI_CUDA_LAYOUT = {13: "nvidia/cu13"}
PYPI_CUDA_REQUIREMENT = "cuda-toolkit[nvcc,cudart,cccl]=={version}.*"
# Where NVIDIA's own packages install a toolkit; checked before downloading.
SYSTEM_TOOLKIT_DIRS = ("/usr/local/cuda-{version}",)
# Installs CUDA from NVIDIA's package repository inside the CI container.
NVIDIA_REPO_SCRIPT = "pipeline/toolchain/install_cuda_nvidia_repo.sh"

# Compiled (and linked) once when a PyPI toolkit is assembled: it exercises
# nvcc -> cicc -> ptxas -> fatbinary, the headers (crt, cccl, fp16/bf16) and
# lib64's static cudart, the pieces a fusedops build uses.
PROBE_CU = """\
#include <cuda/std/limits>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
__global__ void probe(float* x) {
  x[threadIdx.x] *= cuda::std::numeric_limits<float>::epsilon();
}
int main() {
  probe<<<1, 1>>>(nullptr);
  (void)cudaGetLastError();
  return 0;
}
"""


class ToolkitError(ToolchainError):
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
    out = probe_output([nvcc, "--dryrun", "-v", "-c", "fusedops_probe.cu"])
    if out is None:
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


def parse_cuda_version(text: str) -> tuple[int, int]:
    """'13.2' / '13.2.78' / 'cu132' -> (13, 2)."""
    try:
        variant = Variant.parse(text)
    except ValueError as err:
        raise ToolchainError(str(err)) from None
    if variant.cuda is None:
        raise ToolchainError(f"CUDA version {text!r}: expected MAJOR.MINOR such as 13.0 (or cu130)")
    return variant.cuda


def cuda_stamp_is_current(stamp: dict | None, version: str) -> bool:
    """A PyPI toolkit stamp that still describes a usable `version` install."""
    return bool(
        stamp
        and stamp.get("format") == STAMP_FORMAT
        and stamp.get("cuda") == version
        and stamp.get("nvcc_release") == version
        and stamp.get("packages")
    )


def installed_packages(site: Path) -> dict[str, str]:
    """{distribution: version} of what pip put in a --target directory."""
    found = {}
    for info in site.glob("*.dist-info"):
        name, _, version = info.name.removesuffix(".dist-info").partition("-")
        found[name.lower().replace("_", "-")] = version
    return dict(sorted(found.items()))


def system_toolkit(version: str, *, env: Mapping[str, str] | None = None) -> Toolkit | None:
    """An installed toolkit of CUDA `version` (MAJOR.MINOR), or None.

    Looks where find_toolkit looks ($CUDA_HOME, nvcc on PATH,
    /usr/local/cuda), then at the per-version directories NVIDIA's packages use.
    A broken explicit $CUDA_HOME raises ToolkitError rather than being skipped.
    """
    env = dict(os.environ) if env is None else dict(env)
    found = find_toolkit(env)
    if found is not None and found.version == version:
        return found
    for pattern in SYSTEM_TOOLKIT_DIRS:
        root = Path(pattern.format(version=version))
        if not root.is_dir():
            continue
        try:
            candidate = find_toolkit({"CUDA_HOME": str(root), "PATH": ""})
        except ToolkitError:
            continue
        if candidate is not None and candidate.version == version:
            return candidate
    return None


def _no_pypi_nvcc_message(version: str) -> str:
    major = version.split(".")[0]
    if int(major) < min(PYPI_CUDA_LAYOUT):
        why = (
            f"CUDA {major}.x nvcc is not on PyPI (nvidia-cuda-nvcc-cu{major} ships only ptxas "
            "and libnvvm), so it cannot be installed on demand."
        )
    else:
        why = (
            f"pipeline/toolchain/cuda.py knows the PyPI layout of CUDA {sorted(PYPI_CUDA_LAYOUT)} only; "
            f"add CUDA {major} to PYPI_CUDA_LAYOUT once its wheels are checked."
        )
    return (
        f"CUDA {version}: no matching toolkit on this machine (looked at $CUDA_HOME, nvcc on "
        f"PATH, /usr/local/cuda, /usr/local/cuda-{version}). {why} Install CUDA {version} from "
        f"NVIDIA's packages (CI does this inside the manylinux container with "
        f"{NVIDIA_REPO_SCRIPT}) and set CUDA_HOME=/usr/local/cuda-{version}."
    )


def check_nvcc(home: Path, version: str) -> None:
    """`nvcc --version` under `home` must report `version` (MAJOR.MINOR)."""
    try:
        got = nvcc_version(home / "bin" / "nvcc")
    except (ToolkitError, OSError) as err:
        raise ToolchainError(f"{home}/bin/nvcc does not run: {err}") from err
    if got != version:
        raise ToolchainError(f"{home}/bin/nvcc reports CUDA {got}, expected {version}")


def compile_probe(home: Path) -> None:
    """Compile and link a small .cu file with `home`'s nvcc (proves the tree is whole)."""
    with tempfile.TemporaryDirectory(prefix="fusedops-nvcc-probe-") as tmp:
        source = Path(tmp) / "probe.cu"
        source.write_text(PROBE_CU)
        cmd = [str(home / "bin" / "nvcc"), str(source), "-o", str(Path(tmp) / "probe")]
        out = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if out.returncode != 0:
            raise ToolchainError(
                f"nvcc from {home} cannot compile a probe kernel:\n{out.stdout}{out.stderr}"
            )


def assemble_cuda_home(src: Path, home: Path) -> None:
    """Lay out a CUDA_HOME tree at `home` from the PyPI wheels' toolkit dir `src`.

    torch's cpp_extension wants bin/nvcc, include/ and lib64/libcudart.so; nvcc
    finds cicc, libdevice and its nvcc.profile relative to bin/ (TOP=bin/..),
    so bin/, nvvm/ and include/ must be siblings. Everything is a relative link
    into the pip --target directory except lib64/, a real directory that adds
    the unversioned libcudart.so the wheels lack.
    """
    missing = [
        p
        for p in ("bin/nvcc", "bin/nvcc.profile", "include/cuda_runtime.h", "nvvm/bin", "lib")
        if not (src / p).exists()
    ]
    cudart = sorted((src / "lib").glob("libcudart.so.*"))
    if missing or not cudart:
        raise ToolchainError(
            f"unexpected PyPI CUDA layout under {src}: missing "
            f"{', '.join(missing) or 'lib/libcudart.so.*'}"
        )
    home.mkdir(parents=True)
    (home / "bin").mkdir()
    for entry in sorted((src / "bin").iterdir()):
        relative_symlink(entry, home / "bin" / entry.name)
    for name in ("include", "nvvm"):
        relative_symlink(src / name, home / name)
    lib64 = home / "lib64"
    lib64.mkdir()
    for entry in sorted((src / "lib").iterdir()):
        relative_symlink(entry, lib64 / entry.name)
    (lib64 / "libcudart.so").symlink_to(cudart[-1].name)
    (home / "lib").symlink_to("lib64")  # nvcc.profile adds $(TOP)/lib to LD_LIBRARY_PATH


def _pypi_toolkit(version: str, cache: Path, log: Log) -> Path:
    major = int(version.split(".")[0])
    home = cache / f"cuda-{version}"
    prefix = cache / f"pypi-cuda-{version}"
    site = prefix / "site"
    with locked(cache / f".cuda-{version}.lock", log):
        stamp = read_stamp(home / STAMP_NAME)
        if cuda_stamp_is_current(stamp, version) and (home / "bin" / "nvcc").resolve().is_file():
            check_nvcc(home, version)
            log(f"CUDA {version}: cached PyPI toolkit {home} (nvcc {stamp['nvcc_full']})")
            return home

        requirement = PYPI_CUDA_REQUIREMENT.format(version=version)
        log(
            f"CUDA {version}: no system toolkit; installing {requirement} from PyPI into "
            f"{prefix} (nvcc, cicc, ptxas, headers: ~115 MB download, ~300 MB installed)"
        )
        for stale in (prefix, home):
            if stale.is_symlink() or stale.is_file():
                stale.unlink()
            elif stale.exists():
                shutil.rmtree(stale)
        started = time.monotonic()
        pip_install_target(requirement, site)
        log(f"CUDA {version}: installed in {time.monotonic() - started:.0f} s")

        assemble_cuda_home(site / PYPI_CUDA_LAYOUT[major], home)
        check_nvcc(home, version)
        compile_probe(home)
        full = subprocess.run(
            [str(home / "bin" / "nvcc"), "--version"], capture_output=True, text=True, check=False
        ).stdout
        match = re.search(r"\bV(\d+\.\d+\.\d+)", full)
        write_stamp(
            home / STAMP_NAME,
            {
                "cuda": version,
                "nvcc_release": version,
                "nvcc_full": match.group(1) if match else "?",
                "requirement": requirement,
                "packages": installed_packages(site),
            },
        )
        log(f"CUDA {version}: assembled {home}; a probe kernel compiled and linked")
        return home


def cuda_home(version: str, *, cache_dir: Path | None = None, log: Log = print) -> Path:
    """CUDA_HOME for CUDA `version`: the system toolkit, else CUDA 13.x from PyPI (cached)."""
    major, minor = parse_cuda_version(version)
    want = f"{major}.{minor}"
    system = system_toolkit(want)
    if system is not None:
        check_nvcc(system.root, want)
        log(f"CUDA {want}: system toolkit {system.root} (found via {system.source})")
        return system.root
    if major not in PYPI_CUDA_LAYOUT:
        raise ToolchainError(_no_pypi_nvcc_message(want))
    return _pypi_toolkit(want, cache_root(cache_dir), log)


# ---------------------------------------------------------------------------
# Host compiler
# ---------------------------------------------------------------------------

# nvcc's own refusal, in include/crt/host_config.h: `#if __GNUC__ > 13` ... #error.
_HOST_CONFIG_GCC = re.compile(r"^#if __GNUC__ > (\d+)", re.MULTILINE)


def nvcc_gcc_limit(home: Path) -> int | None:
    """The newest GCC major this toolkit's nvcc accepts (crt/host_config.h), if stated."""
    for header in [
        home / "include" / "crt" / "host_config.h",
        *home.glob("targets/*/include/crt/host_config.h"),
    ]:
        if header.is_file():
            found = [int(m) for m in _HOST_CONFIG_GCC.findall(header.read_text(errors="replace"))]
            return min(found) if found else None
    return None


def gcc_major(compiler: str) -> int | None:
    """The GCC major of a compiler command, or None for a compiler that is not GCC."""
    try:
        out = subprocess.run(
            [compiler, "--version"], capture_output=True, text=True, timeout=60, check=False
        )
        dump = subprocess.run(
            [compiler, "-dumpversion"], capture_output=True, text=True, timeout=60, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as err:
        raise ToolchainError(f"host compiler {compiler!r} does not run: {err}") from None
    if out.returncode != 0 or "clang" in out.stdout.lower() or not dump.stdout.strip():
        return None
    return int(dump.stdout.strip().split(".")[0])


def host_compiler_problem(
    cuda: str, gcc: int, nvcc_limit: int | None, torch_limit: int | None
) -> str | None:
    """Why GCC `gcc` cannot build CUDA `cuda`, or None. Limits are the newest accepted major."""
    if nvcc_limit is not None and gcc > nvcc_limit:
        return (
            f"GCC {gcc} is newer than CUDA {cuda}'s nvcc accepts (GCC <= {nvcc_limit}, "
            "its crt/host_config.h)"
        )
    if torch_limit is not None and gcc > torch_limit:
        return f"GCC {gcc} is newer than torch's cpp_extension allows with CUDA {cuda} (GCC <= {torch_limit})"
    return None


def torch_gcc_limit(cuda: str) -> int | None:
    """torch's own CUDA -> newest GCC bound (cpp_extension.CUDA_GCC_VERSIONS, exclusive max)."""
    try:
        from torch.utils import cpp_extension
    except ImportError:
        return None
    bounds = getattr(cpp_extension, "CUDA_GCC_VERSIONS", {}).get(cuda)
    return None if not bounds else int(bounds[1][0]) - 1


def check_host_compiler(home: Path, cuda: str, compiler: str, log: Log = print) -> None:
    """Fail in seconds, naming the bound, when the host compiler is out of range."""
    gcc = gcc_major(compiler)
    if gcc is None:
        log(f"host compiler {compiler}: not GCC, bounds not checked")
        return
    problem = host_compiler_problem(cuda, gcc, nvcc_gcc_limit(home), torch_gcc_limit(cuda))
    if problem:
        raise ToolchainError(
            f"{problem}. Use an older GCC (CC/CXX=..., e.g. gcc-toolset-N in the manylinux "
            "container) or a newer CUDA"
        )
    log(f"host compiler {compiler}: GCC {gcc}, within CUDA {cuda}'s bounds")


def toolset_compilers(gcc: int | None, root: str = "/opt/rh") -> dict[str, str]:
    """CC/CXX of manylinux's gcc-toolset-<gcc> when it is installed here, else {}."""
    if gcc is None:
        return {}
    bindir = Path(root) / f"gcc-toolset-{gcc}" / "root" / "usr" / "bin"
    if not (bindir / "gcc").is_file():
        return {}
    return {"CC": str(bindir / "gcc"), "CXX": str(bindir / "g++")}
