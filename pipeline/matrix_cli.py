"""`python -m pipeline matrix` and `python scripts/matrix.py`: print the matrix."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from packaging.version import InvalidVersion, Version

from .cell import Cell
from .matrix import DATA_FILE, GITHUB_MAX_JOBS, Matrix, MatrixError, expand, find, load, select
from .rules import Variant


def format_table(cells: Sequence[Cell]) -> str:
    cols = ["id", "torch", "python", "torch_requirement", "python_requirement", "gcc", "arch_list"]
    rows = [cols] + [[str(c.to_github().get(k, "")) for k in cols] for c in cells]
    widths = [max(len(r[i]) for r in rows) for i in range(len(cols))]
    lines = ["  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    return "\n".join(lines) + f"\n{len(cells)} cells"


def install_table(m: Matrix) -> str:
    """Markdown: for each torch minor and variant, the fusedops wheel and index to use."""
    head = ["torch", "Python", "torch's CUDA variant", "platforms", "fusedops wheel", "index URL"]
    rows = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for t in reversed(m.torch):
        for cuda in dict.fromkeys(c for p in m.platforms for c in t.cuda[p]):
            variant = Variant.parse(cuda)
            plats = [p for p in m.platforms if cuda in t.cuda[p]]
            pypi = [m.platforms[p].machine for p in plats if t.pypi_cuda[p] == cuda]
            shown = f"{variant}" + (f" (torch's PyPI default on {', '.join(pypi)})" if pypi else "")
            wheel = (
                f"`+{variant}`, cp310-abi3"
                if t.stable
                else f"`+{variant}torch{t.minor}`, one per Python"
            )
            span = t.python[0] if len(t.python) == 1 else f"{t.python[0]}-{t.python[-1]}"
            arches = ", ".join(m.platforms[p].machine for p in plats)
            rows.append(
                "| "
                + " | ".join([t.minor, span, shown, arches, wheel, f"`<base>/{variant}/`"])
                + " |"
            )
    return "\n".join(rows)


def _variant_arg(text: str) -> Variant:
    try:
        return Variant.parse(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _version_arg(text: str) -> str:
    try:
        Version(text)
    except InvalidVersion:
        raise argparse.ArgumentTypeError(f"{text!r} is not a version") from None
    return text


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="matrix", description="The fusedops build matrix (pipeline/matrix.json)."
    )
    out = p.add_mutually_exclusive_group()
    out.add_argument("--github", action="store_true", help='print {"include": [cells]} on one line')
    out.add_argument(
        "--find", action="store_true", help="print the one cell for --cuda/--torch/--python"
    )
    out.add_argument("--install-table", action="store_true", help="print the user table (markdown)")
    p.add_argument("--abi", choices=["stable", "classic", "all"], default="all")
    p.add_argument("--id", action="append", default=[], help="only these cell ids (repeatable)")
    p.add_argument(
        "--include-classic-for-stable",
        action="store_true",
        help="add the optional classic cells for torch >= 2.10",
    )
    p.add_argument("--cuda", type=_variant_arg, help="13.0, cu130 or cpu")
    p.add_argument("--platform", help="linux_x86_64, aarch64, ...")
    p.add_argument("--torch", type=_version_arg, help="cells whose wheel serves this torch")
    p.add_argument("--python", type=_version_arg, help="cells whose wheel serves this Python")
    p.add_argument(
        "--buildable-here", action="store_true", help="only cells this machine can build"
    )
    p.add_argument(
        "--data", type=Path, default=DATA_FILE, help="matrix JSON (default: pipeline/matrix.json)"
    )
    args = p.parse_args(argv)
    if args.find and not (args.cuda and args.torch and args.python):
        p.error("--find needs --cuda, --torch and --python")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    abi = None if args.abi == "all" else args.abi
    try:
        m = load(args.data)
        if args.find:
            print(
                json.dumps(
                    find(args.cuda, args.torch, args.python, abi, args.platform, m=m).to_github(),
                    indent=2,
                )
            )
            return 0
        if args.install_table:
            print(install_table(m))
            return 0
        cells = select(
            expand(m, include_optional=args.include_classic_for_stable or bool(args.id)),
            abi=abi,
            variant=args.cuda,
            platform=args.platform,
            torch=args.torch,
            python=args.python,
            buildable_here=args.buildable_here,
        )
        if args.id:
            unknown = sorted(set(args.id) - {c.id for c in expand(m, include_optional=True)})
            if unknown:
                raise LookupError(f"unknown cell id(s): {', '.join(unknown)}")
            cells = [c for c in cells if c.id in args.id]
    except (MatrixError, LookupError) as e:
        print(f"matrix: error: {e}", file=sys.stderr)
        return 2
    if not cells:
        hint = (
            ""
            if args.include_classic_for_stable
            else " (classic cells for torch >= 2.10 need --include-classic-for-stable)"
        )
        print(f"matrix: error: no cell matches these filters{hint}", file=sys.stderr)
        return 1
    if args.github:
        if len(cells) > GITHUB_MAX_JOBS:
            print(
                f"matrix: error: {len(cells)} cells exceed GitHub's {GITHUB_MAX_JOBS}-job limit; filter more",
                file=sys.stderr,
            )
            return 1
        print(json.dumps({"include": [c.to_github() for c in cells]}, separators=(",", ":")))
    else:
        print(format_table(cells))
    return 0
