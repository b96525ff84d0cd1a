"""``python -m pipeline verify``: arguments checked up front, the report as a table.

Exit 0 when the gate passes, 1 when a check FAILs, 2 on bad arguments (one
line on stderr, before any check runs).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn

from ..archs import ArchList, ArchListError
from ..cell import Cell
from ..matrix import MatrixError, by_id
from .checks import parse_name
from .report import GateInputError


class UsageError(Exception):
    """A bad argument: the CLI prints it on one line and exits 2."""


class OneLineParser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (no usage dump) and exit 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def parse_or_status(
    parse: Callable[[list[str] | None], argparse.Namespace], argv: list[str] | None
) -> argparse.Namespace | int:
    """The parsed arguments, or the exit status of a usage error (2) or of --help (0)."""
    try:
        return parse(argv)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else int(exc.code is not None) * 2


def existing_wheel(path: Path) -> Path:
    """``path`` is a readable zip named like a fusedops wheel, or UsageError."""
    if not path.is_file():
        raise UsageError(f"wheel not found: {path}")
    try:
        parse_name(path.name)
    except GateInputError as exc:
        raise UsageError(str(exc)) from None
    if not zipfile.is_zipfile(path):
        raise UsageError(f"{path} is not a zip file (a truncated download or not a wheel)")
    return path


def interpreter(path: Path) -> Path:
    if not path.is_file() or not os.access(path, os.X_OK):
        raise UsageError(f"--smoke-python {path}: no such executable")
    return path


def lookup_cell(cell_id: str) -> Cell:
    try:
        return by_id(cell_id)
    except (LookupError, MatrixError) as exc:
        raise UsageError(f"--cell: {str(exc).splitlines()[0]}") from None


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = OneLineParser(prog="pipeline verify", description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("wheel", type=Path, help="the repaired fusedops wheel")
    p.add_argument("--cell", metavar="CELL_ID", help="the matrix cell it was built for")
    group = p.add_mutually_exclusive_group()
    group.add_argument(
        "--smoke-python", type=Path, help="interpreter with torch for the smoke test"
    )
    group.add_argument("--no-smoke", action="store_true", help="skip the install + CPU smoke test")
    p.add_argument("--expect-archs", help='arch list to require, e.g. "7.5 8.0 12.0+PTX"')
    p.add_argument("--max-size-mb", type=float, help="fail when the wheel is larger")
    p.add_argument("--json-out", type=Path, help="also write the report as JSON")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_or_status(parse_args, argv)
    if isinstance(args, int):
        return args
    from . import verify  # the package imports this module first

    try:
        wheel = existing_wheel(args.wheel)
        cell = lookup_cell(args.cell) if args.cell else None
        smoke_python = interpreter(args.smoke_python) if args.smoke_python else None
        archs = ArchList.parse(args.expect_archs) if args.expect_archs is not None else None
        if args.max_size_mb is not None and not args.max_size_mb > 0:
            raise UsageError(f"--max-size-mb {args.max_size_mb:g}: must be positive")
        if args.json_out and not args.json_out.resolve().parent.is_dir():
            raise UsageError(f"--json-out {args.json_out}: its directory does not exist")
        report = verify(
            wheel,
            cell=cell,
            smoke_python=smoke_python,
            smoke=not args.no_smoke,
            expect_archs=archs,
            max_size_mb=args.max_size_mb,
            log=lambda line: print(line, file=sys.stderr),
        )
    except ArchListError as exc:
        print(f"pipeline verify: error: --expect-archs: {exc}", file=sys.stderr)
        return 2
    except (UsageError, GateInputError) as exc:
        print(f"pipeline verify: error: {exc}", file=sys.stderr)
        return 2
    print(report.table())
    if args.json_out:
        try:
            args.json_out.write_text(json.dumps(report.to_dict(), indent=2) + "\n")
        except OSError as exc:
            print(
                f"pipeline verify: error: --json-out: {exc.strerror}: {exc.filename}",
                file=sys.stderr,
            )
            return 2
    return 0 if report.ok else 1
