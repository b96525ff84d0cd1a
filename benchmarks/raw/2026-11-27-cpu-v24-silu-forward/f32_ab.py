"""float32 silu forward and backward alone at 1024 and 4096 rows of 2 * 4096.

    PYTHONPATH=<build> python f32_ab.py LABEL

One line: LABEL, then the fastest of 25 calls in ms: forward, backward at 1024 rows, then
at 4096 rows.
"""

import sys
import time

import torch

import fusedops  # noqa: F401

torch.set_num_threads(2)


def fastest(fn, calls: int = 25) -> float:
    for _ in range(3):
        fn()
    best = float("inf")
    for _ in range(calls):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best * 1e3


out = []
for rows in (1024, 4096):
    x = torch.randn(rows, 8192)
    dy = torch.randn(rows, 4096)
    out.append(fastest(lambda x=x: torch.ops.fusedops.silu_and_mul(x)))
    out.append(fastest(lambda x=x, dy=dy: torch.ops.fusedops.silu_and_mul_backward(dy, x)))
print(sys.argv[1], *(f"{t:.4f}" for t in out), flush=True)
