"""Does where the inputs sit in memory change a sweep row? Time each implementation
over several input placements.

    python benchmarks/tools/placement_probe.py --csv OUT.csv [--op silu_and_mul]
        [--dtype bfloat16] [--shapes 1x2048,16x4096] [--impls fusedops,compile,liger]
        [--placements 12] [--pattern same|rotating|consumer]

Two runs of one set of inputs agree to 0.1%, yet fusedops alone and fusedops
in a full sweep once differed by up to 30% at a few 1-row shapes,
reproducibly: the inputs were allocated after different allocations. Here
each placement first allocates gpu_sweep.py's spacers (seeded sizes, kept
alive), then fresh inputs, and times every implementation on them with
gpu_sweep.py's own graph timing, so a spread here is the spread one set of
inputs can land anywhere in (gpu_sweep.py keeps the median of a few). Prints min / median / max per
implementation and shape; the CSV has one row per placement and
implementation, with the first input's address. --pattern is gpu_sweep.py's: each
placement is then input_sets() sets of inputs taken in turn, as the sweep times it. A script,
not a test: it needs a GPU.
"""

from __future__ import annotations

import argparse
import csv
import random
import statistics
import sys
from pathlib import Path

import torch
from ncu_target import DTYPES, parse_shapes

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from gpu_sweep import (
    KNOWN_IMPLS,
    OPS,
    PATTERNS,
    calls_per_graph,
    choices,
    graph_us,
    impl_step,
    liger_ops,
    make_inputs,
    rotated,
    shape_input_sets,
    spacers,
)

FIELDS = [
    "op",
    "dtype",
    "rows",
    "hidden",
    "pattern",
    "placement",
    "impl",
    "first_input_address",
    "us",
]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--csv", required=True)
    parser.add_argument("--op", default="silu_and_mul", choices=OPS)
    parser.add_argument("--dtype", default="bfloat16", choices=DTYPES)
    parser.add_argument("--shapes", type=parse_shapes, default="1x2048,16x4096,128x4096")
    parser.add_argument("--impls", default="fusedops,compile,liger", help=",".join(KNOWN_IMPLS))
    parser.add_argument("--placements", type=int, default=12)
    parser.add_argument(
        "--pattern", choices=PATTERNS, default="same", help="gpu_sweep.py's call pattern"
    )
    args = parser.parse_args(argv)
    if args.placements < 1:
        parser.error(f"--placements must be at least 1, not {args.placements}")
    impls = choices(parser, "--impls", args.impls, KNOWN_IMPLS)
    if not torch.cuda.is_available():
        print("placement_probe.py needs a CUDA GPU", file=sys.stderr)
        return 2
    dtype = getattr(torch, args.dtype)
    lg = liger_ops() if "liger" in impls else None
    rng = random.Random(0)
    with open(args.csv, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=FIELDS)
        writer.writeheader()
        for rows, hidden in args.shapes:
            times: dict[str, list[float]] = {impl: [] for impl in impls}
            held = []
            n_sets = shape_input_sets(args.pattern, args.op, rows, hidden, dtype)
            calls = calls_per_graph(args.op, rows, hidden, dtype, n_sets)
            for p in range(args.placements):
                held += spacers(rng)
                sets = [make_inputs(args.op, rows, hidden, dtype) for _ in range(n_sets)]
                held.append(sets)
                inputs = sets[0]
                for impl in rotated(impls, p):
                    step = impl_step(args.op, impl, args.pattern, sets, lg)
                    if step is None:
                        print(f"{impl} is not available here", file=sys.stderr)
                        return 2
                    us = graph_us(step, calls)
                    if args.pattern != "same":  # its step keeps n_sets outputs
                        del step
                    times[impl].append(us)
                    writer.writerow(
                        {
                            "op": args.op,
                            "dtype": args.dtype,
                            "rows": rows,
                            "hidden": hidden,
                            "pattern": args.pattern,
                            "placement": p,
                            "impl": impl,
                            "first_input_address": hex(inputs[0].data_ptr()),
                            "us": f"{us:.3f}",
                        }
                    )
            del held, sets
            torch.cuda.empty_cache()
            for impl, ts in times.items():
                print(
                    f"{args.op} {args.dtype} {rows}x{hidden} {impl:8}: min {min(ts):.3f} "
                    f"median {statistics.median(ts):.3f} max {max(ts):.3f} us",
                    flush=True,
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
