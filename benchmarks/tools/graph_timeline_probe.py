"""Where a small-row call's time goes inside a CUDA graph: kernel time vs the gap between kernels.

    python benchmarks/tools/graph_timeline_probe.py [--csv OUT.csv] [--calls 64]
        [--cases fused_add_rms_norm:bfloat16:1024x8192,...] [--impls fusedops,compile-static]

gpu_sweep.py reports time per call in a replayed graph of identical calls:
that is one kernel's duration plus the gap before the next kernel starts.
nsys is not available on every machine, so this probe reads the same timeline
through torch.profiler (CUPTI kernel records carry each graph node's start,
end and launch configuration). For each shape and implementation it captures
`calls` calls in one graph, replays it once untraced to warm up and then
three times under the profiler, and prints the median kernel duration, the
median gap from one kernel's end to the next one's start, the median period
(start to start), the launch configuration and, for comparison, the
untraced per-call time measured the way gpu_sweep.py measures it.

A script, not a test: tracing adds its own overhead, so compare the
implementations with each other in one run, not with the sweep's numbers.
"""

from __future__ import annotations

import argparse
import csv
import itertools
import json
import statistics
import sys
import tempfile
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from gpu_sweep import (
    KNOWN_IMPLS,
    captured,
    choices,
    graph_us,
    implementation,
    liger_ops,
    make_inputs,
)
from shape_probe_args import add_graph_probe_args

DEFAULT_CASES = (
    "rms_norm:bfloat16:1x4096,rms_norm:bfloat16:16x4096,rms_norm:bfloat16:128x4096,"
    "rms_norm:bfloat16:128x2048,rms_norm:float32:128x4096,fused_add_rms_norm:bfloat16:1x4096,"
    "fused_add_rms_norm:bfloat16:128x4096,fused_add_rms_norm:bfloat16:128x2048"
)
GPU_WORK = ("kernel", "gpu_memcpy")  # trace categories of graph nodes (copy_ is a memcpy node)
FIELDS = [
    "op",
    "dtype",
    "rows",
    "hidden",
    "impl",
    "graph_us",
    "kernels_per_call",
    "kernel_us",
    "gap_us",
    "period_us",
    "grid",
    "block",
    "registers",
    "shared_bytes",
    "kernel",
]


def traced_kernels(graph: torch.cuda.CUDAGraph, replays: int) -> list[list[dict]]:
    """Kernel records of each traced replay, in start order."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(replays):
            graph.replay()
            torch.cuda.synchronize()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "trace.json"
        prof.export_chrome_trace(str(path))
        events = json.loads(path.read_text())["traceEvents"]
    kernels = sorted(
        (e for e in events if e.get("cat") in GPU_WORK and "dur" in e), key=lambda e: e["ts"]
    )
    if not kernels:
        raise RuntimeError(f"the profiler recorded no {' or '.join(GPU_WORK)} in the replays")
    per_replay = len(kernels) // replays
    return [kernels[i * per_replay : (i + 1) * per_replay] for i in range(replays)]


def timeline(fn, calls: int) -> dict[str, object]:
    graph = captured(fn, calls)
    graph.replay()
    torch.cuda.synchronize()
    durs, gaps, periods = [], [], []
    replays = traced_kernels(graph, 3)
    for ks in replays:
        durs += [k["dur"] for k in ks]
        gaps += [b["ts"] - (a["ts"] + a["dur"]) for a, b in itertools.pairwise(ks)]
        periods += [b["ts"] - a["ts"] for a, b in itertools.pairwise(ks)]
    first = replays[0][0]
    args = first.get("args", {})
    del graph
    return {
        "kernels_per_call": f"{len(replays[0]) / calls:.2f}",
        "kernel_us": f"{statistics.median(durs):.3f}",
        "gap_us": f"{statistics.median(gaps):.3f}" if gaps else "",
        "period_us": f"{statistics.median(periods):.3f}" if periods else "",
        "grid": str(args.get("grid", "")),
        "block": str(args.get("block", "")),
        "registers": str(args.get("registers per thread", "")),
        "shared_bytes": str(args.get("shared memory", "")),
        "kernel": first["name"][:60],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--csv", type=Path, help="also write the rows here")
    parser.add_argument("--calls", type=int, default=64, help="calls per graph (default 64)")
    add_graph_probe_args(parser, DEFAULT_CASES, "fusedops,liger,compile,copy")
    args = parser.parse_args(argv)
    if args.calls < 2:
        parser.error("--calls must be at least 2 (a gap needs two kernels)")
    impls = choices(parser, "--impls", args.impls, KNOWN_IMPLS)
    if not torch.cuda.is_available():
        print("graph_timeline_probe: needs a CUDA device", file=sys.stderr)
        return 2
    lg = liger_ops() if "liger" in impls else None
    rows_out = []
    for op, dtype, rows, hidden in args.cases:
        dtype_name = str(dtype).removeprefix("torch.")
        inputs = make_inputs(op, rows, hidden, dtype)
        for impl in impls:
            fn = implementation(op, impl, inputs, lg)
            if fn is None:
                continue
            row = {"op": op, "dtype": dtype_name, "rows": rows, "hidden": hidden, "impl": impl}
            row["graph_us"] = f"{graph_us(fn, args.calls):.3f}"
            row.update(timeline(fn, args.calls))
            rows_out.append(row)
            print(
                f"{op:18s} {dtype_name:8s} {rows:5d}x{hidden:<5d} {impl:8s} "
                f"graph {row['graph_us']:>6s}  kernel {row['kernel_us']:>6s}  "
                f"gap {row['gap_us']:>6s}  period {row['period_us']:>6s}  "
                f"k/call {row['kernels_per_call']}  grid {row['grid']} block {row['block']} "
                f"regs {row['registers']} smem {row['shared_bytes']}  {row['kernel']}",
                flush=True,
            )
    if args.csv:
        with args.csv.open("w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=FIELDS)
            writer.writeheader()
            writer.writerows(rows_out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
