"""ncu target: the fusedops rms_norm backward op at 4096x2048 and 16384x8192 bf16.

    ncu --profile-from-start off --section SpeedOfLight --section Occupancy \\
        --section LaunchStats python benchmarks/tools/ncu_rms_norm_bwd_probe.py
"""

import torch

import fusedops  # noqa: F401  (registers torch.ops.fusedops)

cases = []
for rows, hidden in ((4096, 2048), (16384, 8192)):
    x = torch.randn(rows, hidden, dtype=torch.bfloat16, device="cuda")
    w = torch.randn(hidden, dtype=torch.bfloat16, device="cuda")
    cases.append((torch.randn_like(x), x, w))
for dy, x, w in cases:
    for _ in range(3):
        torch.ops.fusedops.rms_norm_backward(dy, x, w, 1e-6)
torch.cuda.synchronize()
torch.cuda.cudart().cudaProfilerStart()
for dy, x, w in cases:
    torch.ops.fusedops.rms_norm_backward(dy, x, w, 1e-6)
torch.cuda.synchronize()
torch.cuda.cudart().cudaProfilerStop()
