"""The one PyPI wheel installs on a CPU torch and on a CUDA torch, each loading its own library.

Real components: the wheel assembled by `nox -s tests` from the stable CPU part
and, where this machine has CUDA 13 nvcc, the stable cu130 part
($FUSEDOPS_PYPI_WHEEL); a fresh virtual environment with torch 2.13.0+cpu
(what PyTorch's CPU index serves; its wheel is on this machine's disk) and the
test session's own torch 2.14.1, a CUDA 13.0 build. Installs with pip and uv.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch_venv
from torch_venv import run

pytestmark = pytest.mark.slow

WHEEL = os.environ.get("FUSEDOPS_PYPI_WHEEL")
# Every op, forward and backward, on CPU tensors; prints what the loader chose.
RUN_OPS = """
import json, torch, fusedops
x = torch.randn(4, 64, requires_grad=True)
w = torch.randn(64, requires_grad=True)
r = torch.randn(4, 64)
y = fusedops.rms_norm(x, w)
ref = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w
assert torch.allclose(y, ref, atol=1e-5), "rms_norm"
out, res = fusedops.fused_add_rms_norm(x, r, w)
assert torch.allclose(res, x + r) and torch.allclose(out, fusedops.rms_norm(x + r, w)), "fused"
h = fusedops.silu_and_mul(x)
assert torch.allclose(h, torch.nn.functional.silu(x[:, :32]) * x[:, 32:], atol=1e-6), "silu"
(y.sum() + out.sum() + h.sum()).backward()
assert x.grad is not None and w.grad is not None
# The first CUDA call checks the GPU against the loaded library's archs, which
# fusedops.BUILD_INFO carries (the wheel's top-level build info has none: every
# CUDA op once raised KeyError).
archs = fusedops.BUILD_INFO["arch_list"]
print(json.dumps({"library": fusedops.BUILD_INFO.get("library"),
                  "why": fusedops.BUILD_INFO.get("library_why"),
                  "version": fusedops.__version__, "torch_cuda": torch.version.cuda,
                  "archs": archs}))
"""


def families() -> set[str]:
    assert WHEEL is not None
    with zipfile.ZipFile(WHEEL) as zf:
        return {n.split("/")[2] for n in zf.namelist() if n.startswith("fusedops/_lib/")}


@pytest.fixture(scope="module")
def cpu_torch_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    if not WHEEL:
        pytest.skip("set FUSEDOPS_PYPI_WHEEL to the assembled PyPI wheel (nox -s tests does)")
    with torch_venv.venv_with_wheel(tmp_path_factory.mktemp("pypi-cpu-torch"), WHEEL) as python:
        yield python


def test_a_cpu_torch_loads_the_cpu_library(cpu_torch_env: Path) -> None:
    result = run(cpu_torch_env, "-c", RUN_OPS)
    assert result.returncode == 0, result.stderr
    got = json.loads(result.stdout.strip().splitlines()[-1])
    assert got == {
        "library": "cpu",
        "why": "torch is a CPU-only build",
        "version": "0.1.0",
        "torch_cuda": None,
        "archs": [],
    }
    doctor = run(cpu_torch_env, "-m", "fusedops", "doctor")
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    assert "loaded                 cpu (torch is a CPU-only build)" in doctor.stdout
    assert f"libraries              {' '.join(sorted(families()))}" in doctor.stdout


def test_forcing_a_library_that_cannot_load_is_a_clear_import_error(cpu_torch_env: Path) -> None:
    if "cu13" not in families():
        pytest.skip("this PyPI wheel has no cu13 library (no CUDA 13 nvcc where it was built)")
    result = run(cpu_torch_env, "-c", "import fusedops", env={"FUSEDOPS_VARIANT": "cu13"})
    assert result.returncode == 1
    assert (
        "ImportError: fusedops cannot load: this wheel has CUDA kernels but the installed torch is a CPU-only build (the cu13 library was forced by FUSEDOPS_VARIANT=cu13; unset it)"
        in result.stderr
    )
    assert "undefined symbol" not in result.stderr and "Traceback" in result.stderr
    bogus = run(cpu_torch_env, "-c", "import fusedops", env={"FUSEDOPS_VARIANT": "cu11"})
    assert "FUSEDOPS_VARIANT=cu11 asks for a library this wheel does not carry" in bogus.stderr


def test_a_cuda_13_torch_loads_the_cu13_library(tmp_path: Path) -> None:
    """The test session's torch 2.14.1 is a CUDA 13.0 build: it gets the cu13 library
    (which runs CPU tensors on the CPU kernels it also carries)."""
    if not WHEEL:
        pytest.skip("set FUSEDOPS_PYPI_WHEEL to the assembled PyPI wheel (nox -s tests does)")
    import torch

    if (torch.version.cuda or "").split(".")[0] != "13":
        pytest.skip(f"this session's torch is {torch.__version__}, not a CUDA 13 build")
    if "cu13" not in families():
        pytest.skip("this PyPI wheel has no cu13 library (no CUDA 13 nvcc where it was built)")
    target = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target), WHEEL],
        check=True,
    )
    result = run(sys.executable, "-c", RUN_OPS, env={"PYTHONPATH": str(target)})
    assert result.returncode == 0, result.stderr
    got = json.loads(result.stdout.strip().splitlines()[-1])
    assert (got["library"], got["why"]) == ("cu13", "torch.version.cuda is 13.0")
    # the archs the GPU check will use: the cu13 part's, covering an H100 (sm_90)
    from fusedops import _compat

    assert _compat.arch_coverage((9, 0), got["archs"]).covered, got["archs"]


def test_uv_installs_it_too(tmp_path: Path, cpu_torch_env: Path) -> None:
    uv = shutil.which("uv") or str(Path(sys.executable).parent / "uv")
    if not Path(uv).exists():
        pytest.skip("uv is not installed in the test environment (nox -s tests installs it)")
    target = tmp_path / "uv-site"
    done = run(uv, "pip", "install", "--no-deps", "--target", str(target), WHEEL or "")
    assert done.returncode == 0, done.stderr
    result = run(cpu_torch_env, "-c", RUN_OPS, env={"PYTHONPATH": str(target)})
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.strip().splitlines()[-1])["library"] == "cpu"
