"""save/compare bf16 outputs of every CPU op (NaN, subnormal and huge values included)."""

import sys

import torch

import fusedops  # noqa: F401

if sys.argv[1] == "save":
    torch.manual_seed(0)
    out = {}
    for rows, h in [(7, 4096), (64, 1000), (3, 8192)]:
        x = torch.randn(rows, 2 * h) * 3
        x.view(-1)[::101] = float("nan")
        x.view(-1)[::103] = 1e-39
        x.view(-1)[::107] = -3e38
        x.view(-1)[::109] = -100
        x = x.to(torch.bfloat16)
        w = torch.randn(h).to(torch.bfloat16)
        dy = torch.randn(rows, h).to(torch.bfloat16)
        xa = x[:, :h].contiguous()
        out[(rows, h, "silu")] = torch.ops.fusedops.silu_and_mul(x)
        out[(rows, h, "silu_bwd")] = torch.ops.fusedops.silu_and_mul_backward(dy, x)
        out[(rows, h, "rms")] = torch.ops.fusedops.rms_norm(xa, w, 1e-6)
        out[(rows, h, "rms_bwd")] = torch.ops.fusedops.rms_norm_backward(dy, xa, w, 1e-6)
        out[(rows, h, "add")] = torch.ops.fusedops.fused_add_rms_norm(xa, dy, w, 1e-6)
    torch.save(out, sys.argv[2])
else:
    a, b = torch.load(sys.argv[2]), torch.load(sys.argv[3])
    bad = 0
    for k in a:
        ta = a[k] if isinstance(a[k], (tuple, list)) else (a[k],)
        tb = b[k] if isinstance(b[k], (tuple, list)) else (b[k],)
        for u, v in zip(ta, tb, strict=False):
            n = (u.view(torch.int16) != v.view(torch.int16)).sum().item()
            bad += n
            if n:
                print(k, n, "differ")
    print(len(a), "cases,", bad, "elements differ")
