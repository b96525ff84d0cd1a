"""The pure rules behind the loader's ImportError and `doctor` (no torch needed)."""

from __future__ import annotations

import pytest

from fusedops import _compat

STABLE_CU130 = {
    "version": "0.1.0+cu130",
    "abi": "stable",
    "torch": "2.14.1",
    "cuda": "13.0",
    "arch_list": [],
}
CLASSIC_214 = {
    "version": "0.1.0+cu130torch2.14",
    "abi": "classic",
    "torch": "2.14.1",
    "cuda": "13.0",
}
CPU_STABLE = {"version": "0.1.0+cpu", "abi": "stable", "torch": "2.14.1", "cuda": None}


@pytest.mark.parametrize(
    ("info", "torch_version", "torch_cuda", "fragment"),
    [
        (STABLE_CU130, "2.9.1+cu128", "12.8", "needs torch >= 2.10"),
        (CLASSIC_214, "2.13.0+cpu", None, "compiled for torch 2.14.x only"),
        (CLASSIC_214, "2.15.0", "13.2", "compiled for torch 2.14.x only"),
        (STABLE_CU130, "2.14.1+cpu", None, "installed torch is a CPU-only build"),
        (STABLE_CU130, "2.11.0+cu128", "12.8", "CUDA major versions do not mix"),
    ],
)
def test_mismatches_are_named(info, torch_version, torch_cuda, fragment) -> None:
    reason = _compat.torch_mismatch(info, torch_version, torch_cuda)
    assert reason is not None and fragment in reason


@pytest.mark.parametrize(
    ("info", "torch_version", "torch_cuda"),
    [
        (STABLE_CU130, "2.11.0+cu130", "13.0"),
        (STABLE_CU130, "2.15.0", "13.2"),  # CUDA minor versions mix
        (STABLE_CU130, "2.10.0", "13.0"),
        (CLASSIC_214, "2.14.0", "13.0"),
        (CPU_STABLE, "2.14.1", "13.0"),  # a CPU wheel loads into a CUDA torch
        (CPU_STABLE, "2.13.0+cpu", None),
    ],
)
def test_compatible_combinations(info, torch_version, torch_cuda) -> None:
    assert _compat.torch_mismatch(info, torch_version, torch_cuda) is None


def test_message_names_both_builds_and_the_fix(monkeypatch) -> None:
    monkeypatch.delenv("FUSEDOPS_INDEX_URL", raising=False)
    reason = _compat.torch_mismatch(CLASSIC_214, "2.13.0+cpu", None)
    message = _compat.mismatch_message(CLASSIC_214, "2.13.0+cpu", None, reason)
    assert (
        "fusedops 0.1.0+cu130torch2.14 (classic ABI, built against torch 2.14.1, CUDA 13.0)"
        in message
    )
    assert "torch 2.13.0+cpu (CPU only)" in message
    # torch 2.13 is new enough for the stable wheel: that is the one to install.
    assert 'pip install --force-reinstall --no-deps "fusedops==0.1.0+cpu"' in message
    assert f"--index-url {_compat.DEFAULT_INDEX_URL}/cpu" in message


@pytest.mark.parametrize(
    ("torch_version", "torch_cuda", "expected"),
    [
        ("2.14.1", "13.0", "0.1.0+cu130"),
        ("2.15.0", "13.2", "0.1.0+cu132"),
        ("2.10.0+cpu", None, "0.1.0+cpu"),
        ("2.9.1", "12.8", "0.1.0+cu128torch2.9"),
        ("2.8.0+cpu", None, "0.1.0+cputorch2.8"),
    ],
)
def test_wheel_for(torch_version, torch_cuda, expected) -> None:
    assert _compat.wheel_for("0.1.0", torch_version, torch_cuda) == expected


def test_index_url_override(monkeypatch) -> None:
    monkeypatch.setenv("FUSEDOPS_INDEX_URL", "https://mirror.example/whl/")
    assert "--index-url https://mirror.example/whl/cu130" in _compat.pip_command(
        "0.1.0", "2.14.1", "13.0"
    )


ARCHS = ["7.5", "8.0", "8.6", "9.0", "10.0", "12.0+PTX"]


@pytest.mark.parametrize(
    ("capability", "covered", "how"),
    [
        ((9, 0), True, "SASS sm_90"),
        ((8, 9), True, "SASS sm_86"),  # Ada runs Ampere SASS
        ((12, 1), True, "SASS sm_120"),
        ((10, 3), True, "SASS sm_100"),
        ((13, 0), True, "PTX compute_120"),
        ((7, 0), False, "not covered"),
        ((6, 1), False, "not covered"),
    ],
)
def test_arch_coverage(capability, covered, how) -> None:
    verdict = _compat.arch_coverage(capability, ARCHS)
    assert verdict.covered is covered
    assert how in verdict.how


def test_arch_coverage_cpu_build() -> None:
    verdict = _compat.arch_coverage((9, 0), [])
    assert not verdict.covered and "CPU-only" in verdict.how


def test_torch_versions_are_read_as_numbers() -> None:
    # The installed package's one version rule (fusedops/_variant.py, shared with the pipeline).
    from fusedops import _variant

    assert _variant.release("2.14.1+cu130") == (2, 14, 1)
    assert _variant.release("2.14.1rc1") == (2, 14, 1)
    assert _variant.minor_of("2.15.0.dev20260101") == (2, 15)
    assert _variant.minor_of("2.10") == (2, 10)
    assert _variant.minor_of("2.10.0") > _variant.minor_of("2.9.1")
