"""scripts/gpu_test.py: a GPU job can fail, it cannot pass by skipping."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "gpu_test.py"


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args], capture_output=True, text=True, check=False, cwd=REPO
    )


def test_rejects_a_file_that_is_not_a_wheel(tmp_path: Path) -> None:
    bogus = tmp_path / "fusedops.tar.gz"
    bogus.write_text("")
    result = run(str(bogus))
    assert result.returncode == 2 and "not a wheel file" in result.stderr


@pytest.mark.slow
def test_without_a_gpu_the_gpu_tests_fail() -> None:
    wheel = os.environ.get("FUSEDOPS_STABLE_WHEEL")
    if not wheel:
        pytest.skip("set FUSEDOPS_STABLE_WHEEL (nox -s tests does)")
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU: the point is what happens without one")
    result = run(wheel, "-k", "test_zero_size", "--no-sanitizer")
    assert result.returncode == 1, result.stdout[-2000:]
    assert "FUSEDOPS_REQUIRE_GPU=1 but torch.cuda.is_available() is False" in result.stdout
    assert "FAIL  " in result.stdout and "pytest (GPU required)" in result.stdout
