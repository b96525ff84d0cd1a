"""Test-suite wiring shared by every test folder.

GPU tests carry the `gpu` marker. Without a GPU they skip, unless
FUSEDOPS_REQUIRE_GPU=1 (set by scripts/gpu_test.py): then a missing GPU is an
error, so a GPU job can never pass by skipping everything.
"""

from __future__ import annotations

import functools
import os

import pytest


@functools.cache
def cuda_available() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


@functools.cache
def gpu_count() -> int:
    try:
        import torch
    except ImportError:
        return 0
    return torch.cuda.device_count()


def pytest_runtest_setup(item: pytest.Item) -> None:
    # A two-GPU test skips on fewer GPUs, also under FUSEDOPS_REQUIRE_GPU=1:
    # scripts/gpu_test.py requires it only on a machine with two (same rule).
    if item.get_closest_marker("multi_gpu") is not None and gpu_count() < 2:
        pytest.skip(f"needs two GPUs, this machine has {gpu_count()}")
    if item.get_closest_marker("gpu") is None or cuda_available():
        return
    if os.environ.get("FUSEDOPS_REQUIRE_GPU") == "1":
        pytest.fail("FUSEDOPS_REQUIRE_GPU=1 but torch.cuda.is_available() is False", pytrace=False)
    pytest.skip("needs a CUDA GPU (torch.cuda.is_available() is False)")
