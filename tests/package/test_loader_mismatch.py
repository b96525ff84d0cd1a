"""A wheel installed next to a torch it was not built for fails to import with a
clear ImportError, and `doctor` still runs and names the fix.

Real components: the classic wheel built by `nox -s tests` (against torch
2.14.1, path in $FUSEDOPS_CLASSIC_WHEEL) goes into a fresh virtual environment
with torch 2.13.0+cpu (on this machine's disk; PyPI elsewhere).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch_venv
from torch_venv import run

pytestmark = pytest.mark.slow

WHEEL = os.environ.get("FUSEDOPS_CLASSIC_WHEEL")


@pytest.fixture(scope="module")
def other_torch_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    if not WHEEL:
        pytest.skip("set FUSEDOPS_CLASSIC_WHEEL to a classic wheel (nox -s tests does)")
    with torch_venv.venv_with_wheel(tmp_path_factory.mktemp("other-torch"), WHEEL) as python:
        yield python


def test_import_names_both_builds_and_the_fix(other_torch_env: Path) -> None:
    result = run(other_torch_env, "-c", "import fusedops")
    assert result.returncode != 0
    err = result.stderr
    assert "ImportError: fusedops cannot load" in err
    assert "classic-ABI wheel was compiled for torch 2.14.x only" in err
    assert "installed wheel: fusedops 0.1.0+" in err and "built against torch 2.14" in err
    assert "installed torch: torch 2.13.0" in err
    assert 'pip install --force-reinstall --no-deps "fusedops==0.1.0+' in err
    assert "undefined symbol" not in err


def test_doctor_runs_and_reports_the_mismatch(other_torch_env: Path) -> None:
    result = run(other_torch_env, "-m", "fusedops", "doctor")
    assert result.returncode == 1
    assert "verdict: PROBLEM" in result.stdout
    assert "compiled for torch 2.14.x only" in result.stdout
    assert "fix: pip install --force-reinstall --no-deps" in result.stdout


def test_stable_wheel_runs_on_an_older_torch(other_torch_env: Path, tmp_path: Path) -> None:
    """The point of the stable ABI: built against 2.14.1, it runs on 2.13."""
    stable = os.environ.get("FUSEDOPS_STABLE_WHEEL")
    if not stable:
        pytest.skip("set FUSEDOPS_STABLE_WHEEL to a stable CPU wheel (nox -s tests does)")
    target = tmp_path / "stable"
    subprocess.run(
        [
            str(other_torch_env),
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--target",
            str(target),
            stable,
        ],
        check=True,
    )
    code = (
        "import torch, fusedops; x = torch.randn(3, 8); w = torch.ones(8); "
        "y = fusedops.rms_norm(x, w); "
        "ref = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6); "
        "torch.testing.assert_close(y, ref); print(torch.__version__, fusedops.BUILD_INFO['torch'])"
    )
    result = subprocess.run(
        [str(other_torch_env), "-c", code],
        capture_output=True,
        text=True,
        check=False,
        cwd="/",
        env={**os.environ, "PYTHONPATH": str(target)},
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["2.13.0+cpu", "2.14.1"] or result.stdout.startswith("2.13.0")
