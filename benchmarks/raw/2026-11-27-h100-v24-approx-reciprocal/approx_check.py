"""save: 16-bit silu outputs of the installed fusedops; compare: two saves, element by element,
and each against float64 math."""

import sys

import torch

SHAPES = [(1, 4096), (16, 8192), (1024, 2048), (4096, 4096)]


def ref(x, dy):
    x64 = x.double().requires_grad_()
    d = x.shape[-1] // 2
    a, b = x64[..., :d], x64[..., d:]
    y = torch.nn.functional.silu(a) * b
    (gx,) = torch.autograd.grad(y, x64, dy.double())
    return y, gx


if sys.argv[1] == "save":
    import fusedops  # noqa: F401

    out = {}
    for dt in (torch.bfloat16, torch.float16):
        for rows, h in SHAPES:
            g = torch.Generator(device="cuda").manual_seed(rows * 7 + h)
            x = (torch.randn(rows, 2 * h, device="cuda", generator=g) * 3).to(dt)
            dy = torch.randn(rows, h, device="cuda", generator=g).to(dt)
            y = torch.ops.fusedops.silu_and_mul(x)
            gx = torch.ops.fusedops.silu_and_mul_backward(dy, x)
            out[(str(dt), rows, h)] = (x.cpu(), dy.cpu(), y.cpu(), gx.cpu())
    torch.save(out, sys.argv[2])
else:
    A, B = torch.load(sys.argv[2]), torch.load(sys.argv[3])
    for k in A:
        x, dy, ya, ga = A[k]
        _, _, yb, gb = B[k]
        yr, gr = ref(x, dy)
        for name, ta, tb, tr in (("fwd", ya, yb, yr), ("bwd", ga, gb, gr)):
            diff = (ta != tb).sum().item()
            ea = (ta.double() - tr).abs().max().item()
            eb = (tb.double() - tr).abs().max().item()
            # error in units of the 16-bit spacing at each reference value
            sp = torch.finfo(ta.dtype).eps * tr.abs().clamp_min(torch.finfo(ta.dtype).tiny)
            ua = ((ta.double() - tr).abs() / sp).max().item()
            ub = ((tb.double() - tr).abs() / sp).max().item()
            print(
                f"{k} {name}: {diff} of {ta.numel()} differ; max abs err {ea:.3e} -> {eb:.3e}; max err/eps|ref| {ua:.3f} -> {ub:.3f}"
            )
