"""ncu target: the rms_norm backward at small rows, kernel by kernel.

    ncu --profile-from-start off --cache-control none --clock-control none \\
        --metrics gpu__time_duration.sum,launch__grid_size,launch__block_size,\\
launch__registers_per_thread python benchmarks/tools/ncu_bwd_small_rows.py [--rows 1 16 128 1024]

For each dtype and row count (hidden 4096) one call of: the fusedops backward
op, torch's fused backward (`aten::_fused_rms_norm_backward`) and torch.compile's
forward + backward of F.rms_norm, in that order, each after warm-up calls, so
the profiled kernels see warm caches as in a CUDA-graph replay. The kernel names
tell the three apart (fusedops: rms_norm_*/sum_partials_*, torch: *GammaBeta* /
*cuComputeGradInput*, compile: triton_*). A script, not a test.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

import fusedops  # noqa: F401  (registers torch.ops.fusedops)

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from references import allow_many_graphs

EPS = 1e-6


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hidden", type=int, default=4096)
    parser.add_argument("--rows", type=int, nargs="+", default=[1, 16, 128, 1024])
    args = parser.parse_args(argv)
    allow_many_graphs()  # one compiled graph per dtype and row count

    @torch.compile(dynamic=False)
    def compiled(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.rms_norm(x, (x.shape[-1],), w, EPS)

    below = torch._C._AutoDispatchBelowAutograd
    cases = []
    for dtype in (torch.bfloat16, torch.float32):
        for rows in args.rows:
            x = torch.randn(rows, args.hidden, device="cuda", dtype=dtype)
            w = torch.randn(args.hidden, device="cuda", dtype=dtype)
            dy = torch.randn_like(x)
            rstd = torch.ops.aten._fused_rms_norm(x, [args.hidden], w, EPS)[1]
            xg, wg = x.clone().requires_grad_(), w.clone().requires_grad_()

            def ours(dy=dy, x=x, w=w):
                with below():
                    torch.ops.fusedops.rms_norm_backward.default(dy, x, w, EPS)

            def aten(dy=dy, x=x, w=w, rstd=rstd):
                torch.ops.aten._fused_rms_norm_backward(dy, x, [args.hidden], rstd, w, [True, True])

            def comp(xg=xg, wg=wg, dy=dy):
                torch.autograd.grad(compiled(xg, wg), (xg, wg), dy)

            cases.append((f"{dtype} rows={rows}", (ours, aten, comp)))
    for _, fns in cases:
        for fn in fns:
            for _ in range(3):
                fn()
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStart()
    for label, fns in cases:
        print(label, flush=True)
        for fn in fns:
            fn()
            fn()  # the second call is the one to read: the first may touch cold lines
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
