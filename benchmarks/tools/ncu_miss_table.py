"""Which sweep shapes trail the fastest other implementation, and what ncu says about each.

    python benchmarks/tools/ncu_miss_table.py misses SWEEP.csv [SWEEP2.csv ...] [--margin 1]
            [--rivals compile,liger] [--count]
        # one line per (op, dtype): the shapes where fusedops trails by more than
        # --margin percent, as ncu_fwd_probe.py's --op/--dtype/--shapes arguments
        # (--count: how many per op instead; --rivals: only these count as rivals,
        # e.g. to compare with a sweep run before compile-static existed)
    python benchmarks/tools/ncu_miss_table.py table SWEEP.csv [...] --ncu DIR [--margin 1]
            [--impls fusedops,compile,liger] [--ncu DIR2 [--impls ...]]
        # a markdown table: each miss, fusedops against the implementation it
        # trails, from DIR/<op>-<dtype>.csv (or the first --ncu that profiled ours and
        # that rival at that shape), with the "ncu gap": our kernel's time against the
        # rival's, each alone; then how many misses ncu finds our kernel slower, faster
        # or neither in by more than --noise PCT (default 1; `spread` measures it). A
        # miss where ours alone is faster lies outside the kernel's own time; within
        # the noise, ncu cannot tell.
    python benchmarks/tools/ncu_miss_table.py spread NCU.csv [...]
        # how much each kernel's time moved between its two profiled calls: the
        # noise an ncu gap has to beat (profiles under --cache-control all)

Each sweep time is the fastest of the runs given (gpu_sweep.py CSVs). The ncu
files are `ncu --import R --page raw --csv` of a profile made with
`ncu_fwd_probe.py --impls fusedops,compile,liger --repeat 2` (or the --impls given
here, in the probe's order: compile-static's kernels are inductor's too) over the shapes
`misses` printed, in that order (a profile that stopped early covers the first
ones, the last shape it reached dropped; the rest are "not profiled"). A profile
of other shapes (some of the misses, or shapes of another sweep), and every profile
when several --ncu folders are given, needs DIR/<op>-<dtype>.shapes beside it: the
probe's --shapes argument, e.g. `256x4096,2048x4096`; then each miss is matched
to its own shape, and misses it lacks are "not profiled". The kernels of each
call are told apart by name (fusedops's live in namespace fusedops, Liger's Triton
kernels start with an underscore, inductor's with triton_); a kernel of neither kind (a copy a
wrapper makes) joins the run of kernels before it. Of each implementation's
two calls the second is kept: under `ncu --cache-control none` it sees the L2
the first left, as a call in a CUDA graph replay on the same tensors does (under
`--cache-control all` both start from a flushed L2, as a rotating call that moves
more than about a quarter of the L2 reads DRAM, and the second is as good as the
first). A metric the profile lacks shows as "-".
A script, not a test.
"""

from __future__ import annotations

import argparse
import csv
import math
import statistics
import sys
from collections import defaultdict
from pathlib import Path

IMPLS = ("fusedops", "compile", "liger")
# Which kernels each implementation a profile can hold launches (kind_of's kinds).
KIND = {"fusedops": "fusedops", "compile": "compile", "compile-static": "compile", "liger": "liger"}
REPEAT = 2
# In a sweep but never a rival: ours, and the copy (the ceiling).
NOT_RIVALS = ("fusedops", "copy")

# (column, heading, format) of the table, per implementation.
METRICS = (
    ("gpu__time_duration.sum", "µs", lambda v: f"{v:.2f}"),
    ("launch__grid_size", "grid", lambda v: f"{v:.0f}"),
    ("launch__block_size", "block", lambda v: f"{v:.0f}"),
    ("launch__registers_per_thread", "regs", lambda v: f"{v:.0f}"),
    ("inst_per_warp", "inst/warp", lambda v: f"{v:.0f}"),
    ("smsp__inst_executed.sum", "inst (K)", lambda v: f"{v / 1000:.1f}"),
    ("sm__warps_active.avg.pct_of_peak_sustained_active", "occ %", lambda v: f"{v:.0f}"),
    ("gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed", "DRAM %", lambda v: f"{v:.0f}"),
)
STALL_PREFIX = "smsp__average_warps_issue_stalled_"
STALL_SUFFIX = "_per_issue_active.ratio"


Shape = tuple[str, str, int, int]
SweepTimes = dict[Shape, dict[str, float]]
SWEEP_COLUMNS = ("op", "dtype", "rows", "hidden", "impl", "us")


class SweepError(ValueError):
    """A file that is not a gpu_sweep.py CSV."""


def read_sweep(path: Path) -> tuple[SweepTimes, set[str], set[str]]:
    """One gpu_sweep.py CSV: (op, dtype, rows, hidden) -> impl -> fastest µs, the call
    patterns of its rows (a CSV without the column is `same`) and their "label commit"s.
    A file without the sweep's columns, or with a time that is not a positive number, is
    refused (SweepError, with the line)."""
    times: SweepTimes = defaultdict(dict)
    patterns: set[str] = set()
    origins: set[str] = set()
    with path.open(newline="") as f:
        reader = csv.DictReader(f)
        missing = [c for c in SWEEP_COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise SweepError(f"{path} is not a gpu_sweep.py CSV (no {', '.join(missing)} column)")
        for line, row in enumerate(reader, start=2):
            try:
                shape = (row["op"], row["dtype"], int(row["rows"]), int(row["hidden"]))
                us = float(row["us"])
            except (TypeError, ValueError) as e:
                raise SweepError(f"{path}, line {line}: {e}") from None
            if not (math.isfinite(us) and us > 0):
                raise SweepError(f"{path}, line {line}: a time of {row['us']} µs")
            times[shape][row["impl"]] = min(us, times[shape].get(row["impl"], us))
            patterns.add(row.get("pattern") or "same")
            origins.add(f"{row.get('label', '?')} {row.get('commit', '?')}")
    return dict(times), patterns, origins


def sweep_times(paths: list[Path], seen: dict[str, Path] | None = None) -> SweepTimes:
    """(op, dtype, rows, hidden) -> impl -> fastest µs over the files (read_sweep), which
    must share one call pattern (gpu_sweep.py --pattern): a consumer pattern's times
    include the next op's read and are no run of the others. seen: {pattern: a file of
    it} from an earlier call, whose pattern these must share too (filled in here)."""
    best: SweepTimes = defaultdict(dict)
    seen = {} if seen is None else seen
    for path in paths:
        times, patterns, _ = read_sweep(path)
        for pattern in sorted(patterns):
            if seen and pattern not in seen:
                ((other, where),) = seen.items()
                raise SystemExit(
                    f"{where} is of the {other} pattern and {path} of the {pattern} "
                    "pattern: give one pattern's sweeps at a time"
                )
            seen.setdefault(pattern, path)
        for shape, by_impl in times.items():
            for impl, us in by_impl.items():
                best[shape][impl] = min(us, best[shape].get(impl, us))
    return best


def misses(
    times: dict[tuple[str, str, int, int], dict[str, float]],
    margin: float,
    rivals: tuple[str, ...] | None = None,
) -> dict[tuple[str, str], list[tuple[int, int, str, float]]]:
    """(op, dtype) -> [(rows, hidden, the impl trailed, percent behind)], sorted.
    rivals: the implementations that count (None: every one but fusedops and the copy)."""
    out: dict[tuple[str, str], list[tuple[int, int, str, float]]] = defaultdict(list)
    for (op, dtype, rows, hidden), t in sorted(times.items()):
        gap = behind_fastest_rival(t, rivals)
        if gap is not None and gap[1] > margin:
            out[(op, dtype)].append((rows, hidden, *gap))
    return out


def behind_fastest_rival(
    times: dict[str, float], rivals: tuple[str, ...] | None = None
) -> tuple[str, float] | None:
    """(the fastest rival, percent fusedops trails it; negative: ahead) at one shape, or
    None without fusedops or a rival. rivals: as misses()."""
    # Every rival in the sweep (gpu_sweep.py's opt-in compile-static too); the copy is
    # the ceiling, not a rival.
    others = {
        i: us for i, us in times.items() if i not in NOT_RIVALS and (rivals is None or i in rivals)
    }
    if "fusedops" not in times or not others:
        return None
    rival = min(others, key=others.get)
    return rival, 100 * (times["fusedops"] / others[rival] - 1)


# ncu picks a unit per column (the CSV's second row): times become µs, counts
# lose their K/M/G prefix.
TIME_SCALE = {
    "ns": 1e-3,
    "nsecond": 1e-3,
    "us": 1.0,
    "usecond": 1.0,
    "ms": 1e3,
    "msecond": 1e3,
    "s": 1e6,
    "second": 1e6,
}
PREFIX = {"K": 1e3, "M": 1e6, "G": 1e9}
COUNTS = ("inst", "warp", "byte", "block", "thread")


def scale_of(unit: str) -> float:
    if unit in TIME_SCALE:
        return TIME_SCALE[unit]
    if unit[:1] in PREFIX and unit[1:] in COUNTS:
        return PREFIX[unit[0]]
    return 1.0


def number(text: str, unit: str = "") -> float | None:
    try:
        return float(text.replace(",", "")) * scale_of(unit)
    except ValueError:
        return None


def kind_of(name: str) -> str | None:
    if "fusedops" in name:
        return "fusedops"
    if name.startswith("triton_"):
        return "compile"
    if name.startswith("_"):
        return "liger"
    return None


def calls(path: Path) -> list[tuple[str, list[dict[str, str]]]]:
    """The profiled kernels of an ncu raw CSV, grouped into runs of one kind."""
    with path.open(newline="") as f:
        rows = list(csv.DictReader(f))
    units = rows[0] if rows else {}
    kernels = [
        {
            col: str(number(v, units.get(col) or "") or v) if col != "Kernel Name" else v
            for col, v in r.items()
        }
        for r in rows
        if r.get("ID", "").strip().isdigit()  # not the units row
    ]
    runs: list[tuple[str | None, list[dict[str, str]]]] = []
    for k in kernels:
        kind = kind_of(k["Kernel Name"])
        if runs and (kind is None or runs[-1][0] in (None, kind)):
            runs[-1] = (runs[-1][0] or kind, runs[-1][1] + [k])
        else:
            runs.append((kind, [k]))
    if any(kind is None for kind, _ in runs):
        raise SystemExit(f"{path}: a run of kernels of no known implementation")
    return runs  # type: ignore[return-value]


def summary(kernels: list[dict[str, str]]) -> dict[str, float | str | None]:
    """One call's metrics: times and instructions summed over its kernels,
    the launch shape and rates of its longest kernel, and that kernel's two
    largest stall reasons. None where the profile lacks the metric."""
    main = max(kernels, key=lambda k: number(k.get("gpu__time_duration.sum", "")) or 0)
    s: dict[str, float | str | None] = {}
    for col, _, _ in METRICS:
        if col in ("gpu__time_duration.sum", "smsp__inst_executed.sum"):
            values = [number(k.get(col, "")) for k in kernels]
            s[col] = None if None in values else sum(values)
        elif col != "inst_per_warp":
            s[col] = number(main.get(col, ""))
    warps = number(main.get("sm__warps_launched.sum", ""))
    inst = number(main.get("smsp__inst_executed.sum", ""))
    s["inst_per_warp"] = inst / warps if inst is not None and warps else None
    stalls = {
        col[len(STALL_PREFIX) : -len(STALL_SUFFIX)]: number(v) or 0
        for col, v in main.items()
        if col.startswith(STALL_PREFIX) and col.endswith(STALL_SUFFIX)
    }
    top = sorted(stalls, key=stalls.get, reverse=True)[:2]
    s["stalls"] = ", ".join(f"{name} {stalls[name]:.1f}" for name in top) or "-"
    s["kernels"] = len(kernels)
    return s


def change_pct(new: float | str | None, base: float | str | None) -> float | None:
    """new against base in percent (new / base - 1), or None where either time is missing
    (a summary's time is a float only where the profile had it)."""
    if isinstance(new, float) and isinstance(base, float) and base > 0:
        return (new / base - 1) * 100
    return None


def split_calls(kernels: list[dict[str, str]]) -> list[list[dict[str, str]]]:
    """A run's kernels as its REPEAT calls, in order (each call launches as many)."""
    per_call = len(kernels) // REPEAT
    return [kernels[k * per_call : (k + 1) * per_call] for k in range(REPEAT)]


def stopped_early(path: Path, runs: list, expected: int | None = None) -> bool:
    """Whether the profile at `path` stopped before its end (a timeout): fewer runs than
    the `expected` shapes x implementations, a last run of an odd number of kernels, or
    an ncu error in the log beside it (<name>.log, as the device scripts save it). Then
    its last run may be cut short, even to an even number of kernels."""
    if not runs:
        return False
    log = path.with_suffix(".log")
    return (
        (expected is not None and len(runs) < expected)
        or len(runs[-1][1]) % REPEAT != 0
        or (log.exists() and "==ERROR==" in log.read_text(errors="replace"))
    )


def profiled(
    path: Path, shapes: list[tuple[int, int]], impls: tuple[str, ...] = IMPLS
) -> dict[tuple[int, int, str], dict]:
    """(rows, hidden, impl) -> summary of the impl's last call at that shape; `impls`:
    the probe's --impls, in its order."""
    runs = calls(path)
    # Fewer runs than shapes: the profile stopped early (a timeout), and the shapes
    # it covers are the first ones; the last shape it reached may be cut anywhere, so
    # its runs' kinds are checked as the others', then they are dropped, and the shape
    # reads as not profiled.
    if len(runs) > len(shapes) * len(impls):
        raise SystemExit(
            f"{path}: {len(runs)} runs of kernels for {len(shapes)} shapes x {len(impls)} "
            f"implementations; was it profiled with --impls {','.join(impls)} --repeat 2 "
            f"over the shapes `misses` printed (or those of {path.with_suffix('.shapes').name})?"
        )
    # The shape of the last run is dropped whenever the profile stopped early, also
    # when that run looks whole: a cut can leave it an even number of kernels.
    stopped = stopped_early(path, runs, len(shapes) * len(impls))
    complete = (len(runs) - 1) // len(impls) * len(impls) if stopped else len(runs)
    out = {}
    for n, (kind, kernels) in enumerate(runs):
        shape, impl = shapes[n // len(impls)], impls[n % len(impls)]
        if kind != KIND[impl] or (n < complete and len(kernels) % REPEAT):
            raise SystemExit(f"{path}: run {n} is {kind} with {len(kernels)} kernels, not {impl}")
        if n < complete:
            out[(*shape, impl)] = summary(split_calls(kernels)[-1])
    if complete < len(runs):
        # Without a .shapes file a profile made over another list of misses is short by
        # whole shapes too, and then its shapes are the wrong ones: say so.
        unlisted = not path.with_suffix(".shapes").exists()
        print(
            f"{path}: stopped early; {shapes[complete // len(impls)]}, the last shape it "
            f"reached ({len(runs) - complete} of {len(impls)} implementations begun), "
            "may be cut: not profiled"
            + (
                f" (or it was profiled over other shapes: write its "
                f"{path.with_suffix('.shapes').name})"
                if unlisted
                else ""
            ),
            file=sys.stderr,
        )
    return out


def profiled_shapes(path: Path, missed: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The shapes a profile ran, in order: its .shapes file's, else the misses'.
    Without the file a profile of other shapes would be read as the misses'
    and its rows put under the wrong shapes."""
    listed = path.with_suffix(".shapes")
    if not listed.exists():
        return missed
    text = listed.read_text()
    items = [item.strip() for item in text.replace("\n", ",").split(",") if item.strip()]
    shapes = []
    for item in items:
        rows, sep, hidden = item.partition("x")
        if not (sep and rows.isdigit() and hidden.isdigit() and int(rows) and int(hidden)):
            raise SystemExit(f"{listed}: {item!r} is not ROWSxHIDDEN with both at least 1")
        shapes.append((int(rows), int(hidden)))
    if not shapes:
        raise SystemExit(f"{listed}: no shapes (write the probe's --shapes argument)")
    if len(set(shapes)) != len(shapes):
        raise SystemExit(f"{listed}: a shape is listed twice (each profiled shape once)")
    return shapes


Source = tuple[Path, tuple[str, ...]]  # a directory of profiles, and their --impls


def profiles_of(op: str, dtype: str, missed: list, sources: list[Source]) -> list[dict]:
    """Each source's profile of (op, dtype) that exists, read under its own impls.
    With several sources each profile needs its .shapes file: read as the misses in
    order, one source's profile would shadow another's under the wrong shapes."""
    found = []
    for ncu_dir, impls in sources:
        path = ncu_dir / f"{op}-{dtype}.csv"
        if path.exists():
            if len(sources) > 1 and not path.with_suffix(".shapes").exists():
                raise SystemExit(
                    f"{path}: with several --ncu folders each profile needs its "
                    f"{path.with_suffix('.shapes').name} (the probe's --shapes argument)"
                )
            found.append(
                profiled(path, profiled_shapes(path, [(r, h) for r, h, _, _ in missed]), impls)
            )
    return found


def table(missed: dict, sources: list[Source], noise: float = 1.0) -> str:
    """Each miss against its rival from the first source that profiled both at its
    shape; then how many misses ncu finds our kernel slower in, faster in, or neither
    (within `noise` percent: inconclusive)."""
    heads = [h for _, h, _ in METRICS]
    lines = [
        "| op | dtype | shape | behind | vs | ncu gap | "
        + " | ".join(heads)
        + " | top stalls (fusedops / other) |",
        "|" + " --- |" * (6 + len(heads) + 1),
    ]
    gaps: list[float] = []
    for (op, dtype), shapes in missed.items():
        found = profiles_of(op, dtype, shapes, sources)
        if not found:
            names = ", ".join(str(d / f"{op}-{dtype}.csv") for d, _ in sources)
            lines.append(f"| {op} | {dtype} | ({len(shapes)} shapes: no {names}) |")
            continue
        for rows, hidden, rival, behind in shapes:
            prof = next((p for p in found if (rows, hidden, rival) in p), None)
            if prof is None:
                lines.append(
                    f"| {op} | {dtype} | {rows} x {hidden} | {behind:.1f}% | {rival} |"
                    " not profiled |"
                )
                continue
            ours, theirs = prof[(rows, hidden, "fusedops")], prof[(rows, hidden, rival)]
            t_ours, t_theirs = ours["gpu__time_duration.sum"], theirs["gpu__time_duration.sum"]
            gap = "-"
            change = change_pct(t_ours, t_theirs)
            if change is not None:
                gaps.append(change)
                gap = f"{change:+.1f}%"
            cells = [
                " / ".join("-" if m[col] is None else fmt(m[col]) for m in (ours, theirs))
                for col, _, fmt in METRICS
            ]
            lines.append(
                f"| {op} | {dtype} | {rows} x {hidden} | {behind:.1f}% | {rival} | {gap} | "
                + " | ".join(cells)
                + f" | {ours['stalls']} / {theirs['stalls']} |"
            )
    slower = sum(g > noise for g in gaps)
    faster = sum(g < -noise for g in gaps)
    lines += [
        "",
        f"ncu gap (our kernel's time against the rival's, each alone): of {len(gaps)} "
        f"misses profiled with both times, ours slower by more than {noise:g}% at "
        f"{slower}, within {noise:g}% (inconclusive) at {len(gaps) - slower - faster}, "
        f"faster by more than {noise:g}% at {faster}.",
    ]
    return "\n".join(lines)


def spread(paths: list[Path]) -> str:
    """How much a kernel's time moves from one profiled call to the next: for every
    run of two calls, |second / first - 1| (a call's kernels summed, as in the table;
    a run missing either time is left out). Meaningful for
    profiles under `--cache-control all`, where both calls start from a flushed L2;
    it is the noise a table's ncu gap has to beat."""
    moves = []
    for path in paths:
        runs = calls(path)
        if stopped_early(path, runs):
            runs = runs[:-1]  # the run a timeout may have cut
        for _, kernels in runs:
            if len(kernels) % REPEAT:
                continue
            first, second = (
                summary(call)["gpu__time_duration.sum"] for call in split_calls(kernels)
            )
            change = change_pct(second, first)
            if change is not None:
                moves.append(abs(change))
    if not moves:
        raise SystemExit("no runs of two calls in " + ", ".join(map(str, paths)))
    moves.sort()
    p90 = moves[min(len(moves) - 1, int(0.9 * len(moves)))]
    return (
        f"{len(moves)} runs: call-to-call change median {statistics.median(moves):.2f}%, "
        f"90th percentile {p90:.2f}%, max {moves[-1]:.2f}%"
    )


def check_impls(parser: argparse.ArgumentParser, text: str) -> None:
    impls = text.split(",")
    kinds = [KIND.get(i) for i in impls]
    # compile and compile-static launch the same kind of kernel (triton_*): a profile
    # tells their runs apart only where another kind's run lies between them, also
    # from one shape's last implementation to the next shape's first.
    side_by_side = len(kinds) > 1 and any(kinds[i] == kinds[i - 1] for i in range(len(kinds)))
    if None in kinds or "fusedops" not in impls or len(set(impls)) != len(impls) or side_by_side:
        parser.error(
            f"--impls {text}: each of {', '.join(KIND)} at most once, fusedops "
            "included, and compile and compile-static not side by side (nor first and "
            "last: one shape's last run meets the next one's first)"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=("misses", "table", "spread"))
    parser.add_argument(
        "sweeps", nargs="+", type=Path, help="gpu_sweep.py CSV files (spread: ncu CSV files)"
    )
    parser.add_argument("--margin", type=float, default=1.0, help="percent (default 1)")
    parser.add_argument(
        "--ncu",
        type=Path,
        action="append",
        help="directory of <op>-<dtype>.csv (table); again for more, the first that "
        "profiled a miss is read",
    )
    parser.add_argument(
        "--impls",
        action="append",
        help="the profiles' implementations, in the probe's --impls order (table; one "
        f"for all --ncu, or one each in their order; default {','.join(IMPLS)})",
    )
    parser.add_argument(
        "--rivals", help="only these implementations count as rivals (default: all but the copy)"
    )
    parser.add_argument("--count", action="store_true", help="misses: how many per op")
    parser.add_argument(
        "--noise",
        type=float,
        default=1.0,
        help="table: the percent an ncu gap must pass to count as slower or faster "
        "(default 1; `spread` measures it)",
    )
    args = parser.parse_args(argv)
    if args.count and args.command != "misses":
        parser.error("--count is for misses")
    impls_given = args.impls or [",".join(IMPLS)]
    for text in impls_given:
        check_impls(parser, text)
    for path in args.sweeps:
        if not path.is_file():
            parser.error(f"{path} is not a file")
    if args.command == "spread":
        print(spread(args.sweeps))
        return 0
    if args.noise < 0:
        parser.error(f"--noise must be at least 0, not {args.noise:g}")
    times = sweep_times(args.sweeps)
    rivals = None
    if args.rivals is not None:
        rivals = tuple(args.rivals.split(","))
        in_sweeps = {impl for t in times.values() for impl in t}
        absent = [r for r in rivals if r not in in_sweeps or r in NOT_RIVALS]
        if absent:
            parser.error(f"--rivals {args.rivals}: {', '.join(absent)} not a rival in the sweeps")
    missed = misses(times, args.margin, rivals)
    if args.count:
        by_op: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        for key, t in times.items():
            by_op[key[0]][1] += "fusedops" in t
        for (op, _), shapes in missed.items():
            by_op[op][0] += len(shapes)
        for op, (behind, shapes) in sorted(by_op.items()):
            print(f"{op}: {behind} of {shapes} shapes behind by more than {args.margin:g}%")
        return 0
    if args.command == "misses":
        for (op, dtype), shapes in missed.items():
            print(op, dtype, ",".join(f"{r}x{h}" for r, h, _, _ in shapes))
        return 0
    if not args.ncu or not all(d.is_dir() for d in args.ncu):
        parser.error("table needs --ncu DIR, each a directory")
    if len(impls_given) not in (1, len(args.ncu)):
        parser.error(f"{len(impls_given)} --impls for {len(args.ncu)} --ncu: give one, or one each")
    if len(impls_given) == 1:
        impls_given = impls_given * len(args.ncu)
    sources = [(d, tuple(i.split(","))) for d, i in zip(args.ncu, impls_given, strict=True)]
    print(table(missed, sources, args.noise))
    return 0


if __name__ == "__main__":
    sys.exit(main())
