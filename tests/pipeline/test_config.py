"""build_support: what a build produces and every way to ask for the impossible."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from build_support import config  # noqa: E402
from build_support.config import ConfigError, decide  # noqa: E402


def make(env=None, torch="2.14.1+cu130", torch_cuda="13.0", toolkit="13.0"):
    return decide(
        base_version="0.1.0",
        torch_version=torch,
        torch_cuda=torch_cuda,
        toolkit_version=toolkit,
        env=env or {},
    )


def test_default_is_stable_cuda_with_the_matrix_arch_list() -> None:
    cfg = make()
    assert (cfg.abi, cfg.variant, cfg.version) == ("stable", "cu130", "0.1.0+cu130")
    assert cfg.torch_requirement == "torch>=2.10"
    assert cfg.arch_list == ("7.5", "8.0", "8.6", "9.0", "10.0", "12.0+PTX")


def test_classic_pins_the_torch_minor() -> None:
    cfg = make({"FUSEDOPS_ABI": "classic"})
    assert cfg.version == "0.1.0+cu130torch2.14"
    assert cfg.torch_requirement == "torch==2.14.*"


def test_old_torch_defaults_to_classic() -> None:
    cfg = make(torch="2.9.1+cu128", torch_cuda="12.8", toolkit="12.8")
    assert cfg.abi == "classic" and cfg.version == "0.1.0+cu128torch2.9"


def test_cpu_builds() -> None:
    assert make({"FUSEDOPS_CUDA": "0"}).version == "0.1.0+cpu"
    assert make({"FUSEDOPS_CUDA": "0", "FUSEDOPS_ABI": "classic"}).version == "0.1.0+cputorch2.14"
    no_toolkit = make(toolkit=None)
    assert no_toolkit.variant == "cpu" and "no CUDA toolkit" in no_toolkit.notes[0]
    cpu_torch = make(torch="2.13.0+cpu", torch_cuda=None)
    assert cpu_torch.variant == "cpu" and "CPU-only" in cpu_torch.notes[0]


def test_minor_mismatch_is_a_note_not_an_error() -> None:
    cfg = make(toolkit="13.2")
    assert cfg.variant == "cu132"
    assert any("minor versions" in note for note in cfg.notes)


def test_arch_list_override() -> None:
    assert make({"TORCH_CUDA_ARCH_LIST": "9.0;10.0+PTX"}).arch_list == ("9.0", "10.0+PTX")


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        (dict(env={"FUSEDOPS_ABI": "fast"}), "expected 'stable' or 'classic'"),
        (
            dict(env={"FUSEDOPS_ABI": "stable"}, torch="2.9.1", torch_cuda="12.8", toolkit="12.8"),
            "needs torch >= 2.10",
        ),
        (dict(env={"FUSEDOPS_CUDA": "maybe"}), "FUSEDOPS_CUDA='maybe'"),
        (dict(env={"FUSEDOPS_CUDA": "1"}, toolkit=None), "no CUDA toolkit was found"),
        (dict(env={"FUSEDOPS_CUDA": "1"}, torch="2.13.0+cpu", torch_cuda=None), "CPU-only build"),
        (dict(toolkit="12.8"), "differ in major version"),
        (dict(env={"TORCH_CUDA_ARCH_LIST": "7.0"}), "cannot target sm_70"),
        (dict(env={"TORCH_CUDA_ARCH_LIST": "sm90"}), "not of the form"),
        (dict(env={"TORCH_CUDA_ARCH_LIST": " ; "}), "empty"),
    ],
)
def test_impossible_requests_are_clear_errors(kwargs, fragment: str) -> None:
    with pytest.raises(ConfigError, match=None) as info:
        make(**kwargs)
    assert fragment in str(info.value)


def test_unknown_cuda_version_has_no_default_archs(tmp_path: Path) -> None:
    matrix = tmp_path / "matrix.json"
    matrix.write_text(json.dumps({"arch_lists": {"12.6": "8.0"}}))
    with pytest.raises(ConfigError, match=r"no default arch list for CUDA 13\.0"):
        config.default_arch_list("13.0", matrix)


def test_env_flag_reads_zero_as_off() -> None:
    assert config.env_flag({"X": "0"}, "X") is False
    assert config.env_flag({"X": "off"}, "X") is False
    assert config.env_flag({"X": "1"}, "X") is True
    assert config.env_flag({}, "X") is None


def test_versions_compare_as_numbers() -> None:
    assert config.parse_version("2.10.0") > config.parse_version("2.9.1")
    assert config.parse_version("2.14.1+cu130") == (2, 14, 1)


def test_build_info_round_trip() -> None:
    info = make().build_info("abc123")
    assert info == {
        "version": "0.1.0+cu130",
        "torch": "2.14.1",
        "cuda": "13.0",
        "variant": "cu130",
        "abi": "stable",
        "arch_list": ["7.5", "8.0", "8.6", "9.0", "10.0", "12.0+PTX"],
        "git_sha": "abc123",
    }
