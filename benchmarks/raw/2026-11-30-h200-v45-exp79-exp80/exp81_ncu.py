"""exp81 under ncu (session 63): ours and three of exp81's plain-load Triton forms at the float32
fused add 1024 x 2048, each called CALLS times in a row on the same tensors, for ncu to profile
(the caller sets --cache-control). Run from the repository root with the wheel on PYTHONPATH:

    ncu ... python benchmarks/raw/2026-11-30-h200-v45-exp79-exp80/exp81_ncu.py
"""

import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from exp81_structure import EPS, OP, make_inputs, triton_impl

import fusedops

CALLS = 3
FORMS = {
    "tri-x1-r2048-w8": (1, 2048, 8),
    "tri-x2-r2048-w8": (2, 2048, 8),
    "tri-x1-r1024-w8": (1, 1024, 8),
}


def main() -> int:
    inputs = make_inputs(OP, 1024, 2048, torch.float32)
    calls = {"fusedops": lambda: fusedops.fused_add_rms_norm(*inputs, EPS)}
    for name, (xb, rb, w) in FORMS.items():
        calls[name] = triton_impl(inputs, xb, rb, w, "")
    for fn in calls.values():  # compile outside the profiled range
        fn()
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStart()
    for name, fn in calls.items():
        torch.cuda.nvtx.range_push(name)
        for _ in range(CALLS):
            fn()
        torch.cuda.nvtx.range_pop()
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStop()
    print(" ".join(calls))
    return 0


if __name__ == "__main__":
    sys.exit(main())
