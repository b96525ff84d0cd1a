"""Build one cell: toolchain, compile, repair, gate. The one build path.

`nox -s build` / `nox -s wheel` run `python -m pipeline build`, and the
cibuildwheel hooks (pipeline/cibw.py) call the same toolchain, repair and gate
functions around cibuildwheel's own compile of the same setup.py, so the
container build differs from the local one only by the container.

Each step is a function that returns a typed result; nothing is scraped from
another step's output.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from . import gate, matrix
from .cell import Cell
from .repair import repair
from .rules import REPO, Variant
from .toolchain import Log, ToolchainError
from .toolchain.cuda import find_toolkit
from .toolchain.env import build_env
from .toolchain.python_env import build_python


class BuildError(RuntimeError):
    pass


@dataclass(frozen=True)
class BuildResult:
    cell: Cell
    wheel: Path  # the repaired wheel that passed the gate
    gate: gate.GateReport
    compile_seconds: float
    sha256: str

    def summary(self) -> str:
        size = self.wheel.stat().st_size / 1e6
        return f"{self.wheel}  ({size:.2f} MB, compiled in {self.compile_seconds:.0f}s, sha256 {self.sha256[:16]}...)"


def log(message: str) -> None:
    print(f"[pipeline build] {message}", file=sys.stderr, flush=True)


def local_cell() -> Cell:
    """The stable cell of this machine's CUDA toolkit (cpu without one)."""
    toolkit = find_toolkit()
    variant = Variant.parse(toolkit.version) if toolkit else Variant(None)
    cells = matrix.select(
        matrix.expand(), abi="stable", variant=variant, platform=matrix.this_platform()
    )
    if len(cells) != 1:
        raise BuildError(
            f"no stable cell in pipeline/matrix.json for {variant} on {matrix.this_platform()}; "
            "name one: `python -m pipeline build CELL_ID` (`python -m pipeline matrix` lists them)"
        )
    log(
        f"this machine: CUDA toolkit {toolkit.version if toolkit else 'none'} -> cell {cells[0].id}"
    )
    return cells[0]


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def clean_tree() -> None:
    # setuptools reuses build/ across configurations: a stale _C.*.so of another
    # ABI would end up in the wheel. ccache makes the rebuild cheap.
    shutil.rmtree(REPO / "build", ignore_errors=True)
    for so in (REPO / "src" / "fusedops").glob("_C*.so"):
        so.unlink()


def compile_wheel(cell: Cell, python: Path, env: dict[str, str], dist: Path) -> Path:
    """`pip wheel --no-build-isolation` of the checkout in the cell's torch env."""
    clean_tree()
    cmd = [
        str(python),
        "-m",
        "pip",
        "wheel",
        "-v",
        "--no-build-isolation",
        "--no-deps",
        "-w",
        str(dist),
        ".",
    ]
    log("$ " + " ".join(cmd))
    # The interpreter's bin/ first on PATH, as activating its venv would: torch's
    # extension builder runs `ninja` from PATH and, without it, falls back to a
    # slow serial build; the env's ninja lives there.
    env = {**os.environ, **env}
    env["PATH"] = os.pathsep.join([str(python.parent), env.get("PATH", os.defpath)])
    # pip -v streams setup.py's and ninja's progress ([n/m] lines) to the terminal.
    proc = subprocess.run(cmd, env=env, cwd=REPO, check=False, stdout=sys.stderr)
    if proc.returncode != 0:
        raise BuildError(
            f"the build of {cell.id} failed (exit {proc.returncode}); its log is above"
        )
    built = sorted(dist.glob("fusedops-*.whl"))
    if len(built) != 1:
        raise BuildError(f"expected one wheel, pip produced {[b.name for b in built]}")
    return built[0]


def torch_lib(python: Path) -> Path:
    out = subprocess.run(
        [
            str(python),
            "-c",
            "import importlib.util, os; print(os.path.dirname(importlib.util.find_spec('torch').origin))",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    if out.returncode != 0:
        raise BuildError(f"{python} has no torch: {out.stderr.strip()[-500:]}")
    return Path(out.stdout.strip()) / "lib"


def build_once(cell: Cell, python: Path, env: dict[str, str], out_dir: Path) -> tuple[Path, float]:
    with tempfile.TemporaryDirectory(prefix="fusedops-dist-") as dist:
        start = time.monotonic()
        built = compile_wheel(cell, python, env, Path(dist))
        seconds = time.monotonic() - start
        log(f"compiled {built.name} in {seconds:.0f}s; auditwheel repair ...")
        if env.get("SOURCE_DATE_EPOCH"):  # auditwheel rewrites the zip: keep its timestamps fixed
            os.environ["SOURCE_DATE_EPOCH"] = env["SOURCE_DATE_EPOCH"]
        repaired = repair(built, out_dir, torch_lib=torch_lib(python))
    return repaired, seconds


def build_cell(
    cell: Cell,
    out_dir: Path,
    *,
    check_reproducible: bool = False,
    torch_python: Path | str | None = None,
    torch_index: bool = False,
    log: Log = log,
) -> BuildResult:
    """Toolchain -> compile -> repair -> gate for one cell; raises BuildError/ToolchainError.

    `torch_python` builds with that interpreter (checked to hold the cell's torch,
    Python and build tools) instead of the cached torch env; `torch_index` fills that
    env from PyTorch's index for the cell's variant instead of pip's indexes.
    """
    log(f"cell {cell.id}: torch {cell.torch}, Python {cell.python}, {cell.variant}, abi {cell.abi}")
    python = build_python(
        str(cell.torch),
        cell.python,
        variant=cell.variant,
        given=torch_python,
        torch_index=torch_index,
        log=log,
    )
    env = build_env(cell, log=log)
    wheel, seconds = build_once(cell, python, env, out_dir)
    if check_reproducible:
        with tempfile.TemporaryDirectory(prefix="fusedops-repro-") as second_dir:
            second, _ = build_once(cell, python, env, Path(second_dir))
            first_hash, second_hash = sha256(wheel), sha256(second)
            if first_hash != second_hash:
                raise BuildError(
                    f"not reproducible: two builds of {cell.id} differ ({first_hash[:12]} vs {second_hash[:12]})"
                )
            log(f"reproducible: both builds are {first_hash}")
    log("verification gate ...")
    report = gate.verify(wheel, cell=cell, smoke_python=python, log=log)
    print(report.table(), flush=True)
    if not report.ok:
        raise BuildError(f"{wheel.name} failed the verification gate (table above)")
    return BuildResult(cell, wheel, report, seconds, sha256(wheel))


def check_out_dir(out: Path) -> Path:
    """The output directory, created and proven writable before any download or compile."""
    try:
        out.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=out, prefix=".write-test-"):
            pass
    except OSError as err:
        raise BuildError(f"--out {out}: cannot write there ({err.strerror})") from None
    return out.resolve()


__all__ = [
    "BuildError",
    "BuildResult",
    "ToolchainError",
    "build_cell",
    "check_out_dir",
    "local_cell",
]
