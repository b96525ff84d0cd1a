"""Fresh virtual environments with another torch, for install tests of built wheels."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import venv
from collections.abc import Iterator
from pathlib import Path

# The other torch the install tests use: a CPU build (on this machine's disk; PyPI
# or PyTorch's CPU index elsewhere).
OTHER_TORCH = os.environ.get("FUSEDOPS_OTHER_TORCH", "torch==2.13.0")


@contextlib.contextmanager
def venv_with_wheel(root: Path, wheel: str, torch: str = OTHER_TORCH) -> Iterator[Path]:
    """`with_wheel`, removed on exit: each venv holds a torch of ~1 GB, and pytest keeps
    its temporary directories (CI machines run short of disk)."""
    try:
        yield with_wheel(root, wheel, torch)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def with_wheel(root: Path, wheel: str, torch: str = OTHER_TORCH) -> Path:
    """A venv at `root` with `torch`, then `wheel` installed --no-deps; returns its python."""
    venv.create(root, with_pip=True)
    python = root / "bin" / "python"
    pip = [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    subprocess.run([*pip, torch], check=True)
    # --no-deps: the wheel's torch requirement is met; nothing may replace that torch
    subprocess.run([*pip, "--no-deps", wheel], check=True)
    return python


def run(
    python: Path | str, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run from / so the source tree cannot shadow the installed package."""
    return subprocess.run(
        [str(python), *args],
        capture_output=True,
        text=True,
        check=False,
        cwd="/",
        env={**os.environ, **(env or {})},
    )
