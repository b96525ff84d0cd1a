"""`python -m pipeline COMMAND ...`: the pipeline's one command line (see __init__)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from packaging.version import InvalidVersion, Version

from . import build, matrix
from .rules import REPO, Variant
from .toolchain import ToolchainError

COMMANDS = ("matrix", "build", "repair", "verify", "index", "pypi-wheel", "release", "cibw")


def build_main(argv: Sequence[str]) -> int:
    p = argparse.ArgumentParser(prog="pipeline build", description=build.__doc__.splitlines()[0])
    p.add_argument(
        "cell_id",
        nargs="?",
        help="a cell id (`python -m pipeline matrix`); default: this machine's",
    )
    p.add_argument("--cuda", help="instead of an id: X.Y, cuXYZ or cpu (with --torch and --python)")
    p.add_argument("--torch", help="torch version to build against, e.g. 2.14.1")
    p.add_argument("--python", help="Python version, e.g. 3.11")
    p.add_argument("--abi", choices=["stable", "classic"])
    p.add_argument("--out", type=Path, default=REPO / "wheelhouse")
    p.add_argument(
        "--check-reproducible", action="store_true", help="build twice, require identical wheels"
    )
    p.add_argument(
        "--torch-python",  # kept as typed: Path() would turn ./python into a bare name
        help="build with this interpreter (it must hold the cell's torch, Python and build "
        "tools) instead of a cached torch env",
    )
    p.add_argument(
        "--torch-index",
        action="store_true",
        help="fill the cached torch env from PyTorch's index for the cell's variant "
        "(download.pytorch.org/whl/<variant>), e.g. a cu126 or cpu torch",
    )
    args = p.parse_args(argv)
    try:
        for flag in ("torch", "python"):
            if getattr(args, flag):
                Version(getattr(args, flag))
        out = build.check_out_dir(args.out)
        if args.cuda or args.torch or args.python:
            if not (args.cuda and args.torch and args.python) or args.cell_id:
                p.error(
                    "give all of --cuda, --torch and --python, or a cell id, or nothing (this machine's cell)"
                )
            cell = matrix.find(Variant.parse(args.cuda), args.torch, args.python, args.abi)
            cell = cell.built_with(torch=args.torch, python=args.python)
        elif args.cell_id:
            cell = matrix.by_id(args.cell_id)
        else:
            cell = build.local_cell()
        result = build.build_cell(
            cell,
            out,
            check_reproducible=args.check_reproducible,
            torch_python=args.torch_python,
            torch_index=args.torch_index,
        )
    except InvalidVersion as err:
        print(f"pipeline build: error: {err}", file=sys.stderr)
        return 2
    except (build.BuildError, ToolchainError, LookupError, ValueError, matrix.MatrixError) as err:
        print(f"pipeline build: error: {err}", file=sys.stderr)
        return 1
    print(result.summary())
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] not in COMMANDS:
        print(
            f"usage: python -m pipeline {{{','.join(COMMANDS)}}} ...\n{sys.modules['pipeline'].__doc__}",
            file=sys.stderr,
        )
        return 2
    command, rest = argv[0], argv[1:]
    if command == "matrix":
        from .matrix_cli import main as run
    elif command == "build":
        run = build_main
    elif command == "repair":
        from .repair import main as run
    elif command == "verify":
        from .gate import main as run
    elif command == "index":
        from .index import main as run
    elif command == "pypi-wheel":
        from .pypi_wheel import main as run
    elif command == "release":
        from .release import main as run
    else:
        from .cibw import main as run
    return run(rest)


if __name__ == "__main__":
    sys.exit(main())
