# Which kernel each fused-add shape runs, its dynamic shared memory and blocks per SM
# (from the profiler's kernel events).
import json
import sys
import tempfile

import torch
from torch.profiler import ProfilerActivity, profile

import fusedops

rows_list = [int(v) for v in sys.argv[1].split(",")]
hiddens = [int(v) for v in sys.argv[2].split(",")]
for dt in (torch.bfloat16, torch.float16):
    for h in hiddens:
        w = torch.randn(h, device="cuda", dtype=dt)
        for rows in rows_list:
            x, r = (torch.randn(rows, h, device="cuda", dtype=dt) for _ in range(2))
            fusedops.fused_add_rms_norm(x, r, w)
            torch.cuda.synchronize()
            with profile(activities=[ProfilerActivity.CUDA]) as p:
                fusedops.fused_add_rms_norm(x, r, w)
                torch.cuda.synchronize()
            f = tempfile.mktemp(suffix=".json")
            p.export_chrome_trace(f)
            with open(f) as trace:
                events = json.load(trace)["traceEvents"]
            ev = [e for e in events if e.get("cat") == "kernel" and "rms_norm" in e.get("name", "")]
            for e in ev:
                a = e["args"]
                kind = "cluster" if "cluster" in e["name"] else "single"
                print(
                    str(dt)[6:],
                    h,
                    rows,
                    kind,
                    "smem",
                    a.get("shared memory"),
                    "blocks/SM",
                    a.get("blocks per SM"),
                    "regs",
                    a.get("registers per thread"),
                    "grid",
                    a.get("grid"),
                    "block",
                    a.get("block"),
                    flush=True,
                )
