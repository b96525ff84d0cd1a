"""Time torch.ops.fusedops.silu_and_mul alone, for an A/B of CPU builds.

    PYTHONPATH=<build> python silu_ab.py LABEL

One line: LABEL, then the fastest of 25 calls (400 at 64 rows) in ms for bf16, fp16 and
float32, each at 4096 x 4096, 4096 x 16384 and 64 x 4096 (x is [rows, 2 * hidden]).
"""

import sys
import time

import torch

import fusedops  # noqa: F401

torch.set_num_threads(2)
SHAPES = [(4096, 4096), (4096, 16384), (64, 4096)]
times = []
for dtype in (torch.bfloat16, torch.float16, torch.float32):
    for rows, hidden in SHAPES:
        x = torch.randn(rows, 2 * hidden).to(dtype)
        calls = 25 if rows > 64 else 400
        for _ in range(3):
            torch.ops.fusedops.silu_and_mul(x)
        best = float("inf")
        for _ in range(calls):
            start = time.perf_counter()
            torch.ops.fusedops.silu_and_mul(x)
            best = min(best, time.perf_counter() - start)
        times.append(f"{best * 1e3:.3f}")
print(sys.argv[1], *times, flush=True)
