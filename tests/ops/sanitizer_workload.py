"""Runs every op and backward once on small CUDA inputs of awkward sizes.

Run by scripts/gpu_test.py under `compute-sanitizer` (memcheck, racecheck): it exercises the
vectorised, scalar (unaligned) and long-row fallback paths of each kernel; 12288 is the
fp32 forward at 4 vectors per thread (the fused add's weight loaded late).
"""

from __future__ import annotations

import torch

import fusedops


def main() -> None:
    for dtype in (torch.float32, torch.float16, torch.bfloat16, torch.float64):
        for rows, hidden in (
            (1, 1),
            (3, 7),
            (5, 64),
            (2, 4096),
            (2, 12288),
            (3, 40000),
            (1, 65536),
        ):
            x = torch.randn(rows, hidden, dtype=dtype, device="cuda", requires_grad=True)
            r = torch.randn_like(x, requires_grad=True)
            w = torch.randn(hidden, dtype=dtype, device="cuda", requires_grad=True)
            out, res = fusedops.fused_add_rms_norm(x, r, w)
            (fusedops.rms_norm(x, w).sum() + out.sum() + res.sum()).backward()
            xu = torch.randn(rows, hidden + 1, dtype=dtype, device="cuda")[:, 1:]  # misaligned
            fusedops.rms_norm(xu, w.detach())
            if hidden % 2 == 0:
                g = x.detach().clone().requires_grad_()
                fusedops.silu_and_mul(g).sum().backward()
                fusedops.silu_and_mul(xu)
    torch.cuda.synchronize()
    print("sanitize smoke: all ops ran")


if __name__ == "__main__":
    main()
