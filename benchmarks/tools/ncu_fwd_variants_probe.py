"""ncu target: the wheel's forward, the fwd_variants.cu harness (all3, v0) and Liger at 128x4096 bf16.

    ncu --profile-from-start off --section SpeedOfLight --section Occupancy \\
        --section LaunchStats --section WarpStateStats --section SchedulerStats \\
        --section InstructionStats python benchmarks/tools/ncu_fwd_variants_probe.py LIB.so

LIB.so is benchmarks/tools/fwd_variants.cu built with nvcc (see fwd_variants.py).
Each implementation is warmed up, then called once between cudaProfilerStart and
cudaProfilerStop: rms_norm (fusedops, all3, v0, Liger), then the fused add
(fusedops, Liger).
"""

import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fwd_variants import load_library, variant
from ncu_target import profile_each_once

import fusedops


def main() -> None:
    from liger_kernel.ops.fused_add_rms_norm import LigerFusedAddRMSNormFunction
    from liger_kernel.ops.rms_norm import LigerRMSNormFunction

    lib = load_library(sys.argv[1])
    rows, hidden, dt = 128, 4096, torch.bfloat16
    x = torch.randn(rows, hidden, dtype=dt, device="cuda")
    w = torch.randn(hidden, dtype=dt, device="cuda")
    r = torch.randn_like(x)
    all3, _ = variant(lib, dt, 56, 0, x, w)
    v0, _ = variant(lib, dt, 0, 0, x, w)
    fns = [
        lambda: fusedops.rms_norm(x, w, 1e-6),
        all3,
        v0,
        lambda: LigerRMSNormFunction.apply(x, w, 1e-6, 0.0, "llama", False),
        lambda: fusedops.fused_add_rms_norm(x, r, w, 1e-6),
        lambda: LigerFusedAddRMSNormFunction.apply(x, r, w, 1e-6, 0.0, "llama", False),
    ]
    profile_each_once(fns, warmup=5)


if __name__ == "__main__":
    main()
