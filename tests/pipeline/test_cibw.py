"""cibuildwheel's configuration and hooks (pipeline.cibw), and nox's build sessions.

The release path (cibuildwheel in the manylinux container) and the local one
(`nox -s build` / `nox -s wheel`) must reach the same pipeline functions:
pyproject.toml's [tool.cibuildwheel] commands are parsed here and run through
`pipeline.__main__` with the functions they reach replaced by recorders.
"""

from __future__ import annotations

import ast
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib

import pipeline.repair
from pipeline import __main__ as cli
from pipeline import build, cibw, matrix
from pipeline.rules import REPO
from pipeline.toolchain import ToolchainError
from pipeline.toolchain.cuda import NVIDIA_REPO_SCRIPT
from pipeline.toolchain.python_env import BUILD_DEPS, REPAIR_DEPS

CIBW = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["cibuildwheel"]
STABLE = matrix.by_id("stable-cu130-x86_64")
CLASSIC = matrix.by_id("classic-torch2.9-cu128-py3.12-x86_64")
CPU = matrix.by_id("stable-cpu-x86_64")


def pipeline_args(option: str) -> list[str]:
    """The arguments after `python -m pipeline` in a cibuildwheel command."""
    steps = [shlex.split(part) for part in CIBW[option].split("&&")]
    calls = [s for s in steps if s[1:3] == ["-m", "pipeline"]]
    assert len(calls) == 1, f"{option} must run `python -m pipeline ...` once: {CIBW[option]!r}"
    assert Path(calls[0][0]).name.startswith("python"), calls[0]
    return calls[0][3:]


# ---- the configuration -------------------------------------------------------------


@pytest.mark.parametrize(
    ("option", "args"),
    [
        ("before-all", ["cibw", "before-all"]),
        ("before-build", ["cibw", "install-torch"]),
        ("before-test", ["cibw", "install-torch"]),
        ("repair-wheel-command", ["repair", "{wheel}", "-w", "{dest_dir}"]),
        ("test-command", ["cibw", "test", "{wheel}"]),
    ],
)
def test_every_hook_is_a_pipeline_command(option: str, args: list[str]) -> None:
    assert pipeline_args(option) == args
    assert "cd {project}" in CIBW[option]  # `pipeline` is imported from the checkout


def test_the_cell_travels_as_one_variable() -> None:
    passed = CIBW["environment-pass"]
    assert "FUSEDOPS_CELL" in passed
    assert not [v for v in passed if v.startswith("FUSEDOPS_CELL_")]  # no loose cell fields
    assert CIBW["build-frontend"] == {"name": "pip", "args": ["--no-build-isolation"]}


@pytest.fixture
def recorded(monkeypatch, tmp_path: Path) -> list:
    """Run hooks for STABLE with every function they reach replaced by a recorder."""
    calls: list = []
    monkeypatch.setenv("FUSEDOPS_CELL", STABLE.id)
    monkeypatch.setattr(cibw, "before_all", lambda cell: calls.append(("before_all", cell)))
    monkeypatch.setattr(cibw, "install_torch", lambda cell: calls.append(("install_torch", cell)))

    def repair(wheel, out_dir, plat=None, *, torch_lib=None):
        calls.append(("repair", Path(wheel), Path(out_dir)))
        return Path(out_dir) / Path(wheel).name

    class Report:
        ok = True

        def table(self) -> str:
            return "gate table"

    def verify(wheel, *, cell, smoke_python):
        calls.append(("verify", Path(wheel), cell, smoke_python))
        return Report()

    monkeypatch.setattr(pipeline.repair, "repair", repair)
    monkeypatch.setattr(cibw.gate, "verify", verify)
    return calls


def substituted(option: str, tmp_path: Path) -> list[str]:
    values = {"{wheel}": str(tmp_path / "w.whl"), "{dest_dir}": str(tmp_path / "out")}
    return [values.get(a, a) for a in pipeline_args(option)]


@pytest.mark.parametrize(
    ("option", "reaches"),
    [
        ("before-all", "before_all"),
        ("before-build", "install_torch"),
        ("before-test", "install_torch"),
        ("repair-wheel-command", "repair"),
        ("test-command", "verify"),
    ],
)
def test_hooks_reach_the_pipeline_functions(recorded, tmp_path: Path, option, reaches) -> None:
    assert cli.main(substituted(option, tmp_path)) == 0
    (call,) = recorded
    assert call[0] == reaches
    if reaches in ("before_all", "install_torch"):
        assert call[1] == STABLE
    elif reaches == "repair":
        assert call[1:] == (tmp_path / "w.whl", tmp_path / "out")
    else:
        assert call[1:] == (tmp_path / "w.whl", STABLE, Path(sys.executable))


def test_cibuildwheel_repairs_and_gates_with_the_functions_the_local_build_uses() -> None:
    assert build.repair is pipeline.repair.repair
    assert cibw.gate is build.gate and callable(cibw.gate.verify)


def test_nox_build_and_wheel_sessions_run_the_pipeline_build() -> None:
    tree = ast.parse((REPO / "noxfile.py").read_text())
    sessions = {f.name: f for f in tree.body if isinstance(f, ast.FunctionDef)}
    for name in ("build", "wheel"):
        runs = [
            node
            for node in ast.walk(sessions[name])
            if isinstance(node, ast.Call) and ast.unparse(node.func) == "session.run"
        ]
        args = [ast.unparse(a) for a in runs[-1].args]
        assert args == ["'python'", "'-m'", "'pipeline'", "'build'", "*session.posargs"], name
        decorators = [ast.unparse(d) for d in sessions[name].decorator_list]
        assert any(d.startswith("nox.session") for d in decorators), name


# ---- cibuildwheel itself selects one build per cell ------------------------------------


@pytest.mark.skipif(
    shutil.which("cibuildwheel") is None
    and not (Path(sys.executable).parent / "cibuildwheel").exists(),
    reason="cibuildwheel is not installed",
)
@pytest.mark.parametrize(
    ("cell_id", "archs", "identifier"),
    [
        ("stable-cu130-x86_64", None, "cp311-manylinux_x86_64"),
        ("classic-torch2.9-cu128-py3.12-x86_64", None, "cp312-manylinux_x86_64"),
        ("stable-cpu-aarch64", "aarch64", "cp311-manylinux_aarch64"),  # as on the arm runner
    ],
)  # fmt: skip
def test_cibuildwheel_selects_exactly_the_cells_build(cell_id, archs, identifier) -> None:
    exe = shutil.which("cibuildwheel") or str(Path(sys.executable).parent / "cibuildwheel")
    env = {k: v for k, v in os.environ.items() if not k.startswith("CIBW_")}
    env |= cibw.github_env(matrix.by_id(cell_id))
    if archs:
        env["CIBW_ARCHS"] = archs
    out = subprocess.run(
        [exe, "--print-build-identifiers", "--platform", "linux"],
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [identifier]


# ---- `python -m pipeline cibw env` ------------------------------------------------------


def run_cibw(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if k != "FUSEDOPS_CELL"} | env
    cmd = [sys.executable, "-m", "pipeline", "cibw", *args]
    return subprocess.run(cmd, capture_output=True, text=True, check=False, cwd=REPO, env=full)


def test_cibw_env_lines() -> None:
    out = run_cibw("env", "stable-cu130-x86_64")
    assert out.returncode == 0, out.stderr
    lines = dict(line.split("=", 1) for line in out.stdout.splitlines())
    assert lines["FUSEDOPS_CELL"] == "stable-cu130-x86_64"
    assert lines["CIBW_BUILD"] == "cp311-manylinux_x86_64"
    assert lines["CIBW_MANYLINUX_X86_64_IMAGE"] == STABLE.platform.manylinux_image
    assert "@sha256:" in lines["CIBW_MANYLINUX_X86_64_IMAGE"]
    assert lines["SOURCE_DATE_EPOCH"].isdigit()
    assert set(lines) == {
        "FUSEDOPS_CELL",
        "CIBW_BUILD",
        "CIBW_MANYLINUX_X86_64_IMAGE",
        "SOURCE_DATE_EPOCH",
    }


def test_github_env_of_cells() -> None:
    assert cibw.github_env(CLASSIC)["CIBW_BUILD"] == "cp312-manylinux_x86_64"
    arm = cibw.github_env(matrix.by_id("stable-cu130-aarch64"))
    assert arm["CIBW_MANYLINUX_AARCH64_IMAGE"].startswith("quay.io/pypa/manylinux_2_28_aarch64@")


def test_cibw_env_unknown_cell_is_one_line_exit_2() -> None:
    out = run_cibw("env", "no-such-cell")
    assert (out.returncode, out.stdout) == (2, "")
    assert out.stderr == "pipeline cibw env: error: no cell 'no-such-cell' in matrix.json\n"


@pytest.mark.parametrize("step", ["before-all", "install-torch"])
def test_hooks_without_a_cell_are_one_line_exit_2(step: str) -> None:
    out = run_cibw(step)
    assert (out.returncode, out.stdout) == (2, "")
    assert out.stderr.startswith(f"pipeline cibw {step}: error: FUSEDOPS_CELL is not set")
    assert out.stderr.count("\n") == 1


def test_hooks_with_an_unknown_cell(monkeypatch, capsys) -> None:
    monkeypatch.setenv("FUSEDOPS_CELL", "stable-cu999-x86_64")
    assert cibw.main(["install-torch"]) == 2
    assert "no cell 'stable-cu999-x86_64' in matrix.json" in capsys.readouterr().err


# ---- the hooks' work --------------------------------------------------------------------


class Runs:
    """subprocess.run stand-in: records commands, answers with the given stdout/returncode."""

    def __init__(self, stdout: str = "", returncode: int = 0) -> None:
        self.commands: list[list[str]] = []
        self.stdout, self.returncode = stdout, returncode

    def __call__(self, cmd, **kwargs):
        self.commands.append([str(c) for c in cmd])
        return subprocess.CompletedProcess(cmd, self.returncode, self.stdout, "")


@pytest.fixture
def link(monkeypatch, tmp_path: Path) -> Path:
    path = tmp_path / "usr-local-cuda"
    monkeypatch.setattr(cibw, "CUDA_LINK", path)
    return path


def test_before_all_cpu_cell_does_nothing(monkeypatch, link: Path) -> None:
    runs = Runs()
    monkeypatch.setattr(cibw.subprocess, "run", runs)
    lines: list[str] = []
    cibw.before_all(CPU, log=lines.append)
    assert runs.commands == [] and not link.exists()
    assert lines == ["stable-cpu-x86_64: CPU cell, no CUDA toolkit or host compiler to provide"]


def test_before_all_links_the_pypi_toolkit(monkeypatch, tmp_path: Path, link: Path) -> None:
    home = tmp_path / "cache" / "cuda-13.0"
    home.mkdir(parents=True)
    asked = []
    monkeypatch.setattr(cibw, "cuda_home", lambda version, log: asked.append(version) or home)
    monkeypatch.setattr(cibw, "toolset_compilers", lambda gcc: {"CC": f"gcc-{gcc}"})
    runs = Runs()
    monkeypatch.setattr(cibw.subprocess, "run", runs)
    lines: list[str] = []
    cibw.before_all(STABLE, log=lines.append)
    assert asked == ["13.0"] and runs.commands == []  # no dnf: the toolset is there
    assert link.is_symlink() and link.resolve() == home
    assert f"stable-cu130-x86_64: CUDA 13.0 at {link} -> {home}" in lines


def test_before_all_installs_cuda_12_from_nvidias_repository(
    monkeypatch, tmp_path: Path, link: Path
) -> None:
    home = tmp_path / "cuda-12.8"
    home.mkdir()
    link.symlink_to(tmp_path)  # an old link is replaced
    runs = Runs(stdout=f"dnf says things\n{home}\n")
    monkeypatch.setattr(cibw.subprocess, "run", runs)
    toolsets = iter([{}, {"CC": "gcc-14"}])
    monkeypatch.setattr(cibw, "toolset_compilers", lambda gcc: next(toolsets))
    cibw.before_all(CLASSIC, log=lambda m: None)
    assert runs.commands[0] == ["bash", str(REPO / NVIDIA_REPO_SCRIPT), "12.8"]
    gcc = CLASSIC.gcc
    assert runs.commands[1] == [
        "dnf",
        "install",
        "-y",
        f"gcc-toolset-{gcc}-gcc",
        f"gcc-toolset-{gcc}-gcc-c++",
    ]
    assert link.resolve() == home


def test_before_all_failures_are_toolchain_errors(monkeypatch, tmp_path: Path, link: Path) -> None:
    monkeypatch.setattr(cibw.subprocess, "run", Runs(returncode=1))
    with pytest.raises(ToolchainError, match=rf"{NVIDIA_REPO_SCRIPT} 12\.8 failed \(exit 1\)"):
        cibw.before_all(CLASSIC, log=lambda m: None)
    monkeypatch.setattr(cibw, "cuda_home", lambda version, log: tmp_path)
    monkeypatch.setattr(cibw, "toolset_compilers", lambda gcc: {})
    with pytest.raises(
        ToolchainError, match=r"dnf install gcc-toolset-\d+-gcc gcc-toolset-\d+-gcc-c\+\+ failed"
    ):
        cibw.before_all(STABLE, log=lambda m: None)


def test_before_all_will_not_replace_a_real_directory(
    monkeypatch, tmp_path: Path, link: Path
) -> None:
    link.mkdir()
    monkeypatch.setattr(cibw, "cuda_home", lambda version, log: tmp_path / "cuda-13.0")
    with pytest.raises(
        ToolchainError, match=rf"{link} is a directory, not a link: it would hide CUDA 13\.0"
    ):
        cibw.before_all(STABLE, log=lambda m: None)
    assert link.is_dir() and not link.is_symlink()


def test_install_torch_uses_the_cells_torch_and_index(monkeypatch) -> None:
    runs = Runs()
    monkeypatch.setattr(cibw.subprocess, "run", runs)
    cibw.install_torch(CLASSIC)
    python = sys.executable
    assert runs.commands == [
        [
            python,
            "-m",
            "pip",
            "install",
            "torch==2.9.1",
            "--index-url",
            "https://download.pytorch.org/whl/cu128",
        ],
        [python, "-m", "pip", "install", *BUILD_DEPS, *REPAIR_DEPS],
    ]
    monkeypatch.setattr(cibw.subprocess, "run", Runs(returncode=1))
    with pytest.raises(
        ToolchainError, match=r"failed: .* -m pip install torch==2\.9\.1 --index-url"
    ):
        cibw.install_torch(CLASSIC)


def test_gate_failure_fails_the_test_hook(recorded, monkeypatch, tmp_path: Path, capsys) -> None:
    class Failed:
        ok = False

        def table(self) -> str:
            return "FAIL table"

    monkeypatch.setattr(
        cibw.gate, "verify", lambda wheel, *, cell, smoke_python: Failed(), raising=False
    )
    assert cibw.main(["test", str(tmp_path / "w.whl")]) == 1
    assert capsys.readouterr().out == "FAIL table\n"


# ---- the NVIDIA repository installer (runs in the container) ------------------------------


@pytest.mark.skipif(shutil.which("bash") is None, reason="a bash script")
def test_install_cuda_nvidia_repo_checks_its_argument() -> None:
    script = REPO / NVIDIA_REPO_SCRIPT
    assert 'case "$(uname -m)"' in script.read_text(), "the NVIDIA repository differs by arch"
    missing = subprocess.run(["bash", str(script)], capture_output=True, text=True, check=False)
    assert missing.returncode != 0 and "usage" in missing.stderr
    wrong = subprocess.run(
        ["bash", str(script), "13.0"], capture_output=True, text=True, check=False
    )
    assert (
        wrong.returncode == 2
        and "expected a CUDA 12.x version such as 12.8, got '13.0'" in wrong.stderr
    )
    assert "scripts/toolchain.py" not in wrong.stderr  # gone: it names the pipeline's function
