"""`python -m fusedops doctor` against the installed wheel."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import torch

import fusedops
from fusedops import doctor


def run_doctor(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "fusedops", "doctor", *args],
        capture_output=True,
        text=True,
        check=False,
    )


def test_doctor_json_reports_this_build() -> None:
    result = run_doctor("--json")
    assert result.returncode == 0, result.stdout + result.stderr
    report = json.loads(result.stdout)
    assert report["verdict"] == "OK"
    assert report["torch"]["version"] == torch.__version__
    assert report["fusedops"]["build"]["version"] == fusedops.BUILD_INFO["version"]
    assert report["fusedops"]["build"]["abi"] in ("stable", "classic")


def test_doctor_text_has_every_section() -> None:
    result = run_doctor()
    assert result.returncode == 0, result.stdout + result.stderr
    for heading in ("environment", "torch", "fusedops wheel", "verdict: OK"):
        assert heading in result.stdout
    (line,) = [ln for ln in result.stdout.splitlines() if "built against torch" in ln]
    assert line.split()[-1] == fusedops.BUILD_INFO["torch"]


def test_doctor_flags_an_uncovered_gpu(monkeypatch) -> None:
    monkeypatch.setattr(
        doctor,
        "_torch_report",
        lambda: {
            "installed": True,
            "version": "2.14.1",
            "cuda": "13.0",
            "cuda_available": True,
            "gpus": [{"index": 0, "name": "Tesla V100", "capability": [7, 0]}],
        },
    )
    monkeypatch.setattr(
        doctor,
        "_build_report",
        lambda: {
            "version": "0.1.0+cu130",
            "abi": "stable",
            "torch": "2.14.1",
            "cuda": "13.0",
            "arch_list": ["7.5", "8.0", "9.0+PTX"],
        },
    )
    report = doctor.collect()
    assert report["verdict"] == "PROBLEM"
    assert "not covered" in report["problems"][0]
    assert 'TORCH_CUDA_ARCH_LIST="7.0"' in report["advice"][0]
    assert "NOT covered" in doctor.render(report)


def test_doctor_flags_a_torch_mismatch(monkeypatch) -> None:
    monkeypatch.setattr(
        doctor,
        "_torch_report",
        lambda: {
            "installed": True,
            "version": "2.9.1",
            "cuda": "12.8",
            "cuda_available": False,
            "gpus": [],
        },
    )
    report = doctor.collect()
    assert report["verdict"] == "PROBLEM"
    assert any("fusedops==" in a for a in report["advice"])


def test_a_forced_library_that_is_missing_is_not_answered_with_a_pip_command(
    monkeypatch,
) -> None:
    """The PyPI wheel with FUSEDOPS_VARIANT naming a library it lacks: the problem says
    to unset the variable; a pip command would not fix it."""
    if "library" not in fusedops.BUILD_INFO:
        pytest.skip("needs the multi-library PyPI wheel (FUSEDOPS_VARIANT picks among them)")
    monkeypatch.setenv("FUSEDOPS_VARIANT", "cu11")
    report = doctor.collect()
    assert report["verdict"] == "PROBLEM"
    assert any("FUSEDOPS_VARIANT=cu11" in p for p in report["problems"]), report["problems"]
    assert not any("pip install" in a for a in report["advice"]), report["advice"]


def test_unknown_command_is_a_usage_error() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "fusedops", "cure"], capture_output=True, text=True, check=False
    )
    assert result.returncode == 2
    assert "invalid choice" in result.stderr
