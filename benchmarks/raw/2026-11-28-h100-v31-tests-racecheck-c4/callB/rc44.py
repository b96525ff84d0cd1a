"""The sanitizer workload's loop body at one shape and dtype, for racecheck isolation.

python rc44.py DTYPE ROWS HIDDEN PART   (PART: all | fwd | rms_bwd | fused_bwd | silu)
"""

import sys

import torch

import fusedops

dtype = getattr(torch, sys.argv[1])
rows, hidden = int(sys.argv[2]), int(sys.argv[3])
part = sys.argv[4]
x = torch.randn(rows, hidden, dtype=dtype, device="cuda", requires_grad=True)
r = torch.randn_like(x, requires_grad=True)
w = torch.randn(hidden, dtype=dtype, device="cuda", requires_grad=True)
if part == "fwd":
    with torch.no_grad():
        fusedops.fused_add_rms_norm(x, r, w)
        fusedops.rms_norm(x, w)
elif part == "rms_bwd":
    fusedops.rms_norm(x, w).sum().backward()
elif part == "fused_bwd":
    out, res = fusedops.fused_add_rms_norm(x, r, w)
    (out.sum() + res.sum()).backward()
elif part == "silu":
    fusedops.silu_and_mul(x).sum().backward()
else:
    out, res = fusedops.fused_add_rms_norm(x, r, w)
    (fusedops.rms_norm(x, w).sum() + out.sum() + res.sum()).backward()
    fusedops.silu_and_mul(x.detach().clone().requires_grad_()).sum().backward()
torch.cuda.synchronize()
print("done", sys.argv[1:])
