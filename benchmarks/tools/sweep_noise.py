"""How much two runs of one sweep differ, per implementation, and which misses both runs show.

    python benchmarks/tools/sweep_noise.py --pair A1.csv A2.csv [--pair B1.csv B2.csv ...]
        [--margin 1] [--top 3]

Each --pair is two gpu_sweep.py runs of the same sweep (the same kernels of ours, one call
pattern; e.g. two sessions' runs of one op and dtype). The rivals run what their own stack
picks in each process (inductor, for one, times several configs of a kernel at its first
call and keeps the fastest), so their times can move between runs where ours do not.
Printed, per call pattern:
- per implementation, over every shape both runs of a pair timed: the median, 90th
  percentile (nearest rank) and largest change of the second run's time against the
  first's, in percent of the first, and the --top largest with their shapes. That is the
  noise a change, or a miss, has to beat, measured for each side of the comparison;
Then per pair: its files (with each one's label and commit), the shapes only one run timed,
the implementations only one run timed at some shape (left out of the misses there), and
the misses (fusedops behind the fastest rival by more than --margin percent) of each run
and of both, with the rival and percent of each run. At each shape the rivals are those both
runs timed, so a rival one run lacks cannot make a miss. A miss in one run only is one the
other run did not confirm. Each file's time per implementation and shape is its fastest row
(as ncu_miss_table.py reads sweeps). A script, not a test.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from collections import defaultdict
from pathlib import Path

from ncu_miss_table import Shape, SweepError, behind_fastest_rival, read_sweep
from ncu_miss_table import SweepTimes as Times

Moves = dict[str, list[tuple[float, Shape]]]


def read_run(path: Path) -> tuple[Times, str, str]:
    """(shape -> impl -> fastest µs, the call pattern, its rows' "label commit"s) of one
    run: a sweep CSV (read_sweep) with rows, all of one pattern."""
    times, patterns, origins = read_sweep(path)
    if not times:
        raise SweepError(f"{path} has no rows")
    if len(patterns) > 1:
        raise SweepError(f"{path} mixes call patterns: {', '.join(sorted(patterns))}")
    return times, patterns.pop(), ", ".join(sorted(origins))


def changes(first: Times, second: Times) -> Moves:
    """impl -> [(percent the second run's time moved against the first's, shape)] over
    the shapes both runs timed with that impl."""
    moved: Moves = defaultdict(list)
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


def noise_lines(moved: Moves, top: int) -> list[str]:
    lines = []
    for impl in sorted(moved):
        sizes = sorted(abs(d) for d, _ in moved[impl])
        line = (
            f"{impl}: {len(sizes)} shapes, |change| median {statistics.median(sizes):.2f}%, "
            f"90th percentile {percentile(sizes, 0.9):.2f}%, max {sizes[-1]:.2f}%"
        )
        largest = sorted(moved[impl], key=lambda m: -abs(m[0]))[:top]
        if largest:
            line += "; largest: " + ", ".join(f"{shape_text(s)} {d:+.2f}%" for d, s in largest)
        lines.append(line)
    return lines


def missed(
    times: Times, margin: float, judged: dict[Shape, set[str]]
) -> dict[Shape, tuple[str, float]]:
    """shape -> (fastest rival, percent behind it) where fusedops trails by more than margin,
    each shape judged over the implementations in judged[shape]."""
    found = {}
    for shape, impls in judged.items():
        gap = behind_fastest_rival({i: us for i, us in times[shape].items() if i in impls})
        if gap is not None and gap[1] > margin:
            found[shape] = gap
    return found


def pair_lines(first: Times, second: Times, margin: float) -> list[str]:
    shared = first.keys() & second.keys()
    judged = {s: first[s].keys() & second[s].keys() for s in shared}
    lines = []
    for name, only in (("first", first.keys() - shared), ("second", second.keys() - shared)):
        if only:
            lines.append(f"  {len(only)} shapes only the {name} run timed (not compared)")
    one_sided = sorted({i for s in shared for i in first[s].keys() ^ second[s].keys()})
    if one_sided:
        lines.append(
            f"  timed by one run only at some shape (left out there): {', '.join(one_sided)}"
        )
    a, b = missed(first, margin, judged), missed(second, margin, judged)
    both = sorted(a.keys() & b.keys())

    def gaps(shape: Shape) -> str:
        parts = [f"{g[0]} {g[1]:+.2f}%" for g in (a.get(shape), b.get(shape)) if g]
        return f"{shape_text(shape)} ({' / '.join(parts)})"

    lines.append(
        f"  misses over {len(shared)} shapes both runs timed: first run {len(a)}, "
        f"second {len(b)}, both {len(both)}"
    )
    lines += [f"    in both: {gaps(s)}" for s in both]
    lines += [f"    first run only: {gaps(s)}" for s in sorted(a.keys() - b.keys())]
    lines += [f"    second run only: {gaps(s)}" for s in sorted(b.keys() - a.keys())]
    return lines


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
    if not math.isfinite(args.margin) or args.margin < 0:
        parser.error(f"--margin must be a percent of 0 or more, not {args.margin}")
    if args.top < 0:
        parser.error(f"--top must not be negative, not {args.top}")
    moved: dict[str, Moves] = defaultdict(lambda: defaultdict(list))
    pairs = []
    for first_path, second_path in args.pair:
        if first_path.resolve() == second_path.resolve():
            parser.error(f"{first_path} is given as both runs of a pair")
        try:
            (first, pattern, first_origin), (second, other, second_origin) = (
                read_run(first_path),
                read_run(second_path),
            )
        except (OSError, SweepError) as e:
            parser.error(str(e))
        if pattern != other:
            parser.error(
                f"{first_path} is of the {pattern} pattern and {second_path} of the {other}"
            )
        if not first.keys() & second.keys():
            parser.error(f"{first_path} and {second_path} share no shape")
        for impl, m in changes(first, second).items():
            moved[pattern][impl] += m
        header = f"{first_path} ({first_origin}) -> {second_path} ({second_origin})"
        pairs.append([f"{header}, {pattern}", *pair_lines(first, second, args.margin)])
    for pattern in sorted(moved):
        print(f"run-to-run change, {pattern} pattern, second run against the first:")
        print("\n".join(f"  {line}" for line in noise_lines(moved[pattern], args.top)))
    for lines in pairs:
        print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
