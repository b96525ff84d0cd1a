"""What an op costs when a Python backward calls it inside the autograd engine.

    python benchmarks/tools/engine_op_cost.py [--device cpu] [--calls 1000] [--rounds 11]

Each body (nothing, torch.add, x.sum(0), fusedops's forward and backward ops
below autograd) runs once per backward of a one-node graph whose Function
forward is an `empty_like`; the same body is also timed alone. The engine row
minus the `nothing` engine row is what the body costs inside a backward.
Fastest of `--rounds` rounds, the cases taking turns. A probe, not a test: the
numbers go to benchmarks/RESULTS.md.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable

import torch
from torch.autograd.graph import _engine_run_backward

import fusedops  # noqa: F401  (registers torch.ops.fusedops)

EPS = 1e-6


def graph_running(body: Callable[[], object], xg, wg, dy, gw) -> Callable[[], None]:
    """A forward + engine backward of one Function node whose backward runs `body`."""

    class Probe(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, w):
            return torch.empty_like(x)

        @staticmethod
        def backward(ctx, grad):
            body()
            return grad, gw

    apply = vars(torch._C._FunctionBase)["apply"].__get__(None, Probe)

    def run() -> None:
        out = apply(xg, wg)
        _engine_run_backward(
            (out,), (dy,), False, False, (), allow_unreachable=True, accumulate_grad=True
        )

    return run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--rows", type=int, default=16)
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=11)
    args = parser.parse_args(argv)
    dev = args.device
    sync = torch.cuda.synchronize if dev.startswith("cuda") else (lambda: None)
    x = torch.randn(args.rows, args.hidden, device=dev)
    w = torch.randn(args.hidden, device=dev)
    xg, wg = x.clone().requires_grad_(), w.clone().requires_grad_()
    dy, gw = torch.randn_like(x), torch.randn_like(w)
    below = torch._C._AutoDispatchBelowAutograd
    fwd = torch.ops.fusedops.rms_norm.default._op
    bwd = torch.ops.fusedops.rms_norm_backward.default._op

    def fused_forward():
        with below():
            fwd(x, w, EPS)

    def fused_backward():
        with below():
            bwd(dy, x, w, EPS)

    bodies = {
        "nothing": lambda: None,
        "torch.add": lambda: torch.add(x, x),
        "x.sum(0)": lambda: x.sum(0),
        "fusedops rms_norm op": fused_forward,
        "fusedops rms_norm_backward op": fused_backward,
    }
    cases: dict[str, Callable[[], object]] = {}
    for name, body in bodies.items():
        cases[f"in a backward: {name}"] = graph_running(body, xg, wg, dy, gw)
        cases[f"alone: {name}"] = body
    best = dict.fromkeys(cases, float("inf"))
    for fn in cases.values():
        fn()
    for _ in range(args.rounds):
        for name, fn in cases.items():
            sync()
            start = time.perf_counter()
            for _ in range(args.calls):
                fn()
            sync()
            best[name] = min(best[name], (time.perf_counter() - start) / args.calls * 1e6)
    empty = best["in a backward: nothing"]
    print(f"torch {torch.__version__}, {dev}, {args.rows} x {args.hidden} float32; us per call")
    print(f"{'body':32s} {'alone':>8s} {'in a backward':>14s}")
    for name in bodies:
        inside = best[f"in a backward: {name}"] - empty
        print(f"{name:32s} {best[f'alone: {name}']:8.2f} {inside:14.2f}")
    print(f"(a backward whose body does nothing: {empty:.2f} us per forward + backward)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
