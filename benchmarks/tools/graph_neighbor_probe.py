"""Does a kernel's time in the sweep depend on running after itself?

    python benchmarks/tools/graph_neighbor_probe.py [--cases rms_norm:float32:128x4096,...]
        [--impls fusedops,liger,compile] [--rounds 3] [--neighbour-kb 64] [--csv OUT.csv]

gpu_sweep.py times each implementation as a CUDA graph of identical calls, so
every kernel runs right after another instance of itself. In a model the
kernel before a norm is some other op. For each case this probe times each
implementation twice, in graphs of the same length:
- `alone`: back to back, as the sweep does;
- `after a copy`: each call preceded by an unrelated device copy
  (--neighbour-kb, 64 KB by default), less a graph of those copies alone.
If an implementation's time differs between the two, the sweep's number for
it depends on its neighbour. Inputs and implementations are gpu_sweep.py's;
each round times the implementations in a new order and the median round is
reported. A probe, not a test: numbers go to benchmarks/RESULTS.md.
"""

from __future__ import annotations

import argparse
import csv
import statistics
import sys
from pathlib import Path

import torch
from shape_probe_args import add_graph_probe_args

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from gpu_sweep import (
    KNOWN_IMPLS,
    calls_per_graph,
    choices,
    graph_us,
    implementation,
    liger_ops,
    make_inputs,
    rotated,
)

DEFAULT_CASES = (
    "rms_norm:float32:128x4096,rms_norm:float32:128x16384,rms_norm:bfloat16:128x2048,"
    "fused_add_rms_norm:bfloat16:128x4096,fused_add_rms_norm:float16:128x4096,"
    "fused_add_rms_norm:bfloat16:16x4096,rms_norm:bfloat16:128x4096"
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_graph_probe_args(parser, DEFAULT_CASES, "fusedops,liger,compile")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--neighbour-kb", type=int, default=64)
    parser.add_argument("--csv", help="write the rows to this CSV file too")
    args = parser.parse_args(argv)
    if args.rounds < 1 or args.neighbour_kb < 1:
        parser.error("--rounds and --neighbour-kb must be at least 1")
    impls = choices(parser, "--impls", args.impls, KNOWN_IMPLS)
    lg = liger_ops() if "liger" in impls else None
    src = torch.empty(args.neighbour_kb << 10, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)

    def neighbour() -> None:
        dst.copy_(src)

    rows_out = []
    print(f"{'case':40s} {'impl':9s} {'alone us':>9s} {'after copy':>10s} {'change':>7s}")
    for op, dtype, rows, hidden in args.cases:
        inputs = make_inputs(op, rows, hidden, dtype)
        calls = calls_per_graph(op, rows, hidden, dtype)
        found = {impl: implementation(op, impl, inputs, lg) for impl in impls}
        fns = {impl: fn for impl, fn in found.items() if fn is not None}  # Liger may be absent
        alone: dict[str, list[float]] = {impl: [] for impl in fns}
        paired: dict[str, list[float]] = {impl: [] for impl in fns}
        for r in range(args.rounds):
            for impl in rotated(list(fns), r):
                fn = fns[impl]
                alone[impl].append(graph_us(fn, calls))
                both = graph_us(lambda fn=fn: (neighbour(), fn()), calls)
                paired[impl].append(both - graph_us(neighbour, calls))
        case = f"{op} {str(dtype).removeprefix('torch.')} {rows}x{hidden}"
        for impl in fns:
            a, p = statistics.median(alone[impl]), statistics.median(paired[impl])
            print(f"{case:40s} {impl:9s} {a:9.3f} {p:10.3f} {100 * (p / a - 1):+6.1f}%")
            rows_out.append([op, str(dtype), rows, hidden, impl, f"{a:.4f}", f"{p:.4f}"])
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            writer = csv.writer(f)
            writer.writerow(["op", "dtype", "rows", "hidden", "impl", "alone_us", "after_copy_us"])
            writer.writerows(rows_out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
