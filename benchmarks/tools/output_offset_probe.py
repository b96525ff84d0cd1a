"""Does where an implementation's output lands pick the DRAM's fast or slow mode?

    python benchmarks/tools/output_offset_probe.py --csv OUT.csv [--op rms_norm]
        [--dtype bfloat16] [--shape 16384x2048] [--impls fusedops,liger,copy] [--pads 16]

At 32-64 MB per call Liger's and the copy's times in the sweep's CUDA graph
depend on the input placement (placement_probe.py). Here the inputs stay put
and the output is meant to move: before the captured calls the capture
allocates a pad of k x 2 MB from the graph's pool (k = 0 .. --pads - 1), and
the implementations' outputs are allocated after it. The copy's output is
allocated outside the capture, as in gpu_sweep.py, after a pad allocated
first.

The caching allocator decides where an output goes, and a pad does not always
move it: a pad that gets a segment of its own leaves the output where it was
(on an H100 with torch 2.11, pads of 0-22 MB did, so 16 pads gave 5 output
addresses). Every row records the output's address, and the run ends by
printing how many distinct ones each implementation got. Within one pad the
implementations whose outputs come from the graph pool got the same address,
which is what lets two kernels be compared on the same buffers. Ops that write
into an input (Liger's silu backward) have no output to move.

Each CSV row: the pad, the implementation, the x and output addresses, and
the time per call with gpu_sweep.py's graph timing (implementations in
--impls order, not rotated as gpu_sweep.py rotates them). A script, not a
test: it needs a GPU.
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

import torch
from shape_probe_args import add_shape_probe_args, shape_probe_args

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from gpu_sweep import (
    calls_per_graph,
    implementation,
    largest,
    liger_ops,
    make_inputs,
)
from l2_state import reset_l2_persisting

PAD_BYTES = 2 << 20


def first_tensor(result: object) -> torch.Tensor:
    """The output tensor of a call (the first, if it returns several)."""
    return result[0] if isinstance(result, (tuple, list)) else result


def timed_with_pad(fn, calls: int, pad_bytes: int, pad_inside: bool) -> tuple[float, int]:
    """(µs per call, the first output's address) of `calls` calls in one graph."""
    from triton.testing import do_bench

    fn()
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        pad = torch.empty(pad_bytes, dtype=torch.uint8, device="cuda") if pad_inside else None
        address = first_tensor(fn()).data_ptr()
        for _ in range(calls - 1):
            fn()
    reset_l2_persisting()
    ms = do_bench(graph.replay, warmup=5, rep=30, return_mode="median")
    del graph, pad
    return 1e3 * ms / calls, address


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--csv", required=True)
    add_shape_probe_args(parser)
    parser.add_argument("--pads", type=int, default=16)
    args = parser.parse_args(argv)
    if args.pads < 1:
        parser.error(f"--pads must be at least 1, not {args.pads}")
    rows, hidden, dtype, impls = shape_probe_args(parser, args)
    if not torch.cuda.is_available():
        print("output_offset_probe.py needs a CUDA GPU", file=sys.stderr)
        return 2
    lg = liger_ops() if "liger" in impls else None
    inputs = make_inputs(args.op, rows, hidden, dtype)
    x_address = largest(inputs).data_ptr()
    calls = calls_per_graph(args.op, rows, hidden, dtype)
    addresses: dict[str, set[int]] = {}
    with open(args.csv, "w", newline="") as f:
        out = csv.writer(f)
        out.writerow(
            ["op", "dtype", "rows", "hidden", "pad_mb", "impl", "x_address", "out_address", "us"]
        )
        for k in range(args.pads):
            for impl in impls:
                if impl == "copy":
                    pad = torch.empty(k * PAD_BYTES, dtype=torch.uint8, device="cuda")
                    fn = implementation(args.op, impl, inputs, lg)
                    us, address = timed_with_pad(fn, calls, 0, pad_inside=False)
                    del pad
                else:
                    fn = implementation(args.op, impl, inputs, lg)
                    us, address = timed_with_pad(fn, calls, k * PAD_BYTES, pad_inside=True)
                offset = ((address - x_address) % (64 << 20)) >> 20
                row = [
                    args.op,
                    args.dtype,
                    rows,
                    hidden,
                    2 * k,
                    impl,
                    x_address,
                    address,
                    f"{us:.3f}",
                ]
                out.writerow(row)
                print(
                    f"pad {2 * k:3d} MB {impl:8} out-x mod 64 MB = {offset:2d} MB: {us:.2f} us",
                    flush=True,
                )
                addresses.setdefault(impl, set()).add(address)
    for impl, seen in addresses.items():
        print(f"{impl}: {len(seen)} distinct output addresses over {args.pads} pads")
    return 0


if __name__ == "__main__":
    sys.exit(main())
