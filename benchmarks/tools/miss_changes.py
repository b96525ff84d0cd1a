"""How the misses moved between two sets of sweeps: which shapes closed, came in or stayed.

    python benchmarks/tools/miss_changes.py --old OLD.csv [...] --new NEW.csv [...]
        [--margin 1] [--rivals compile-static,liger]

Each side is read as `ncu_miss_table.py misses` reads it (gpu_sweep.py CSVs of one call
pattern, each shape's fastest run) and a shape is a miss where fusedops trails the fastest
rival by more than --margin percent. Rivals: those given, else every implementation both
sides timed (the copy never): a side that did not run compile is not judged against it.
Per (op, dtype), on the shapes both sides timed: the count before and after, then each
shape that closed, came in or stayed behind, with the rival and the percent on both
sides (negative: ahead). Shapes only one side timed are counted, not compared. The
percent that separates a real move from noise is not this tool's to know: give it two
runs of one build to see what the threshold's crossings look like. A script, not a test.
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path

from ncu_miss_table import NOT_RIVALS, behind_fastest_rival, sweep_times

Shape = tuple[str, str, int, int]
Times = dict[Shape, dict[str, float]]


def timed_rivals(times: Times) -> set[str]:
    """The implementations a side timed that can be rivals."""
    return {impl for t in times.values() for impl in t} - set(NOT_RIVALS)


def changes(
    old: Times, new: Times, margin: float, rivals: tuple[str, ...]
) -> dict[tuple[str, str], dict[str, list[str]]]:
    """(op, dtype) -> {"closed" | "new" | "kept": ["ROWSxHIDDEN (rival old% -> rival new%)"],
    "count": ["OLD -> NEW"], "one side": ["ROWSxHIDDEN old|new", ...]}, sorted by shape."""
    out: dict[tuple[str, str], dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    counts: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    for shape in sorted(set(old) | set(new)):
        op, dtype, rows, hidden = shape
        key, name = (op, dtype), f"{rows}x{hidden}"
        if shape not in old or shape not in new:
            out[key]["one side"].append(f"{name} {'new' if shape in new else 'old'}")
            continue
        before = behind_fastest_rival(old[shape], rivals)
        after = behind_fastest_rival(new[shape], rivals)
        if before is None or after is None:
            out[key]["one side"].append(f"{name} (no fusedops or rival on one side)")
            continue
        was, now = before[1] > margin, after[1] > margin
        counts[key][0] += was
        counts[key][1] += now
        if was or now:
            kind = "kept" if was and now else "closed" if was else "new"
            out[key][kind].append(
                f"{name} ({before[0]} {before[1]:+.1f}% -> {after[0]} {after[1]:+.1f}%)"
            )
    for key, (was, now) in counts.items():
        out[key]["count"] = [f"{was} -> {now}"]
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", nargs="+", type=Path, required=True, help="sweeps before")
    parser.add_argument("--new", nargs="+", type=Path, required=True, help="sweeps after")
    parser.add_argument("--margin", type=float, default=1.0, help="percent (default 1)")
    parser.add_argument("--rivals", help="comma-separated (default: those both sides timed)")
    args = parser.parse_args(argv)
    for path in [*args.old, *args.new]:
        if not path.is_file():
            parser.error(f"{path} is not a file")
    if args.margin < 0:
        parser.error(f"--margin must be at least 0, not {args.margin:g}")
    old, new = sweep_times(args.old), sweep_times(args.new)
    both = timed_rivals(old) & timed_rivals(new)
    if args.rivals is None:
        rivals = tuple(sorted(both))
    else:
        rivals = tuple(r for r in args.rivals.split(",") if r)
        absent = [r for r in rivals if r not in both]
        if absent:
            parser.error(f"--rivals {args.rivals}: {', '.join(absent)} not timed by both sides")
    if not rivals:
        parser.error("the two sides timed no rival in common")
    print(f"rivals: {','.join(rivals)}; behind by more than {args.margin:g}%")
    for (op, dtype), kinds in sorted(changes(old, new, args.margin, rivals).items()):
        print(f"{op} {dtype}: {kinds['count'][0] if kinds['count'] else '0 -> 0'}")
        for kind in ("closed", "new", "kept", "one side"):
            if kinds[kind]:
                print(f"  {kind}: {', '.join(kinds[kind])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
