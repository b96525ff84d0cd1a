"""Two builds' gpu_sweep.py runs compared: how a kernel change is judged (benchmarks/NOTES.md).

    python benchmarks/tools/sweep_ab.py --base B1.csv B2.csv --new N1.csv N2.csv
        [--margin 1] [--list]

Each build runs the same shapes at least twice, the builds taking turns in one
device call (base, new, new, base): machines differ between calls by more than
runs differ within one. Per shape (op, dtype, rows, hidden) each build's fastest
run is kept, and the change is new against base in percent. Printed: the noise
between each build's own runs (median and max, what a change has to beat), the
median change, how many shapes moved by more than --margin percent either way,
and with --list each of them. Only fusedops rows are compared; a shape missing
from one build's runs is an error, not a silent gap. A script, not a test.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

from ncu_miss_table import sweep_times

Shape = tuple[str, str, int, int]


def read_runs(paths: list[str], impl: str) -> list[dict[Shape, float]]:
    """One {shape: µs} per file (one run), the rows of `impl` only."""
    runs = []
    for path in paths:
        times = {shape: t[impl] for shape, t in sweep_times([Path(path)]).items() if impl in t}
        if not times:
            raise SystemExit(f"{path}: no {impl} rows")
        runs.append(times)
    return runs


def fastest(runs: list[dict[Shape, float]], side: str) -> dict[Shape, float]:
    """Each shape's fastest run; every run must have the same shapes."""
    shapes = set(runs[0])
    for k, run in enumerate(runs[1:], start=2):
        if set(run) != shapes:
            missing = sorted(shapes ^ set(run))[:3]
            raise SystemExit(f"{side} run {k} has other shapes than run 1 (e.g. {missing})")
    return {shape: min(run[shape] for run in runs) for shape in shapes}


def noise(runs: list[dict[Shape, float]]) -> list[float]:
    """Per shape, the spread of one build's runs: (slowest / fastest - 1) in percent."""
    return [
        (max(run[shape] for run in runs) / min(run[shape] for run in runs) - 1) * 100
        for shape in runs[0]
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", nargs="+", required=True, help="the base build's runs")
    parser.add_argument("--new", nargs="+", required=True, help="the changed build's runs")
    parser.add_argument("--margin", type=float, default=1.0, help="percent (default 1)")
    parser.add_argument("--impl", default="fusedops", help="which rows to compare")
    parser.add_argument("--list", action="store_true", help="print every shape past --margin")
    args = parser.parse_args(argv)
    if len(args.base) < 2 or len(args.new) < 2:
        parser.error("give each build at least two runs: one run has no noise to compare with")
    base_runs, new_runs = read_runs(args.base, args.impl), read_runs(args.new, args.impl)
    base, new = fastest(base_runs, "--base"), fastest(new_runs, "--new")
    if set(base) != set(new):
        missing = sorted(set(base) ^ set(new))[:3]
        parser.error(f"the builds ran different shapes (e.g. {missing})")
    for side, runs in (("base", base_runs), ("new", new_runs)):
        spread = noise(runs)
        print(
            f"noise, {side}'s {len(runs)} runs: median {statistics.median(spread):.2f}%, "
            f"max {max(spread):.2f}%"
        )
    change = {shape: (new[shape] / base[shape] - 1) * 100 for shape in base}
    slower = sorted((s for s in change if change[s] > args.margin), key=change.get, reverse=True)
    faster = sorted((s for s in change if change[s] < -args.margin), key=change.get)
    print(
        f"{len(change)} shapes: new against base median {statistics.median(change.values()):+.2f}%"
    )
    print(f"slower by more than {args.margin}%: {len(slower)}; faster: {len(faster)}")
    if args.list:
        for shape in faster + slower:
            op, dtype, rows, hidden = shape
            print(
                f"  {op} {dtype} {rows} x {hidden}: {base[shape]:.3f} -> {new[shape]:.3f} us "
                f"({change[shape]:+.2f}%)"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
