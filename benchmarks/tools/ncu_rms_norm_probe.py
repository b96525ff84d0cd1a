"""ncu target: one fusedops rms_norm forward and one torch.compile forward at 16384x16384 bf16.

    ncu --profile-from-start off --section SpeedOfLight --section MemoryWorkloadAnalysis \\
        --section Occupancy --section LaunchStats python benchmarks/tools/ncu_rms_norm_probe.py
"""

import torch

import fusedops

torch._dynamo.config.recompile_limit = 64
x = torch.randn(16384, 16384, dtype=torch.bfloat16, device="cuda")
w = torch.randn(16384, dtype=torch.bfloat16, device="cuda")


def manual(x, w):
    xf = x.float()
    return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6) * w.float()).to(x.dtype)


c = torch.compile(manual)
for _ in range(3):
    fusedops.rms_norm(x, w)
    c(x, w)
torch.cuda.synchronize()
torch.cuda.cudart().cudaProfilerStart()
fusedops.rms_norm(x, w)
c(x, w)
torch.cuda.synchronize()
torch.cuda.cudart().cudaProfilerStop()
