"""How much two runs of one sweep differ, per implementation, and which misses both runs show.

    python benchmarks/tools/sweep_noise.py --pair A1.csv A2.csv [--pair B1.csv B2.csv ...]
        [--margin 1] [--top 3]

Each --pair is two gpu_sweep.py runs of the same sweep (the same kernels of ours, one call
pattern; e.g. two sessions' runs of one op and dtype). The rivals run what their own
stack picks: compile-static autotunes its reduction kernels in each process, so its
config, and its time, can differ between two runs where ours cannot. Printed:
- per implementation, over every shape both runs of a pair timed: the median, 90th
  percentile and largest change of the second run's time against the first's, in percent
  of the first, and the --top largest with their shapes. That is the noise a change, or
  a miss, has to beat, measured for each side of the comparison;
- the misses (fusedops behind the fastest rival by more than --margin percent) of each
  run, and those in both, with the rival and percent of each run. A miss in one run only
  is one the other run did not confirm.
Each file's time per implementation and shape is its fastest row (as ncu_miss_table.py
reads sweeps). A script, not a test.
"""

from __future__ import annotations

import argparse
import csv
import math
import statistics
import sys
from collections import defaultdict
from pathlib import Path

from ncu_miss_table import behind_fastest_rival, sweep_times

Shape = tuple[str, str, int, int]
Times = dict[Shape, dict[str, float]]


def changes(first: Times, second: Times) -> dict[str, list[tuple[float, Shape]]]:
    """impl -> [(percent the second run's time moved against the first's, shape)] over
    the shapes both runs timed with that impl."""
    moved: dict[str, list[tuple[float, Shape]]] = defaultdict(list)
    for shape in sorted(first.keys() & second.keys()):
        for impl in sorted(first[shape].keys() & second[shape].keys()):
            moved[impl].append((100 * (second[shape][impl] / first[shape][impl] - 1), shape))
    return moved


def percentile(sorted_values: list[float], q: float) -> float:
    """The value at or below which a fraction q of sorted_values lies (nearest rank)."""
    rank = max(1, math.ceil(len(sorted_values) * q))
    return sorted_values[rank - 1]


def shape_text(shape: Shape) -> str:
    op, dtype, rows, hidden = shape
    return f"{op} {dtype} {rows}x{hidden}"


def noise_lines(moved: dict[str, list[tuple[float, Shape]]], top: int) -> list[str]:
    lines = []
    for impl in sorted(moved):
        sizes = sorted(abs(d) for d, _ in moved[impl])
        largest = sorted(moved[impl], key=lambda m: -abs(m[0]))[:top]
        lines.append(
            f"{impl}: {len(sizes)} shapes, |change| median {statistics.median(sizes):.2f}%, "
            f"90th percentile {percentile(sizes, 0.9):.2f}%, max {sizes[-1]:.2f}%; largest: "
            + ", ".join(f"{shape_text(s)} {d:+.2f}%" for d, s in largest)
        )
    return lines


def missed(times: Times, margin: float) -> dict[Shape, tuple[str, float]]:
    """shape -> (fastest rival, percent behind it) where fusedops trails by more than margin."""
    found = {}
    for shape, by_impl in times.items():
        gap = behind_fastest_rival(by_impl)
        if gap is not None and gap[1] > margin:
            found[shape] = gap
    return found


def miss_lines(first: Times, second: Times, margin: float) -> list[str]:
    shared = first.keys() & second.keys()
    a = {s: g for s, g in missed(first, margin).items() if s in shared}
    b = {s: g for s, g in missed(second, margin).items() if s in shared}
    both = sorted(a.keys() & b.keys())

    def gaps(shape: Shape) -> str:
        parts = [f"{g[0]} {g[1]:+.2f}%" for g in (a.get(shape), b.get(shape)) if g]
        return f"{shape_text(shape)} ({' / '.join(parts)})"

    lines = [
        f"misses over {len(shared)} shapes both runs timed: first run {len(a)}, "
        f"second {len(b)}, both {len(both)}"
    ]
    lines += [f"  in both: {gaps(s)}" for s in both]
    lines += [f"  first run only: {gaps(s)}" for s in sorted(a.keys() - b.keys())]
    lines += [f"  second run only: {gaps(s)}" for s in sorted(b.keys() - a.keys())]
    return lines


def pattern_of(path: Path) -> str:
    """The call pattern of a sweep CSV (its first row's; `same` without the column, as
    ncu_miss_table.sweep_times reads it)."""
    with path.open(newline="") as f:
        row = next(csv.DictReader(f), None)
    return (row or {}).get("pattern") or "same"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--pair",
        nargs=2,
        action="append",
        type=Path,
        required=True,
        metavar=("FIRST.csv", "SECOND.csv"),
        help="two runs of one sweep (repeatable)",
    )
    parser.add_argument("--margin", type=float, default=1.0, help="percent (default 1)")
    parser.add_argument("--top", type=int, default=3, help="largest changes listed (default 3)")
    args = parser.parse_args(argv)
    if args.margin < 0:
        parser.error(f"--margin must not be negative, not {args.margin}")
    if args.top < 0:
        parser.error(f"--top must not be negative, not {args.top}")
    for path in (p for pair in args.pair for p in pair):
        if not path.is_file():
            parser.error(f"no such sweep CSV: {path}")
    moved: dict[str, list[tuple[float, Shape]]] = defaultdict(list)
    lines = []
    for first_path, second_path in args.pair:
        if pattern_of(first_path) != pattern_of(second_path):
            parser.error(f"{first_path} and {second_path} are of different call patterns")
        first, second = sweep_times([first_path]), sweep_times([second_path])
        if not first.keys() & second.keys():
            parser.error(f"{first_path} and {second_path} share no shape")
        for impl, m in changes(first, second).items():
            moved[impl] += m
        lines.append(f"{first_path.name} -> {second_path.name}")
        lines += miss_lines(first, second, args.margin)
    print("run-to-run change, second run against the first:")
    print("\n".join(noise_lines(moved, args.top)))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
