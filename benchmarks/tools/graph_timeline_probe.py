"""Where a small-row call's time goes inside a CUDA graph: kernel time vs the gap between kernels.

    python benchmarks/tools/graph_timeline_probe.py [--csv OUT.csv] [--calls 64]
        [--cases fused_add_rms_norm:bfloat16:1024x8192,...] [--impls fusedops,compile-static]
        [--pattern same|rotating|consumer]

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

--pattern is gpu_sweep.py's: `rotating` takes its input sets in turn, `consumer` also
sums each output after the call. There a call is more than one kernel, so each row also
gives every kernel's median duration by name (`by_kernel`): whether a gap to a rival is
in the op's kernel or in the sum that reads its output.

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
    PATTERNS,
    captured,
    choices,
    graph_us,
    impl_step,
    liger_ops,
    make_inputs,
    shape_input_sets,
    whole_rounds,
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
    "pattern",
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
    "by_kernel",
]
KERNEL_NAME_CHARS = 60


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


def by_kernel(replays: list[list[dict]]) -> list[tuple[str, float, float]]:
    """(name, median duration in us, count per replay) of each kernel name in the
    replays, the largest total time first."""
    durations: dict[str, list[float]] = {}
    for ks in replays:
        for k in ks:
            durations.setdefault(k["name"][:KERNEL_NAME_CHARS], []).append(k["dur"])
    found = [
        (name, statistics.median(ds), len(ds) / len(replays)) for name, ds in durations.items()
    ]
    return sorted(found, key=lambda f: -f[1] * f[2])


def by_kernel_text(found: list[tuple[str, float, float]], calls: int) -> str:
    """by_kernel's list for a CSV cell: 'NAME=US xN/call; ...'."""
    return "; ".join(f"{name}={us:.3f} x{n / calls:.2f}/call" for name, us, n in found)


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
        "kernel": first["name"][:KERNEL_NAME_CHARS],
        "by_kernel": by_kernel_text(by_kernel(replays), calls),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--csv", type=Path, help="also write the rows here")
    parser.add_argument("--calls", type=int, default=64, help="calls per graph (default 64)")
    add_graph_probe_args(parser, DEFAULT_CASES, "fusedops,liger,compile,copy")
    parser.add_argument(
        "--pattern", choices=PATTERNS, default="same", help="gpu_sweep.py's call pattern"
    )
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
        n_sets = shape_input_sets(args.pattern, op, rows, hidden, dtype)
        calls = whole_rounds(args.calls, n_sets)
        sets = [make_inputs(op, rows, hidden, dtype) for _ in range(n_sets)]
        for impl in impls:
            step = impl_step(op, impl, args.pattern, sets, lg)
            if step is None:
                continue
            row = {"op": op, "dtype": dtype_name, "rows": rows, "hidden": hidden, "impl": impl}
            row["pattern"] = args.pattern
            row["graph_us"] = f"{graph_us(step, calls):.3f}"
            row.update(timeline(step, calls))
            del step  # a rotating step keeps n_sets outputs
            rows_out.append(row)
            print(
                f"{op:18s} {dtype_name:8s} {rows:5d}x{hidden:<5d} {impl:8s} "
                f"graph {row['graph_us']:>6s}  kernel {row['kernel_us']:>6s}  "
                f"gap {row['gap_us']:>6s}  period {row['period_us']:>6s}  "
                f"k/call {row['kernels_per_call']}  grid {row['grid']} block {row['block']} "
                f"regs {row['registers']} smem {row['shared_bytes']}  {row['kernel']}",
                flush=True,
            )
            if args.pattern != "same":
                print(f"    by kernel: {row['by_kernel']}", flush=True)
    if args.csv:
        with args.csv.open("w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=FIELDS)
            writer.writeheader()
            writer.writerows(rows_out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
