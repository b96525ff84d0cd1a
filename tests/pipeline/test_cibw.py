"""The shell helpers under scripts/ci, run against stub toolchains (no CUDA, no dnf).

cibw_before_all.sh runs inside the manylinux container in CI; here it runs on
the host with a stub scripts/toolchain.py that "installs" a fake CUDA tree, so
its plumbing (which source, where CUDA_HOME ends up, what it checks) is tested.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CI = REPO / "scripts" / "ci"

pytestmark = pytest.mark.skipif(
    shutil.which("bash") is None or not sys.platform.startswith("linux"),
    reason="the CI helpers are bash scripts for Linux runners and manylinux containers",
)


def fake_toolkit(root: Path, release: str) -> Path:
    """A directory that looks like a CUDA toolkit whose nvcc reports ``release``."""
    (root / "bin").mkdir(parents=True)
    (root / "include").mkdir()
    (root / "lib64").mkdir()
    (root / "include" / "cuda_runtime.h").write_text("/* stub */\n")
    (root / "lib64" / "libcudart.so").write_text("")
    nvcc = root / "bin" / "nvcc"
    nvcc.write_text(
        "#!/usr/bin/env bash\n"
        'if [[ "$1" == --version ]]; then\n'
        f'  echo "Cuda compilation tools, release {release}, V{release}.1"\n'
        "  exit 0\n"
        "fi\n"
        'echo "nvcc $*"\n'
    )
    nvcc.chmod(0o755)
    return root


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project tree with the real scripts/ci and a stub scripts/toolchain.py."""
    root = tmp_path / "project"
    shutil.copytree(CI, root / "scripts" / "ci")
    toolkit = fake_toolkit(tmp_path / "pypi-cuda", "13.0")
    (root / "scripts" / "toolchain.py").write_text(
        "import sys\n"
        "assert sys.argv[1:] == ['cuda', '--cuda', '13.0', '--print-home'], sys.argv\n"
        "print('installing cuda-toolkit from PyPI ...')\n"
        f"print({str(toolkit)!r})\n"
    )
    return root


def run_before_all(project: Path, **env: str) -> subprocess.CompletedProcess[str]:
    full_env = {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/tmp"), **env}
    return subprocess.run(
        ["bash", str(project / "scripts" / "ci" / "cibw_before_all.sh")],
        env=full_env,
        capture_output=True,
        text=True,
        check=False,
    )


def test_before_all_links_the_pypi_toolkit_at_cuda_home(project: Path, tmp_path: Path) -> None:
    cuda_home = tmp_path / "opt" / "fusedops" / "cuda"
    result = run_before_all(
        project,
        FUSEDOPS_CELL_CUDA="13.0",
        FUSEDOPS_CELL_CUDA_SOURCE="pypi",
        CUDA_HOME=str(cuda_home),
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert cuda_home.is_symlink()
    assert cuda_home.resolve() == (tmp_path / "pypi-cuda").resolve()
    assert "release 13.0" in result.stdout


def test_before_all_does_nothing_for_cpu_cells(project: Path) -> None:
    result = run_before_all(
        project, FUSEDOPS_CELL_CUDA="cpu", FUSEDOPS_CELL_CUDA_SOURCE="none", CUDA_HOME=""
    )
    assert result.returncode == 0, result.stderr
    assert "CPU cell" in result.stdout


def test_before_all_rejects_a_toolkit_of_the_wrong_version(project: Path, tmp_path: Path) -> None:
    result = run_before_all(
        project,
        FUSEDOPS_CELL_CUDA="13.2",  # the stub toolchain only answers 13.0
        FUSEDOPS_CELL_CUDA_SOURCE="pypi",
        CUDA_HOME=str(tmp_path / "cuda"),
    )
    assert result.returncode != 0


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"FUSEDOPS_CELL_CUDA_SOURCE": "pypi", "CUDA_HOME": "/x"}, "FUSEDOPS_CELL_CUDA is not set"),
        ({"FUSEDOPS_CELL_CUDA": "13.0", "CUDA_HOME": "/x"}, "FUSEDOPS_CELL_CUDA_SOURCE is not set"),
        (
            {"FUSEDOPS_CELL_CUDA": "13.0", "FUSEDOPS_CELL_CUDA_SOURCE": "conda", "CUDA_HOME": "/x"},
            "unknown FUSEDOPS_CELL_CUDA_SOURCE",
        ),
        ({"FUSEDOPS_CELL_CUDA": "12.8", "FUSEDOPS_CELL_CUDA_SOURCE": "none"}, "cuda_source 'none'"),
        (
            {"FUSEDOPS_CELL_CUDA": "13.0", "FUSEDOPS_CELL_CUDA_SOURCE": "pypi"},
            "CUDA_HOME is not set",
        ),
    ],
)
def test_before_all_explains_bad_input(project: Path, env: dict[str, str], message: str) -> None:
    result = run_before_all(project, **env)
    assert result.returncode != 0
    assert message in result.stderr


def test_before_all_will_not_replace_a_real_directory(project: Path, tmp_path: Path) -> None:
    occupied = tmp_path / "occupied"
    occupied.mkdir()
    result = run_before_all(
        project,
        FUSEDOPS_CELL_CUDA="13.0",
        FUSEDOPS_CELL_CUDA_SOURCE="pypi",
        CUDA_HOME=str(occupied),
    )
    assert result.returncode != 0
    assert "not a symlink" in result.stderr


def test_ccache_nvcc_runs_nvcc_through_ccache(tmp_path: Path) -> None:
    toolkit = fake_toolkit(tmp_path / "cuda", "13.0")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    ccache = bin_dir / "ccache"
    ccache.write_text('#!/usr/bin/env bash\necho "ccache $*"\n')
    ccache.chmod(0o755)
    wrapper = CI / "ccache-nvcc.sh"
    assert os.access(wrapper, os.X_OK), (
        "PYTORCH_NVCC runs the wrapper directly: it must be executable"
    )

    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "CUDA_HOME": str(toolkit)}
    cached = subprocess.run(
        [str(wrapper), "-c", "k.cu"], env=env, capture_output=True, text=True, check=True
    )
    assert cached.stdout.strip() == f"ccache {toolkit}/bin/nvcc -c k.cu"

    env["PATH"] = "/usr/bin:/bin"
    if shutil.which("ccache", path=env["PATH"]):
        pytest.skip("a real ccache is installed in /usr/bin")
    direct = subprocess.run(
        [str(wrapper), "-c", "k.cu"], env=env, capture_output=True, text=True, check=True
    )
    assert direct.stdout.strip() == "nvcc -c k.cu"


def test_ccache_nvcc_needs_cuda_home() -> None:
    result = subprocess.run(
        [str(CI / "ccache-nvcc.sh")],
        env={"PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode != 0 and "CUDA_HOME is not set" in result.stderr


def test_install_cuda_nvidia_repo_checks_its_argument() -> None:
    script = str(CI / "install_cuda_nvidia_repo.sh")
    text = Path(script).read_text()
    assert 'case "$(uname -m)"' in text, "the NVIDIA repository differs by arch (x86_64, sbsa)"
    missing = subprocess.run(["bash", script], capture_output=True, text=True, check=False)
    assert missing.returncode != 0 and "usage" in missing.stderr
    wrong = subprocess.run(["bash", script, "13.0"], capture_output=True, text=True, check=False)
    assert wrong.returncode == 2 and "12.x" in wrong.stderr
