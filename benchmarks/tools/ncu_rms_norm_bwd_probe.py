"""ncu target: the fusedops rms_norm backward op, one call per shape, after warm-up.

    ncu --profile-from-start off --section SpeedOfLight --section Occupancy \\
        --section LaunchStats python benchmarks/tools/ncu_rms_norm_bwd_probe.py \\
        [--dtype bfloat16] [--shapes 4096x2048,16384x8192] [--liger]

With `--cache-control none` and `--metrics lts__t_sector_hit_rate.pct,...` it
tells how much of a kernel's reading L2 serves (the two-pass kernel, double's
long rows, re-reads its row). `--liger` adds, per shape, Liger's forward and
backward (its kernels: _rms_norm_forward_kernel, _rms_norm_backward_kernel and
torch's column sum of its dw rows). A script, not a test.
"""

from __future__ import annotations

import argparse
import sys

import torch
from ncu_target import DTYPES, parse_shapes, profile_each_once

import fusedops  # noqa: F401  (registers torch.ops.fusedops)

EPS = 1e-6


def liger_forward_backward(dy: torch.Tensor, x: torch.Tensor, w: torch.Tensor):
    from liger_kernel.ops.rms_norm import LigerRMSNormFunction

    xg, wg = x.detach().requires_grad_(), w.detach().requires_grad_()

    def call() -> None:
        out = LigerRMSNormFunction.apply(xg, wg, EPS, 0.0, "llama", False)
        torch.autograd.grad(out, (xg, wg), dy)

    return call


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dtype", default="bfloat16", choices=DTYPES)
    parser.add_argument(
        "--shapes", type=parse_shapes, default="4096x2048,16384x8192", help="ROWSxHIDDEN,..."
    )
    parser.add_argument("--liger", action="store_true", help="profile Liger's backward too")
    args = parser.parse_args(argv)
    if args.liger:
        try:
            import liger_kernel  # noqa: F401
        except ImportError:
            print("--liger: liger_kernel is not importable here", file=sys.stderr)
            return 2
    dtype = getattr(torch, args.dtype)
    calls = []
    for rows, hidden in args.shapes:
        x = torch.randn(rows, hidden, dtype=dtype, device="cuda")
        w = torch.randn(hidden, dtype=dtype, device="cuda")
        dy = torch.randn_like(x)
        calls.append(lambda dy=dy, x=x, w=w: torch.ops.fusedops.rms_norm_backward(dy, x, w, EPS))
        if args.liger:
            calls.append(liger_forward_backward(dy, x, w))
    profile_each_once(calls)
    return 0


if __name__ == "__main__":
    sys.exit(main())
