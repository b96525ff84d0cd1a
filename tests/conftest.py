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


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("gpu") is None or cuda_available():
        return
    if os.environ.get("FUSEDOPS_REQUIRE_GPU") == "1":
        pytest.fail("FUSEDOPS_REQUIRE_GPU=1 but torch.cuda.is_available() is False", pytrace=False)
    pytest.skip("needs a CUDA GPU (torch.cuda.is_available() is False)")
