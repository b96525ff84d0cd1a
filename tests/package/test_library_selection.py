"""Which library the one PyPI wheel loads: chosen from torch.version.cuda before any dlopen.

Pure rules (no torch, no GPU): the end-to-end installs are in test_pypi_wheel_install.py.
"""

from __future__ import annotations

import pytest

from fusedops import _compat

PART = {"abi": "stable", "torch": "2.14.1", "arch_list": [], "git_sha": None}
MULTI = {
    "version": "0.1.0",
    "abi": "stable",
    "torch": "2.14.1",
    "variants": {
        "cpu": {**PART, "version": "0.1.0", "cuda": None, "variant": "cpu"},
        "cu12": {**PART, "version": "0.1.0", "cuda": "12.8", "variant": "cu128"},
        "cu13": {**PART, "version": "0.1.0", "cuda": "13.0", "variant": "cu130"},
    },
}


@pytest.mark.parametrize(
    ("torch_cuda", "family", "why"),
    [
        (None, "cpu", "torch is a CPU-only build"),
        ("12.6", "cu12", "torch.version.cuda is 12.6"),
        ("12.8", "cu12", "torch.version.cuda is 12.8"),
        ("13.0", "cu13", "torch.version.cuda is 13.0"),
        ("13.2", "cu13", "torch.version.cuda is 13.2"),
    ],
)
def test_the_family_follows_torch(torch_cuda, family, why) -> None:
    chosen = _compat.select_library(MULTI, torch_cuda, None)
    assert (chosen.family, chosen.why, chosen.forced) == (family, why, False)
    assert chosen.info == MULTI["variants"][family]
    # what the mismatch rules then see: the chosen library fits that torch
    assert _compat.torch_mismatch(chosen.info, "2.14.1", torch_cuda) is None


def test_the_override_wins_and_says_so() -> None:
    chosen = _compat.select_library(MULTI, "13.0", "cpu")
    assert (chosen.family, chosen.why, chosen.forced) == ("cpu", "FUSEDOPS_VARIANT=cpu", True)
    # forcing a library that cannot load into this torch is then a named mismatch
    forced = _compat.select_library(MULTI, None, "CU13")
    assert forced.family == "cu13"
    reason = _compat.torch_mismatch(forced.info, "2.13.0+cpu", None)
    assert reason == "this wheel has CUDA kernels but the installed torch is a CPU-only build"


@pytest.mark.parametrize(
    ("torch_cuda", "override", "fragment"),
    [
        ("14.0", None, "carries libraries for cpu, cu12, cu13, but torch.version.cuda is 14.0, which needs cu14"),
        ("13.0", "cu11", "FUSEDOPS_VARIANT=cu11 asks for a library this wheel does not carry; it has cpu, cu12, cu13"),
        ("13.0", "cuda13", "FUSEDOPS_VARIANT='cuda13' is not a library family: use one of cpu, cu12, cu13"),
        ("13.0", "cu130", "FUSEDOPS_VARIANT=cu130 asks for a library this wheel does not carry"),
    ],
)  # fmt: skip
def test_no_fitting_library_is_a_clear_error(torch_cuda, override, fragment) -> None:
    with pytest.raises(_compat.SelectionError, match=None) as info:
        _compat.select_library(MULTI, torch_cuda, override)
    assert fragment in str(info.value)


def test_a_single_library_wheel_ignores_the_override() -> None:
    single = {"version": "0.1.0+cpu", "abi": "stable", "torch": "2.14.1", "cuda": None}
    chosen = _compat.select_library(single, "13.0", "cu13")
    assert chosen.family is None and chosen.info == single
    assert "FUSEDOPS_VARIANT ignored" in chosen.why
