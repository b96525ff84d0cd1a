"""silu_and_mul forward alone at hidden 4096 for 64, 256, 1024 and 4096 rows, fastest of N calls, ms.
Columns: bf16 at each row count, then fp16, then float32."""

import sys
import time

import torch

import fusedops  # noqa: F401

torch.set_num_threads(2)
times = []
for dt in (torch.bfloat16, torch.float16, torch.float32):
    for rows in (64, 256, 1024, 4096):
        x = torch.randn(rows, 8192).to(dt)
        calls = max(20, 25600 // rows)
        for _ in range(5):
            torch.ops.fusedops.silu_and_mul(x)
        best = 1e9
        for _ in range(calls):
            t = time.perf_counter()
            torch.ops.fusedops.silu_and_mul(x)
            best = min(best, time.perf_counter() - t)
        times.append(f"{best * 1e3:.4f}")
print(sys.argv[1], *times, flush=True)
