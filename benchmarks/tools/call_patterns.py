"""Settings of one experiment wheel and rivals timed in three patterns of calls.

The sweep times every call on the same tensors, so each call writes what the call before
wrote, and whatever that left in the L2 is there for the next. A model's next norm writes
other tensors and its next op reads the output. v40 shipped streamed loads on the sweep's
pattern alone (2.0-4.3% faster there); with rotating tensors they were 1.3-2.9% slower
(v41). So a change, and a miss, is timed here in three patterns:
- same: every call on the same tensors (the sweep's pattern);
- rotating: --sets input sets taken in turn, each call's outputs kept until its set
  comes round again, so no call writes what the call before wrote;
- consumer: rotating, each call followed by a sum over its (first) output, the next op
  reading it; the pair is timed.
The settings take turns in one process and their bits are checked (inprocess_ab), each
keeping its fastest turn; the rivals are timed beside them in the same patterns, as many
runs as a setting has turns, the fastest kept.

    pip install -q --no-deps --no-index --target /tmp/inst WHEEL liger.whl
    PYTHONPATH=/tmp/inst python benchmarks/tools/call_patterns.py OUT.csv \\
        --cases fused_add_rms_norm:bfloat16:512x16384,rms_norm:float32:256x4096 \\
        --settings 'plain=FUSEDOPS_EXP_X=0;new=FUSEDOPS_EXP_X=1' --impls compile-static,liger

--settings NAME=VAR=VALUE,VAR=VALUE;NAME=... (a name with no switches, `base=`, is the
wheel as it is; the first setting is the baseline). --warm-up N (default 3) drops N graphs
before the first case, as gpu_sweep.py's. The CSV has one row per case, pattern
and implementation. For the GPU machine; the argument parsing and the patterns' call
order are tested on the CPU (tests/pipeline/test_call_patterns.py).
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

from shape_probe_args import add_graph_probe_args

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from gpu_sweep import (
    KNOWN_IMPLS,
    PATTERNS,
    add_warm_up_arg,
    check_warm_up,
    choices,
    consumed,
    patterns,
)


def parse_settings(text: str) -> dict[str, dict[str, str]]:
    """'a=VAR=1,VAR2=2;b=' -> {"a": {"VAR": "1", "VAR2": "2"}, "b": {}}; an argparse type,
    so a setting without a name, a switch without a value or a name given twice is a usage
    error."""
    settings: dict[str, dict[str, str]] = {}
    for part in text.split(";"):
        name, eq, switches = part.partition("=")
        if not name or not eq:
            raise argparse.ArgumentTypeError(f"{part!r} is not NAME=VAR=VALUE,... or NAME=")
        if name in settings:
            raise argparse.ArgumentTypeError(f"setting {name!r} is given twice")
        env = {}
        for item in filter(None, switches.split(",")):
            var, eq, value = item.partition("=")
            if not var or not eq:
                raise argparse.ArgumentTypeError(f"{item!r} in setting {name!r} is not VAR=VALUE")
            env[var] = value
        settings[name] = env
    return settings


def time_case(
    writer: csv.writer,
    case: tuple,
    settings: dict,
    order: list[str],
    rivals: list[str],
    lg,
    n_sets: int,
) -> None:
    """One case's rows of the CSV: every setting and rival in every pattern."""
    import torch
    from gpu_sweep import calls_per_graph, graph_us, implementation, make_inputs
    from inprocess_ab import check_same_outputs, fastest_turns, relative

    op, dtype, rows, hidden = case
    turns = len(order) // len(settings)
    sets = [make_inputs(op, rows, hidden, dtype) for _ in range(n_sets)]
    calls = calls_per_graph(op, rows, hidden, dtype, n_sets)
    dtype_name = str(dtype).removeprefix("torch.")
    label = f"{op} {dtype_name} {rows}x{hidden}"
    if len(settings) > 1:
        check_same_outputs(implementation(op, "fusedops", sets[0], lg), settings, label)
    steps = {
        i: patterns([implementation(op, i, s, lg) for s in sets], consumed(op))
        for i in ["fusedops", *rivals]
    }
    for pattern in PATTERNS:
        step = steps["fusedops"][pattern]
        times = fastest_turns(lambda: graph_us(step, calls), settings, order)  # noqa: B023
        for r in rivals:  # as many runs as each setting has turns, the fastest kept
            times[r] = min(graph_us(steps[r][pattern], calls) for _ in range(turns))
        for impl, us in times.items():
            writer.writerow([op, dtype_name, rows, hidden, pattern, impl, f"{us:.3f}"])
        base = next(iter(times))
        rel = " ".join(f"{k}={v:+.1f}%" for k, v in relative(times).items())
        print(f"{label:36s} {pattern:8s} {base}={times[base]:.2f} {rel}", flush=True)
    del sets, steps
    torch.cuda.empty_cache()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("csv")
    add_graph_probe_args(p, cases="fused_add_rms_norm:bfloat16:512x16384", impls="compile-static")
    p.add_argument("--settings", type=parse_settings, default="base=")
    p.add_argument("--sets", type=int, default=4, help="input sets the rotating patterns take")
    p.add_argument("--rounds", type=int, default=2, help="rounds of the settings' turns")
    add_warm_up_arg(p, "the first case")
    args = p.parse_args(argv)
    rivals = [i for i in choices(p, "--impls", args.impls, KNOWN_IMPLS) if i != "fusedops"]
    if args.sets < 2:
        p.error("--sets must be at least 2: rotating needs more than one set")
    if args.rounds < 1:
        p.error("--rounds must be at least 1")
    check_warm_up(p, args.warm_up)
    if clash := sorted(set(args.settings) & {"fusedops", *rivals}):
        p.error(f"--settings: {', '.join(clash)} is an implementation's name; rename the setting")

    from gpu_sweep import liger_ops, warm_up
    from inprocess_ab import turn_order

    order = turn_order(args.settings, args.rounds)
    lg = liger_ops() if "liger" in rivals else None
    if "liger" in rivals and lg is None:
        p.error("--impls liger: Liger is not installed here (liger_kernel)")
    with open(args.csv, "w", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(["op", "dtype", "rows", "hidden", "pattern", "impl", "us"])
        warm_up(args.warm_up)
        for case in args.cases:
            time_case(writer, case, args.settings, order, rivals, lg, args.sets)
            out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
