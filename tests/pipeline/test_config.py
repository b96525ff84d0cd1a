"""pipeline.config: what setup.py builds, and every way to ask for the impossible.

setup.py learns the cell from FUSEDOPS_CELL (the pipeline, nox, cibuildwheel)
or from the knobs FUSEDOPS_ABI / FUSEDOPS_CUDA / TORCH_CUDA_ARCH_LIST (a plain
`pip wheel --no-build-isolation .`); both paths are pure functions tested here.
"""

from __future__ import annotations

import pytest

from pipeline import config, matrix
from pipeline.archs import ArchList
from pipeline.config import ConfigError, decide
from pipeline.rules import Variant


@pytest.fixture(scope="module")
def m() -> matrix.Matrix:
    return matrix.load()


def make(env=None, torch="2.14.1+cu130", torch_cuda="13.0", toolkit="13.0", python="3.11"):
    return decide(
        base_version="0.1.0",
        torch_version=torch,
        torch_cuda=torch_cuda,
        toolkit_version=toolkit,
        env=env or {},
        python=python,
    )


# ---- the knobs ----------------------------------------------------------------------


def test_default_is_stable_cuda_with_the_matrix_arch_list(m) -> None:
    plan = make()
    cell = plan.cell
    assert (cell.abi, cell.variant, plan.version) == (
        "stable",
        Variant.parse("cu130"),
        "0.1.0+cu130",
    )
    assert plan.requirement == "torch>=2.10"
    assert cell.archs == m.cuda["13.0"].archs and cell.gcc == m.cuda["13.0"].gcc
    assert cell.archs.as_list() == ["7.5", "8.0", "8.6", "9.0", "10.0", "12.0+PTX"]


def test_classic_pins_the_torch_minor() -> None:
    plan = make({"FUSEDOPS_ABI": "classic"})
    assert plan.version == "0.1.0+cu130torch2.14"
    assert plan.requirement == "torch==2.14.*"
    assert plan.cell.wheel_tag == "cp311-cp311"


def test_old_torch_defaults_to_classic() -> None:
    plan = make(torch="2.9.1+cu128", torch_cuda="12.8", toolkit="12.8")
    assert plan.cell.abi == "classic" and plan.version == "0.1.0+cu128torch2.9"


def test_prerelease_torch_builds_against_its_public_version() -> None:
    plan = make(torch="2.15.0.dev20260101+cu130")
    assert (plan.cell.abi, str(plan.cell.torch)) == ("stable", "2.15.0.dev20260101")
    classic = make({"FUSEDOPS_ABI": "classic"}, torch="2.14.1rc1+cu130")
    assert classic.version == "0.1.0+cu130torch2.14"


def test_cpu_builds() -> None:
    assert make({"FUSEDOPS_CUDA": "0"}).version == "0.1.0+cpu"
    assert make({"FUSEDOPS_CUDA": "0", "FUSEDOPS_ABI": "classic"}).version == "0.1.0+cputorch2.14"
    no_toolkit = make(toolkit=None)
    assert no_toolkit.cell.variant.is_cpu and "no CUDA toolkit" in no_toolkit.notes[0]
    cpu_torch = make(torch="2.13.0+cpu", torch_cuda=None)
    assert cpu_torch.cell.variant.is_cpu and "CPU-only" in cpu_torch.notes[0]
    assert (cpu_torch.cell.archs, cpu_torch.cell.gcc) == (None, None)


def test_minor_mismatch_is_a_note_not_an_error(m) -> None:
    plan = make(toolkit="13.2")
    assert plan.cell.variant == Variant.parse("cu132")
    assert plan.cell.archs == m.cuda["13.2"].archs
    assert any("minor versions of one major mix at run time" in note for note in plan.notes)


def test_unlisted_toolkit_uses_the_newest_entry_of_its_major(m) -> None:
    plan = make(toolkit="13.1")
    assert plan.version == "0.1.0+cu131" and plan.cell.archs == m.toolkit("13.1").archs


def test_arch_list_override() -> None:
    plan = make({"TORCH_CUDA_ARCH_LIST": "9.0;10.0+PTX"})
    assert plan.cell.archs == ArchList.parse("9.0 10.0+PTX")
    assert plan.build_info(None)["arch_list"] == ["9.0", "10.0+PTX"]
    # a CPU build ignores it: there is nothing to compile for a GPU
    assert make({"FUSEDOPS_CUDA": "0", "TORCH_CUDA_ARCH_LIST": "9.0"}).cell.archs is None


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        (dict(env={"FUSEDOPS_ABI": "fast"}), "FUSEDOPS_ABI='fast': expected 'stable' or 'classic'"),
        (
            dict(env={"FUSEDOPS_ABI": "stable"}, torch="2.9.1", torch_cuda="12.8", toolkit="12.8"),
            "FUSEDOPS_ABI=stable needs torch >= 2.10 to build against, found 2.9.1",
        ),
        (dict(env={"FUSEDOPS_CUDA": "maybe"}), "FUSEDOPS_CUDA='maybe': expected one of 1/0"),
        (dict(env={"FUSEDOPS_CUDA": "1"}, toolkit=None), "FUSEDOPS_CUDA=1 but no CUDA toolkit was found"),
        (
            dict(env={"FUSEDOPS_CUDA": "1"}, torch="2.13.0+cpu", torch_cuda=None),
            "FUSEDOPS_CUDA=1 but torch 2.13.0 is a CPU-only build",
        ),
        (dict(toolkit="12.8"), "CUDA toolkit 12.8 and torch's CUDA 13.0 differ in major version"),
        (dict(env={"TORCH_CUDA_ARCH_LIST": "7.0"}), "TORCH_CUDA_ARCH_LIST='7.0': CUDA 13.0 cannot target sm_70"),
        (dict(env={"TORCH_CUDA_ARCH_LIST": "sm90"}), "arch 'sm90': expected a form like 8.0"),
        (dict(env={"TORCH_CUDA_ARCH_LIST": "10.0 9.0"}), "must be ascending without duplicates"),
        (dict(env={"TORCH_CUDA_ARCH_LIST": " ; "}), "TORCH_CUDA_ARCH_LIST=';': empty arch list"),
        (dict(torch="two"), "torch reports version 'two', which is not a PEP 440 version"),
    ],
)  # fmt: skip
def test_impossible_requests_are_clear_errors(kwargs, fragment: str) -> None:
    with pytest.raises(ConfigError) as info:
        make(**kwargs)
    assert fragment in str(info.value)


def test_env_flag_reads_zero_as_off() -> None:
    assert config.env_flag({"X": "0"}, "X") is False
    assert config.env_flag({"X": "off"}, "X") is False
    assert config.env_flag({"X": " Yes "}, "X") is True
    assert config.env_flag({"X": "1"}, "X") is True
    assert config.env_flag({}, "X") is None
    assert config.env_flag({"X": ""}, "X") is None


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
    assert make({"FUSEDOPS_CUDA": "0"}).build_info(None)["cuda"] is None


# ---- FUSEDOPS_CELL -------------------------------------------------------------------


def test_a_cell_id_builds_that_cell(m) -> None:
    plan = make({"FUSEDOPS_CELL": "stable-cu130-x86_64"})
    assert plan.cell == matrix.by_id("stable-cu130-x86_64", m)
    assert plan.version == "0.1.0+cu130" and plan.notes == ()


def test_a_cell_id_keeps_the_cell_and_records_the_torch_and_python_built_with(m) -> None:
    plan = make({"FUSEDOPS_CELL": "stable-cu132-x86_64"}, toolkit="13.2", python="3.12")
    cell = matrix.by_id("stable-cu132-x86_64", m)
    assert plan.cell == cell.built_with(torch="2.14.1", python="3.12")
    assert (plan.cell.id, plan.version, plan.cell.archs) == (cell.id, "0.1.0+cu132", cell.archs)


def test_a_classic_cell_id(m) -> None:
    cell_id = "classic-torch2.9-cu128-py3.12-x86_64"
    plan = make(
        {"FUSEDOPS_CELL": cell_id},
        torch="2.9.1+cu128",
        torch_cuda="12.8",
        toolkit="12.8",
        python="3.12",
    )
    assert plan.cell.id == cell_id and plan.version == "0.1.0+cu128torch2.9"
    assert plan.requirement == "torch==2.9.*"


def test_a_cpu_cell_needs_no_toolkit() -> None:
    plan = make(
        {"FUSEDOPS_CELL": "stable-cpu-x86_64"}, torch="2.14.1+cpu", torch_cuda=None, toolkit=None
    )
    assert plan.version == "0.1.0+cpu" and plan.cell.archs is None


def test_a_cell_id_with_an_arch_list_override() -> None:
    plan = make({"FUSEDOPS_CELL": "stable-cu130-x86_64", "TORCH_CUDA_ARCH_LIST": "9.0"})
    assert plan.cell.archs == ArchList.parse("9.0") and plan.cell.id == "stable-cu130-x86_64"


@pytest.mark.parametrize(
    ("env", "kwargs", "fragment"),
    [
        ({"FUSEDOPS_CELL": "stable-cu999-x86_64"}, {}, "FUSEDOPS_CELL=stable-cu999-x86_64: no cell 'stable-cu999-x86_64' in matrix.json"),
        ({"FUSEDOPS_CELL": "stable-cu130-x86_64"}, dict(toolkit="13.2"), "cell stable-cu130-x86_64 needs CUDA 13.0, but the toolkit found is 13.2"),
        ({"FUSEDOPS_CELL": "stable-cu130-x86_64"}, dict(toolkit=None), "cell stable-cu130-x86_64 needs CUDA 13.0, but the toolkit found is none"),
        ({"FUSEDOPS_CELL": "stable-cu126-x86_64"}, dict(toolkit="12.6"), "cell stable-cu126-x86_64 needs a CUDA 12.x torch, found torch 2.14.1 (13.0)"),
        ({"FUSEDOPS_CELL": "stable-cu130-x86_64"}, dict(torch="2.14.1+cpu", torch_cuda=None), "needs a CUDA 13.x torch, found torch 2.14.1 (CPU only)"),
        ({"FUSEDOPS_CELL": "classic-torch2.11-cu130-py3.11-x86_64"}, {}, "cell classic-torch2.11-cu130-py3.11-x86_64 builds against torch 2.11.x, found torch 2.14.1"),
        ({"FUSEDOPS_CELL": "stable-cpu-x86_64"}, dict(torch="2.9.1", torch_cuda=None, toolkit=None), "cell stable-cpu-x86_64 is a stable-ABI cell and needs torch >= 2.10, found 2.9.1"),
    ],
)  # fmt: skip
def test_a_cell_that_does_not_fit_is_an_error_naming_it(env, kwargs, fragment) -> None:
    with pytest.raises(ConfigError) as info:
        make(env, **kwargs)
    assert fragment in str(info.value)


def test_the_cell_id_wins_over_the_knobs() -> None:
    plan = make({"FUSEDOPS_CELL": "stable-cu130-x86_64", "FUSEDOPS_ABI": "classic"})
    assert plan.cell.abi == "stable"
