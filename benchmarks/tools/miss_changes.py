"""How the misses moved between two sets of sweeps: which shapes closed, came in or stayed.

    python benchmarks/tools/miss_changes.py --old OLD.csv [...] --new NEW.csv [...]
        [--margin 1] [--rivals compile-static,liger]

Each side is read as `ncu_miss_table.py misses` reads it (gpu_sweep.py CSVs, each shape's
fastest run), and both sides must be of one call pattern. A shape is a miss where fusedops
trails the fastest rival by more than --margin percent. At each shape the rivals are those
both sides timed there (of --rivals, if given; the copy is never one), so a side that did
not run compile is not judged against it. Per (op, dtype): the misses before and after
among the shapes both sides timed, then each shape that closed, came in or is still
behind, with the rival and the percent on both sides (negative: ahead); then the shapes
only one side timed, with that side's gap, and those without fusedops or a common rival:
not judged. Percents print to two decimals
(a crossing by a few hundredths is the noise's); what separates a real move from noise
is not this tool's to know: two runs of one build show it. A script, not a test.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections import defaultdict
from pathlib import Path

from ncu_miss_table import NOT_RIVALS, behind_fastest_rival, sweep_times

Shape = tuple[str, str, int, int]
Times = dict[Shape, dict[str, float]]
KINDS = ("closed", "came in", "still behind", "only old", "only new", "not judged")


def gap_text(gap: tuple[str, float] | None) -> str:
    return "no fusedops or no rival" if gap is None else f"{gap[0]} {gap[1]:+.2f}%"


def changes(
    old: Times, new: Times, margin: float, rivals: tuple[str, ...] | None = None
) -> dict[tuple[str, str], dict[str, list[str]]]:
    """(op, dtype) -> {"count": "OLD -> NEW" (of the shapes both sides timed and judged),
    and each of KINDS: ["ROWSxHIDDEN (...)"]}, shapes in order. rivals: None for all."""
    out: dict[tuple[str, str], dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    counts: dict[tuple[str, str], list[int]] = {}
    for shape in sorted(set(old) | set(new)):
        op, dtype, rows, hidden = shape
        key, name = (op, dtype), f"{rows}x{hidden}"
        if shape not in new or shape not in old:
            side, times = ("only old", old[shape]) if shape in old else ("only new", new[shape])
            out[key][side].append(f"{name} ({gap_text(behind_fastest_rival(times, rivals))})")
            continue
        # The rivals both sides timed at this shape.
        common = (set(old[shape]) & set(new[shape])) - set(NOT_RIVALS)
        if rivals is not None:
            common &= set(rivals)
        before = behind_fastest_rival(old[shape], tuple(common))
        after = behind_fastest_rival(new[shape], tuple(common))
        if before is None or after is None:
            timed = [
                ",".join(sorted(set(t) - {"copy"})) or "nothing" for t in (old[shape], new[shape])
            ]
            out[key]["not judged"].append(f"{name} (old timed {timed[0]}; new {timed[1]})")
            continue
        was, now = before[1] > margin, after[1] > margin
        count = counts.setdefault(key, [0, 0])
        count[0] += was
        count[1] += now
        if was or now:
            kind = "still behind" if was and now else "closed" if was else "came in"
            out[key][kind].append(f"{name} ({gap_text(before)} -> {gap_text(after)})")
    for key in [*counts, *out]:
        was_now = counts.get(key)
        out[key]["count"] = [f"{was_now[0]} -> {was_now[1]}" if was_now else "none compared"]
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
    if not math.isfinite(args.margin) or args.margin < 0:
        parser.error(f"--margin must be a number of at least 0, not {args.margin:g}")
    rivals = None
    if args.rivals is not None:
        rivals = tuple(dict.fromkeys(r for r in args.rivals.split(",") if r))
        if not rivals:
            parser.error("--rivals names no implementation")
        never = [r for r in rivals if r in NOT_RIVALS]
        if never:
            parser.error(f"--rivals {args.rivals}: {', '.join(never)} is never a rival")
    patterns: dict[str, Path] = {}  # shared: the two sides must be of one call pattern
    old, new = sweep_times(args.old, patterns), sweep_times(args.new, patterns)
    if rivals is not None:
        timed = {impl for t in [*old.values(), *new.values()] for impl in t}
        absent = [r for r in rivals if r not in timed]
        if absent:
            parser.error(f"--rivals {args.rivals}: {', '.join(absent)} timed by neither side")
    which = f"{','.join(rivals)}, where" if rivals else "at each shape, those"
    print(f"rivals: {which} both sides timed; behind by more than {args.margin:g}%")
    for (op, dtype), kinds in sorted(changes(old, new, args.margin, rivals).items()):
        print(f"{op} {dtype}: {kinds['count'][0]}")
        for kind in KINDS:
            if kinds[kind]:
                print(f"  {kind}: {', '.join(kinds[kind])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
