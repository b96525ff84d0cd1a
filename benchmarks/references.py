"""What the benchmarks compare fusedops with: the same math in plain torch.

Shared by bench.py, cpu_bench.py and gpu_sweep.py (run as scripts, so this
file's folder is on sys.path). `manual_*` is what torch.compile is given: the
float32 math written out, so inductor fuses it; `eager_*` is torch's own op.
"""

from __future__ import annotations

import torch

EPS = 1e-6


def manual_rms_norm(x, w):
    xf = x.float()
    return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + EPS) * w.float()).to(x.dtype)


def manual_add_rms_norm(x, r, w):
    s = x + r
    return manual_rms_norm(s, w), s


def eager_rms_norm(x, w):
    return torch.nn.functional.rms_norm(x, (x.shape[-1],), w, EPS)


def eager_add_rms_norm(x, r, w):
    s = x + r
    return eager_rms_norm(s, w), s


def eager_silu_and_mul(x):
    d = x.shape[-1] // 2
    return torch.nn.functional.silu(x[..., :d]) * x[..., d:]


def manual_silu_and_mul_backward(g, x):
    """d(silu(a) * b) for x = [a, b], in float32 and rounded once at the end, as
    fusedops computes it (autograd over 16-bit eager ops would also round g·b
    and silu(a) on the way)."""
    d = x.shape[-1] // 2
    a, b, gf = x[..., :d].float(), x[..., d:].float(), g.float()
    s = torch.sigmoid(a)
    return torch.cat([gf * b * s * (1 + a * (1 - s)), gf * a * s], -1).to(x.dtype)


def allow_many_graphs() -> None:
    """One compiled graph per benchmarked shape: lift dynamo's recompile limits
    (default 8) so no shape silently falls back to eager."""
    torch._dynamo.config.recompile_limit = 1024
    torch._dynamo.config.accumulated_recompile_limit = 4096
