"""ncu target: one forward call per implementation and shape, after warm-up.

    ncu --profile-from-start off --clock-control none --section SpeedOfLight \\
        --section Occupancy --section LaunchStats --section WarpStateStats \\
        python benchmarks/tools/ncu_fwd_probe.py [--op rms_norm] [--dtype bfloat16] \\
        [--shapes 1x4096,128x4096] [--impls fusedops,liger,compile] [--repeat N]

The implementations are gpu_sweep.py's (the same Liger calls, the same
torch.compile of the float32 math with rows dynamic), so a profile explains a
sweep row. Only the calls between cudaProfilerStart and cudaProfilerStop are
profiled: per shape, one call of each implementation in --impls order (or
--repeat calls of each in a row: with `--cache-control none`, the later ones see
the L2 their predecessors left; the implementations of a shape share inputs, so
compare the last repeat of each). The
kernel names tell them apart (fusedops: rms_norm_* / silu_and_mul_*; Liger:
_rms_norm_forward_kernel / _fused_add_rms_norm_forward_kernel /
_swiglu_forward_kernel; torch.compile and compile-static, its build for each
shape: triton_*; copy: a device copy of x). torch.compile computes in
float32, as in the sweep, so for float64 it is not the same math. A script,
not a test.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch
from ncu_target import DTYPES, parse_shapes, profile_each_once

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from gpu_sweep import KNOWN_IMPLS, OPS, choices, implementation, liger_ops, make_inputs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--op", default="rms_norm", choices=OPS)
    parser.add_argument("--dtype", default="bfloat16", choices=DTYPES)
    parser.add_argument(
        "--shapes", type=parse_shapes, default="1x4096,128x4096", help="ROWSxHIDDEN,..."
    )
    parser.add_argument("--impls", default="fusedops,liger,compile", help=",".join(KNOWN_IMPLS))
    parser.add_argument(
        "--repeat", type=int, default=1, help="profile this many calls of each in a row"
    )
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error(f"--repeat must be at least 1, not {args.repeat}")
    impls = choices(parser, "--impls", args.impls, KNOWN_IMPLS)
    dtype = getattr(torch, args.dtype)
    lg = liger_ops() if "liger" in impls else None
    calls = []
    for rows, hidden in args.shapes:
        inputs = make_inputs(args.op, rows, hidden, dtype)
        for impl in impls:
            fn = implementation(args.op, impl, inputs, lg)
            if fn is None:
                print(f"{impl} is not available here", file=sys.stderr)
                return 2
            calls.append(fn)
    profile_each_once(calls, repeat=args.repeat)
    return 0


if __name__ == "__main__":
    sys.exit(main())
