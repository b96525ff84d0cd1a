"""s47: FUSEDOPS_EXP_HALVES modes of the experiment wheel, taking turns in one process.

Modes: 0 the wheel as HEAD; 11 C = 4 in C = 2's order at every batch past the SMs, no
prefetch; 13 the same with the prefetch where the plan prefetches. Bits checked against
mode 0 at every shape; times are gpu_sweep.py's (kernel time per call in a CUDA graph).
"""

import csv
import os
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path("benchmarks").resolve()))
from gpu_sweep import GRAPH_BYTES, MAX_CALLS, graph_us, liger_ops

import fusedops

EPS = 1e-6
MODES = ["0", "11", "13", "13", "11", "0"]
out_csv = sys.argv[1]
rows_list = [int(r) for r in sys.argv[2].split(",")]
hidden_list = [int(h) for h in sys.argv[3].split(",")]
liger = liger_ops()
a = torch.randn(4096, 4096, device="cuda")
for _ in range(200):
    a @ a
with open(out_csv, "w", newline="") as f:
    w_csv = csv.writer(f)
    w_csv.writerow(["dtype", "rows", "hidden", "impl", "us"])
    for dtype in (torch.bfloat16, torch.float16):
        for hidden in hidden_list:
            w = torch.randn(hidden, dtype=dtype, device="cuda")
            for rows in rows_list:
                x = torch.randn(rows, hidden, dtype=dtype, device="cuda")
                moved = (2 * rows * hidden + hidden) * x.element_size()
                calls = max(1, min(MAX_CALLS, GRAPH_BYTES // moved))
                os.environ["FUSEDOPS_EXP_HALVES"] = "0"
                ref = fusedops.rms_norm(x, w, EPS)
                bits = {}
                for m in ("11", "13"):
                    os.environ["FUSEDOPS_EXP_HALVES"] = m
                    bits[m] = torch.equal(fusedops.rms_norm(x, w, EPS), ref)
                times = {}
                for m in MODES:
                    os.environ["FUSEDOPS_EXP_HALVES"] = m
                    us = graph_us(lambda x=x, w=w: fusedops.rms_norm(x, w, EPS), calls)
                    times[f"m{m}"] = min(times.get(f"m{m}", 1e9), us)
                os.environ["FUSEDOPS_EXP_HALVES"] = "0"
                o = torch.empty_like(x)
                times["copy"] = graph_us(lambda o=o, x=x: o.copy_(x), calls)
                if liger is not None:
                    times["liger"] = graph_us(lambda x=x, w=w: liger["rms_norm"](x, w), calls)
                del ref, o
                for k, v in times.items():
                    w_csv.writerow([str(dtype)[6:], rows, hidden, k, f"{v:.3f}"])
                f.flush()
                gain = {m: 100 * (times[f"m{m}"] / times["m0"] - 1) for m in ("11", "13")}
                print(
                    f"{str(dtype)[6:]:9s} {rows:6d}x{hidden:<6d} bits {bits['11']}/{bits['13']} "
                    + " ".join(f"{k}={v:.2f}" for k, v in times.items())
                    + f"  d11={gain['11']:+.1f}% d13={gain['13']:+.1f}%",
                    flush=True,
                )
                torch.cuda.empty_cache()
