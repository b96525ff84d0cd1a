"""The derivatives the fused kernels do not compute, written in torch ops.

The fused backward kernels cover the common path (first-order reverse mode).
Everything rarer is built here from plain torch ops, so torch differentiates it
further by itself (third order and up), vmap batches it and torch.compile
traces it:
- the backward of the backward ops (double backward),
- forward-mode AD (jvp) of every op,
- vmap over a batched weight, and the weight gradient under vmap, whose sum
  over rows must stay per batch entry (the fused kernel sums every row).

Every function accumulates in float32 (float64 for float64 inputs), as the
kernels do, and returns each result in the dtype of the tensor it belongs to.
Per row of length N (the last dimension), with <a, b> the row-wise mean of a*b:
    r = (<x, x> + eps) ** -1/2,   y = x * r * w
    backward: h = g * w,   gx = r * h - r**3 * <h, x> * x,   gw = sum_rows(g * x * r)
`keep` is the number of leading (vmap batch) dimensions that the weight
gradient keeps instead of summing over.
"""

from __future__ import annotations

import torch
from torch import Tensor


def _acc(t: Tensor) -> Tensor:
    return t.to(torch.float64 if t.dtype == torch.float64 else torch.float32)


def _mean(t: Tensor) -> Tensor:
    return t.mean(-1, keepdim=True)


def _rrms(x: Tensor, eps: float) -> Tensor:
    return torch.rsqrt(_mean(x * x) + eps)


def _sum_rows(t: Tensor, keep: int) -> Tensor:
    # sum(()) would reduce every dimension: keep the tensor when there are no rows to sum.
    dims = tuple(range(keep, t.dim() - 1))
    return t.sum(dims) if dims else t


def _or_zeros(t: Tensor | None, like: Tensor) -> Tensor:
    return torch.zeros_like(like) if t is None else _acc(t)


# ---- rms_norm ------------------------------------------------------------------
def rms_norm(x: Tensor, weight: Tensor, eps: float) -> Tensor:
    xf = _acc(x)
    return (xf * _rrms(xf, eps) * _acc(weight)).to(x.dtype)


def rms_norm_jvp(
    x: Tensor, weight: Tensor, eps: float, tx: Tensor | None, tw: Tensor | None
) -> Tensor:
    xf, wf = _acc(x), _acc(weight)
    r = _rrms(xf, eps)
    txf, twf = _or_zeros(tx, xf), _or_zeros(tw, wf)
    dr = -(r**3) * _mean(xf * txf)
    return ((txf * r + xf * dr) * wf + xf * r * twf).to(x.dtype)


def rms_norm_backward(
    g: Tensor, x: Tensor, weight: Tensor, eps: float, keep: int = 0
) -> tuple[Tensor, Tensor]:
    gf, xf, wf = _acc(g), _acc(x), _acc(weight)
    r = _rrms(xf, eps)
    h = gf * wf
    gx = r * h - r**3 * _mean(h * xf) * xf
    gw = _sum_rows(gf * xf * r, keep)
    return gx.to(x.dtype), gw.to(weight.dtype)


def rms_norm_backward_jvp(
    g: Tensor,
    x: Tensor,
    weight: Tensor,
    eps: float,
    tg: Tensor | None,
    tx: Tensor | None,
    tw: Tensor | None,
    keep: int = 0,
) -> tuple[Tensor, Tensor]:
    gf, xf, wf = _acc(g), _acc(x), _acc(weight)
    tgf, txf, twf = _or_zeros(tg, gf), _or_zeros(tx, xf), _or_zeros(tw, wf)
    r = _rrms(xf, eps)
    h = gf * wf
    hx = _mean(h * xf)
    dr = -(r**3) * _mean(xf * txf)
    dh = tgf * wf + gf * twf
    dhx = _mean(dh * xf + h * txf)
    dgx = dr * h + r * dh - (3 * r**2 * dr * hx * xf + r**3 * dhx * xf + r**3 * hx * txf)
    dgw = _sum_rows((tgf * xf + gf * txf) * r + gf * xf * dr, keep)
    return dgx.to(x.dtype), dgw.to(weight.dtype)


def rms_norm_backward_vjp(
    g: Tensor,
    x: Tensor,
    weight: Tensor,
    eps: float,
    a: Tensor | None,
    b: Tensor | None,
    keep: int = 0,
) -> tuple[Tensor, Tensor, Tensor]:
    """Gradients of <a, gx> + <b, gw> with respect to g, x and weight."""
    gf, xf, wf = _acc(g), _acc(x), _acc(weight)
    af, bf = _or_zeros(a, xf), _or_zeros(b, wf)
    r = _rrms(xf, eps)
    r3 = r**3
    h = gf * wf
    ax, hx = _mean(af * xf), _mean(h * xf)
    u = r * af - r3 * ax * xf  # d<a, gx>/dh
    grad_g = wf * u + r * bf * xf
    grad_w = _sum_rows(gf * u, keep)
    grad_x = (
        -r3 * _mean(af * h) * xf
        + 3 * r**5 * hx * ax * xf
        - r3 * (ax * h + hx * af)
        + r * bf * gf
        - r3 * _mean(bf * gf * xf) * xf
    )
    return grad_g.to(g.dtype), grad_x.to(x.dtype), grad_w.to(weight.dtype)


# ---- fused_add_rms_norm ----------------------------------------------------------
def fused_add_rms_norm(
    x: Tensor, residual: Tensor, weight: Tensor, eps: float
) -> tuple[Tensor, Tensor]:
    residual_out = x + residual
    return rms_norm(residual_out, weight, eps), residual_out


def fused_add_rms_norm_backward(
    g: Tensor, g_residual: Tensor, residual_out: Tensor, weight: Tensor, eps: float
) -> tuple[Tensor, Tensor]:
    grad_x, grad_weight = rms_norm_backward(g, residual_out, weight, eps)
    return grad_x + g_residual, grad_weight


# ---- silu_and_mul --------------------------------------------------------------
def _silu_parts(x: Tensor) -> tuple[Tensor, Tensor, Tensor, Tensor, Tensor]:
    """(a, b, silu(a), silu'(a), silu''(a)) for x = [a | b], in the accumulation dtype."""
    xf = _acc(x)
    a, b = xf.chunk(2, dim=-1)
    sig = torch.sigmoid(a)
    s1 = sig * (1 + a * (1 - sig))
    s2 = sig * (1 - sig) * (2 + a * (1 - 2 * sig))
    return a, b, a * sig, s1, s2


def silu_and_mul(x: Tensor) -> Tensor:
    _, b, silu, _, _ = _silu_parts(x)
    return (silu * b).to(x.dtype)


def silu_and_mul_jvp(x: Tensor, tx: Tensor) -> Tensor:
    _, b, silu, s1, _ = _silu_parts(x)
    ta, tb = _acc(tx).chunk(2, dim=-1)
    return (ta * s1 * b + silu * tb).to(x.dtype)


def silu_and_mul_backward(g: Tensor, x: Tensor) -> Tensor:
    _, b, silu, s1, _ = _silu_parts(x)
    gf = _acc(g)
    return torch.cat([gf * b * s1, gf * silu], dim=-1).to(x.dtype)


def silu_and_mul_backward_jvp(g: Tensor, x: Tensor, tg: Tensor | None, tx: Tensor | None) -> Tensor:
    _, b, silu, s1, s2 = _silu_parts(x)
    gf = _acc(g)
    tgf = _or_zeros(tg, gf)
    ta, tb = _or_zeros(tx, _acc(x)).chunk(2, dim=-1)
    tga = tgf * b * s1 + gf * tb * s1 + gf * b * s2 * ta
    tgb = tgf * silu + gf * s1 * ta
    return torch.cat([tga, tgb], dim=-1).to(x.dtype)


def silu_and_mul_backward_vjp(g: Tensor, x: Tensor, c: Tensor) -> tuple[Tensor, Tensor]:
    """Gradients of <c, grad_x> with respect to g and x."""
    _, b, silu, s1, s2 = _silu_parts(x)
    gf = _acc(g)
    ca, cb = _acc(c).chunk(2, dim=-1)
    grad_g = ca * b * s1 + cb * silu
    grad_x = torch.cat([ca * gf * b * s2 + cb * gf * s1, ca * gf * s1], dim=-1)
    return grad_g.to(g.dtype), grad_x.to(x.dtype)
