"""ncu target: one forward call per implementation at one shape, after warm-up.

    ncu --profile-from-start off --clock-control none --section SpeedOfLight \\
        --section Occupancy --section LaunchStats \\
        python benchmarks/tools/ncu_fwd_probe.py ROWS HIDDEN [DTYPE] [IMPL ...]

IMPL: fusedops, liger, compile (default: all three). Only the calls between
cudaProfilerStart and cudaProfilerStop are profiled, one per implementation.
"""

import sys

import torch

import fusedops

EPS = 1e-6


def manual(x, w):
    xf = x.float()
    return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + EPS) * w.float()).to(x.dtype)


def main() -> None:
    rows, hidden = int(sys.argv[1]), int(sys.argv[2])
    dtype = getattr(torch, sys.argv[3]) if len(sys.argv) > 3 else torch.bfloat16
    impls = sys.argv[4:] or ["fusedops", "liger", "compile"]
    x = torch.randn(rows, hidden, dtype=dtype, device="cuda")
    w = torch.randn(hidden, dtype=dtype, device="cuda")
    fns = {"fusedops": lambda: fusedops.rms_norm(x, w, EPS)}
    if "liger" in impls:
        from liger_kernel.ops.rms_norm import LigerRMSNormFunction

        fns["liger"] = lambda: LigerRMSNormFunction.apply(x, w, EPS, 0.0, "llama", False)
    if "compile" in impls:
        compiled = torch.compile(manual, dynamic=False)
        fns["compile"] = lambda: compiled(x, w)
    for _ in range(3):
        for name in impls:
            fns[name]()
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStart()
    for name in impls:
        fns[name]()
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStop()


if __name__ == "__main__":
    main()
