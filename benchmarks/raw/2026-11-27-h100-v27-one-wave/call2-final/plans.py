"""Which forward kernel each shape launches: the template arguments of its kernel name."""

import csv
import re
import sys
from functools import partial

import torch
from torch.profiler import ProfilerActivity, profile

import fusedops

ROWS = [int(v) for v in sys.argv[2].split(",")]
HIDDEN = (2048, 4096, 8192, 16384)
NAME = re.compile(r"rms_norm_fwd_(\w+)_kernel<([^<>]*)>")


def kernel_args(call) -> str:
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        call()
        torch.cuda.synchronize()
    names = [e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    found = [NAME.search(n) for n in names]
    return " | ".join(f"{m.group(1)}<{m.group(2)}>" for m in found if m)


with open(sys.argv[1], "w", newline="") as f:
    out = csv.writer(f)
    out.writerow(["op", "dtype", "rows", "hidden", "kernel"])
    for dtype in (torch.bfloat16, torch.float16, torch.float32):
        for hidden in HIDDEN:
            x = torch.randn(max(ROWS), hidden, dtype=dtype, device="cuda")
            r = torch.randn_like(x)
            w = torch.randn(hidden, dtype=dtype, device="cuda")
            for rows in ROWS:
                calls = {
                    "rms_norm": partial(fusedops.rms_norm, x[:rows], w, 1e-6),
                    "fused_add_rms_norm": partial(
                        fusedops.fused_add_rms_norm, x[:rows], r[:rows], w, 1e-6
                    ),
                }
                for op, call in calls.items():
                    call()
                    out.writerow(
                        [op, str(dtype).removeprefix("torch."), rows, hidden, kernel_args(call)]
                    )
