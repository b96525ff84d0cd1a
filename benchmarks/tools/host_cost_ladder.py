"""Where a fusedops call with requires_grad spends its host time, one layer at a time.

    python benchmarks/tools/host_cost_ladder.py [--device cuda] [--rows 16] [--hidden 4096]
        [--dtype bfloat16] [--calls 2000] [--rounds 11]

Each rung adds one piece of what `fusedops.rms_norm` does with inputs that
require grad, from the C++ op alone up to the public wrapper; the difference
between two rungs is that piece's cost. Every Function is applied through the
C++ apply (`_FunctionBase.apply`), as the wrappers do on torch < 2.12. Timing as
in benchmarks/host_overhead.py (cases take turns, fastest round). A probe, not
a test: numbers go to benchmarks/RESULTS.md.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from host_overhead import add_call_arguments, dtype_and_sync, time_interleaved

import fusedops
from fusedops import ops as fops

EPS = 1e-6
OP = torch.ops.fusedops.rms_norm.default
CXX_OP = OP._op
CXX_BACKWARD_OP = torch.ops.fusedops.rms_norm_backward.default._op
BELOW = torch._C._AutoDispatchBelowAutograd


def cxx_apply(function: type[torch.autograd.Function]) -> Callable:
    return vars(torch._C._FunctionBase)["apply"].__get__(None, function)


class PassThrough(torch.autograd.Function):
    """Base of the rungs' Functions: a backward that costs nothing."""

    @staticmethod
    def backward(ctx, grad):
        return grad, None, None


class Empty(PassThrough):
    @staticmethod
    def forward(ctx, x, w, eps):
        return torch.empty_like(x)


class Guarded(PassThrough):
    """The op below autograd, nothing saved."""

    @staticmethod
    def forward(ctx, x, w, eps):
        with BELOW():
            return CXX_OP(x, w, eps)


class Saving(PassThrough):
    """Guarded, and saves what rms_norm's backward needs, inline."""

    @staticmethod
    def forward(ctx, x, w, eps):
        with BELOW():
            out = CXX_OP(x, w, eps)
        ctx.save_for_backward(x, w)
        ctx.eps = eps
        return out


class SavingWithBackward(Saving):
    """Saving, with a backward that calls the fused backward op below autograd
    directly: the least a Python Function can do for forward + backward."""

    @staticmethod
    def backward(ctx, grad):
        x, w = ctx.saved_tensors
        with BELOW():
            grad_x, grad_w = CXX_BACKWARD_OP(grad, x, w, ctx.eps)
        return grad_x, grad_w, None


class Unguarded(PassThrough):
    """Saving without the below-autograd guard: inside forward grad mode is off,
    so the op's Autograd kernel (Python) runs and redispatches."""

    @staticmethod
    def forward(ctx, x, w, eps):
        out = CXX_OP(x, w, eps)
        ctx.save_for_backward(x, w)
        ctx.eps = eps
        return out


def rungs(rows: int, hidden: int, dtype: torch.dtype, device: str) -> dict[str, Callable]:
    x = torch.randn(rows, hidden, dtype=dtype, device=device)
    w = torch.randn(hidden, dtype=dtype, device=device)
    xg = x.clone().requires_grad_()
    wg = w.clone().requires_grad_()
    dy = torch.randn_like(x)
    empty, guarded, saving, unguarded, lean = map(
        cxx_apply, (Empty, Guarded, Saving, Unguarded, SavingWithBackward)
    )
    unwrap = torch._C._functorch.unwrap_if_dead
    ctx_style = fops._RmsNorm.ctx_style
    apply_ctx_style = cxx_apply(ctx_style)

    def below():
        with BELOW():
            return CXX_OP(x, w, EPS)

    is_compiling = torch.compiler.is_compiling
    transforms_active = torch._C._are_functorch_transforms_active
    grad_enabled = torch.is_grad_enabled
    any_requires_grad = torch._C._any_requires_grad
    forward_ad = torch.autograd.forward_ad

    def one_frame(a, b, eps):
        # The leanest wrapper this design allows: routing, unwrapping and the
        # apply of a Function that saves inline, in one Python frame.
        if (
            not is_compiling()
            and not transforms_active()
            and ((grad_enabled() and any_requires_grad(a, b)) or forward_ad._current_level >= 0)
        ):
            return saving(unwrap(a), unwrap(b), eps)
        raise AssertionError("not reached")

    return {
        "F.rms_norm, requires_grad": lambda: F.rms_norm(xg, (hidden,), wg, EPS),
        "torch.empty_like": lambda: torch.empty_like(x),
        "C++ op, no grad, no guard": lambda: CXX_OP(x, w, EPS),
        "C++ op below autograd": below,
        "empty Function": lambda: empty(xg, wg, EPS),
        "Function: guard + op": lambda: guarded(xg, wg, EPS),
        "Function: guard + op + save": lambda: saving(xg, wg, EPS),
        "Function: op + save, no guard": lambda: unguarded(xg, wg, EPS),
        "+ unwrap_if_dead x2": lambda: saving(unwrap(xg), unwrap(wg), EPS),
        "one-frame wrapper": lambda: one_frame(xg, wg, EPS),
        "fusedops ctx_style, C++ apply": lambda: apply_ctx_style(xg, wg, EPS),
        "fusedops autograd_apply": lambda: fops._RmsNorm.autograd_apply(xg, wg, EPS),
        "fusedops._call": lambda: fops._call(fops._RmsNorm, OP, xg, wg, EPS),
        "fusedops.rms_norm": lambda: fusedops.rms_norm(xg, wg, EPS),
        # Forward + backward (out.backward(dy)): the engine's run comes on top.
        "fwd+bwd F.rms_norm": lambda: F.rms_norm(xg, (hidden,), wg, EPS).backward(dy),
        "fwd+bwd empty Function": lambda: empty(xg, wg, EPS).backward(dy),
        "fwd+bwd Function, ops called directly": lambda: lean(xg, wg, EPS).backward(dy),
        "fwd+bwd fusedops.rms_norm": lambda: fusedops.rms_norm(xg, wg, EPS).backward(dy),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_call_arguments(parser)
    args = parser.parse_args(argv)
    dtype, sync = dtype_and_sync(parser, args)
    times = time_interleaved(
        rungs(args.rows, args.hidden, dtype, args.device), args.calls, args.rounds, sync
    )
    print(f"torch {torch.__version__}, {args.rows} x {args.hidden} {args.dtype} on {args.device}")
    print(f"{'rung':40s} {'min us':>8s} {'median':>8s}")
    for name, ts in times.items():
        print(f"{name:40s} {min(ts):8.2f} {sorted(ts)[len(ts) // 2]:8.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
