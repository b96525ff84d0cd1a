"""cibuildwheel's hooks: the pipeline's own steps, run inside the manylinux container.

pyproject.toml's [tool.cibuildwheel] calls `python -m pipeline cibw STEP` (and
`python -m pipeline repair` as repair-wheel-command). The cell travels as one
variable, FUSEDOPS_CELL=<cell id>; every step looks it up in matrix.json.

    env CELL_ID      (on the runner) KEY=VALUE lines for $GITHUB_ENV: CIBW_BUILD,
                     the pinned image, FUSEDOPS_CELL, SOURCE_DATE_EPOCH
    before-all       the cell's CUDA toolkit at /usr/local/cuda and its gcc-toolset
    install-torch    the cell's torch (from PyTorch's index for its variant) + build deps
    test WHEEL       the verification gate, smoke-tested in this interpreter
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from . import gate, matrix
from .cell import Cell
from .rules import REPO
from .toolchain import ToolchainError
from .toolchain.cuda import NVIDIA_REPO_SCRIPT, cuda_home, toolset_compilers
from .toolchain.env import source_date_epoch
from .toolchain.python_env import BUILD_DEPS, REPAIR_DEPS

CUDA_LINK = Path("/usr/local/cuda")  # where setup.py's find_toolkit looks last


def current_cell(env: dict[str, str] | os._Environ = os.environ) -> Cell:
    cell_id = env.get("FUSEDOPS_CELL", "").strip()
    if not cell_id:
        raise ToolchainError(
            "FUSEDOPS_CELL is not set (the cell id; wheels.yml exports it and environment-pass carries it)"
        )
    return matrix.by_id(cell_id)


def github_env(cell: Cell) -> dict[str, str]:
    """What the runner exports before cibuildwheel starts: the cell decides all of it."""
    out = {
        "FUSEDOPS_CELL": cell.id,
        "CIBW_BUILD": f"cp{cell.python.replace('.', '')}-manylinux_{cell.platform.machine}",
        f"CIBW_MANYLINUX_{cell.platform.machine.upper()}_IMAGE": cell.platform.manylinux_image,
    }
    if epoch := source_date_epoch():
        out["SOURCE_DATE_EPOCH"] = epoch
    return out


def pip_torch_command(cell: Cell, python: str = sys.executable) -> list[str]:
    """The one way a build or test environment gets the cell's torch."""
    return [
        python,
        "-m",
        "pip",
        "install",
        f"torch=={cell.torch}",
        "--index-url",
        cell.torch_index_url,
    ]


def before_all(cell: Cell, log=print) -> None:
    if cell.variant.is_cpu:
        log(f"{cell.id}: CPU cell, no CUDA toolkit or host compiler to provide")
        return
    if cell.toolkit_source == "pypi":
        home = cuda_home(cell.cuda, log=log)
    else:
        out = subprocess.run(
            ["bash", str(REPO / NVIDIA_REPO_SCRIPT), cell.cuda],
            stdout=subprocess.PIPE,
            text=True,
            check=False,
        )
        if out.returncode != 0:
            raise ToolchainError(f"{NVIDIA_REPO_SCRIPT} {cell.cuda} failed (exit {out.returncode})")
        home = Path(out.stdout.strip().splitlines()[-1])
    if CUDA_LINK.exists() and not CUDA_LINK.is_symlink():
        raise ToolchainError(
            f"{CUDA_LINK} is a directory, not a link: it would hide CUDA {cell.cuda} at {home}"
        )
    CUDA_LINK.unlink(missing_ok=True)
    CUDA_LINK.symlink_to(home)
    log(f"{cell.id}: CUDA {cell.cuda} at {CUDA_LINK} -> {home}")
    if not toolset_compilers(cell.gcc):
        pkgs = [f"gcc-toolset-{cell.gcc}-gcc", f"gcc-toolset-{cell.gcc}-gcc-c++"]
        if subprocess.run(["dnf", "install", "-y", *pkgs], check=False).returncode != 0:
            raise ToolchainError(f"dnf install {' '.join(pkgs)} failed")
    log(f"{cell.id}: host compiler {toolset_compilers(cell.gcc)}")


def install_torch(cell: Cell) -> None:
    for cmd in (
        pip_torch_command(cell),
        [sys.executable, "-m", "pip", "install", *BUILD_DEPS, *REPAIR_DEPS],
    ):
        if subprocess.run(cmd, check=False).returncode != 0:
            raise ToolchainError(f"failed: {' '.join(cmd)}")


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="pipeline cibw", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="step", required=True)
    sub.add_parser("env").add_argument("cell_id")
    sub.add_parser("before-all")
    sub.add_parser("install-torch")
    sub.add_parser("test").add_argument("wheel", type=Path)
    args = p.parse_args(argv)
    try:
        if args.step == "env":
            for key, value in github_env(matrix.by_id(args.cell_id)).items():
                print(f"{key}={value}")
            return 0
        cell = current_cell()
        if args.step == "before-all":
            before_all(cell)
        elif args.step == "install-torch":
            install_torch(cell)
        elif args.step == "test":
            # cibuildwheel has no GPU; the smoke runs the ops on the CPU in this venv.
            report = gate.verify(args.wheel, cell=cell, smoke_python=Path(sys.executable))
            print(report.table())
            return 0 if report.ok else 1
    except (ToolchainError, LookupError, matrix.MatrixError, gate.GateInputError) as err:
        print(f"pipeline cibw {args.step}: error: {err}", file=sys.stderr)
        return 2
    return 0
