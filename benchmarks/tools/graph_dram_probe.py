"""ncu target: one replay of gpu_sweep.py's CUDA graph per implementation and input placement.

    ncu --profile-from-start off --graph-profiling graph --cache-control none --clock-control none --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum,lts__t_sectors_srcunit_tex_op_read.sum --csv --page raw \
        python benchmarks/tools/graph_dram_probe.py [--op rms_norm] [--dtype bfloat16] \
        [--shape 16384x2048] [--impls fusedops,liger,copy] [--placements 6] \
        [--pattern same|rotating|consumer]

At 32-64 MB reads the sweep's time per call depends on the input placement
for Liger and the copy (placement_probe.py). Is a fast replay one that moves
fewer DRAM bytes (part of a call's data still in the L2 from the call
before)? With `--graph-profiling graph` ncu profiles a whole graph launch as
one result, so its DRAM counters cover the calls of one replay. Per placement
(gpu_sweep.py's spacers, then fresh inputs) each implementation's graph is
captured, replayed twice unprofiled, then once between cudaProfilerStart and
cudaProfilerStop; results come in placement order, implementations in
--impls order. The calls per graph are printed, to turn the totals into
bytes per call.

What it does not reproduce: gpu_sweep.py times replays with
triton.testing.do_bench, which flushes the L2 (writing a large buffer)
between them; here the replays follow each other directly, and under ncu a
replay runs slower than in the sweep. So it counts bytes; it does not tell a
fast replay from a slow one. Each placement's inputs are dropped after it (the
sweep keeps them), so the same seed does not give placement_probe.py's
layouts.

--pattern is gpu_sweep.py's: `rotating` captures its input sets in turn, `consumer` also
sums each call's output after it. There, `--graph-profiling node` (instead of graph) gives
each kernel of a replay its own counters, so the op's DRAM bytes and L2 hit rate show
apart from the sum's: whether an op is faster in one pattern than another because it
finds more of its data in the L2. A script, not a test.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

import torch
from shape_probe_args import add_shape_probe_args, shape_probe_args

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from gpu_sweep import (
    PATTERNS,
    calls_per_graph,
    captured,
    impl_step,
    liger_ops,
    make_inputs,
    shape_input_sets,
    spacers,
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_shape_probe_args(parser)
    parser.add_argument("--placements", type=int, default=6)
    parser.add_argument(
        "--pattern", choices=PATTERNS, default="same", help="gpu_sweep.py's call pattern"
    )
    args = parser.parse_args(argv)
    if args.placements < 1:
        parser.error(f"--placements must be at least 1, not {args.placements}")
    rows, hidden, dtype, impls = shape_probe_args(parser, args)
    if not torch.cuda.is_available():
        print("graph_dram_probe.py needs a CUDA GPU", file=sys.stderr)
        return 2
    lg = liger_ops() if "liger" in impls else None
    n_sets = shape_input_sets(args.pattern, args.op, rows, hidden, dtype)
    calls = calls_per_graph(args.op, rows, hidden, dtype, n_sets)
    print(f"{calls} calls per graph, {n_sets} input set(s), pattern {args.pattern}", flush=True)
    rng, held = random.Random(0), []
    for placement in range(args.placements):
        held += spacers(rng)
        sets = [make_inputs(args.op, rows, hidden, dtype) for _ in range(n_sets)]
        for impl in impls:
            step = impl_step(args.op, impl, args.pattern, sets, lg)
            if step is None:
                print(f"{impl} is not available here", file=sys.stderr)
                return 2
            graph = captured(step, calls)
            graph.replay()
            graph.replay()
            torch.cuda.synchronize()
            torch.cuda.cudart().cudaProfilerStart()
            graph.replay()
            torch.cuda.synchronize()
            torch.cuda.cudart().cudaProfilerStop()
            print(f"placement {placement} {impl}", flush=True)
            del graph
            if args.pattern != "same":  # its step keeps n_sets outputs
                del step
        del sets
    return 0


if __name__ == "__main__":
    sys.exit(main())
