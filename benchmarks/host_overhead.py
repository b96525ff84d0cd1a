"""Host (CPU-side) cost per call: fusedops against torch's own ops, layer by layer.

    python benchmarks/host_overhead.py [--device cuda] [--rows 16] [--hidden 4096]
        [--dtype bfloat16] [--calls 2000] [--rounds 11] [--csv OUT.csv]

Wall time per call of a loop of `--calls` calls (the device synchronised once
at the end: with small CUDA tensors the host, not the GPU, sets the pace). The
cases take turns, `--rounds` times, and each reports the fastest round and the
median: a busy host only ever adds time, so the minimum is the estimate and the
spread says how busy the host was. Three cases, as a model meets them:

- `no_grad`: inputs without requires_grad,
- `fwd_requires_grad`: x and weight require grad (the graph is recorded),
- `fwd_bwd`: that forward and `out.backward(dy)`.

With `--compile`, also both under `torch.compile` (a function calling
F.rms_norm or fusedops.rms_norm, compiled once with fullgraph=True), forward
with requires_grad and forward + backward: the host cost per call of a
compiled model, where AOTAutograd's compiled function is the autograd node.

Rows, first for torch (F.rms_norm, torch.add as the cheapest launch), then for
fusedops from the outside in, so the differences say where the time goes:
the public wrapper, `torch.ops.fusedops.rms_norm.default` (the dispatcher,
Autograd kernel included), and the C++ op alone (`_op` below autograd). The
`floor` rows time an autograd.Function whose forward is one `empty_like`,
applied through its C++ apply, against that `empty_like` alone: what any
Python-defined autograd node costs, fusedops's or anyone's. A script, not a
test: numbers go to benchmarks/RESULTS.md.
"""

from __future__ import annotations

import argparse
import csv
import statistics
import sys
import time
from collections.abc import Callable

import torch
import torch.nn.functional as F

import fusedops

EPS = 1e-6


def time_interleaved(
    fns: dict[str, Callable[[], object]], calls: int, rounds: int, sync: Callable[[], None]
) -> dict[str, list[float]]:
    """Per-call wall time in microseconds of each round of each case; the cases
    take turns so that a slow spell of the host hits them all alike."""
    for fn in fns.values():  # warm-up: allocator, caches, lazy init
        for _ in range(max(50, calls // 10)):
            fn()
    sync()
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            start = time.perf_counter()
            for _ in range(calls):
                fn()
            sync()
            times[name].append((time.perf_counter() - start) / calls * 1e6)
    return times


class _EmptyFunction(torch.autograd.Function):
    """The cheapest autograd.Function with an output: the floor row."""

    @staticmethod
    def forward(ctx, x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        return torch.empty_like(x)

    @staticmethod
    def backward(ctx, grad: torch.Tensor):
        return grad, None


def cases(
    rows: int, hidden: int, dtype: torch.dtype, device: str, compiled: bool = False
) -> dict[str, Callable]:
    x = torch.randn(rows, hidden, dtype=dtype, device=device)
    w = torch.randn(hidden, dtype=dtype, device=device)
    dy = torch.randn_like(x)
    xg = x.clone().requires_grad_()
    wg = w.clone().requires_grad_()
    op = torch.ops.fusedops.rms_norm.default
    below = torch._C._AutoDispatchBelowAutograd

    def cxx_only():
        with below():
            return op._op(x, w, EPS)

    def fwd_bwd(fn):
        def run():
            fn(xg, wg).backward(dy)

        return run

    def torch_rms(a, b):
        return F.rms_norm(a, (hidden,), b, EPS)

    def fused_rms(a, b):
        return fusedops.rms_norm(a, b, EPS)

    def dispatched(a, b):
        return op(a, b, EPS)

    # The C++ apply, as fusedops uses it (torch 2.11's Function.apply adds a Python layer).
    empty_function = vars(torch._C._FunctionBase)["apply"].__get__(None, _EmptyFunction)

    found = {
        "no_grad torch.add": lambda: torch.add(x, x),
        "no_grad F.rms_norm": lambda: torch_rms(x, w),
        "no_grad fusedops.rms_norm": lambda: fused_rms(x, w),
        "no_grad torch.ops (dispatcher)": lambda: dispatched(x, w),
        "no_grad C++ op below autograd": cxx_only,
        "fwd_requires_grad F.rms_norm": lambda: torch_rms(xg, wg),
        "fwd_requires_grad fusedops.rms_norm": lambda: fused_rms(xg, wg),
        "fwd_requires_grad torch.ops (dispatcher)": lambda: dispatched(xg, wg),
        "floor torch.empty_like": lambda: torch.empty_like(x),
        "floor empty autograd.Function, requires_grad": lambda: empty_function(xg, wg),
        "fwd_bwd F.rms_norm": fwd_bwd(torch_rms),
        "fwd_bwd fusedops.rms_norm": fwd_bwd(fused_rms),
    }
    if compiled:
        compiled_torch = torch.compile(torch_rms, fullgraph=True)
        compiled_fused = torch.compile(fused_rms, fullgraph=True)
        found["compiled_requires_grad F.rms_norm"] = lambda: compiled_torch(xg, wg)
        found["compiled_requires_grad fusedops.rms_norm"] = lambda: compiled_fused(xg, wg)
        found["compiled_fwd_bwd F.rms_norm"] = fwd_bwd(compiled_torch)
        found["compiled_fwd_bwd fusedops.rms_norm"] = fwd_bwd(compiled_fused)
    return found


def add_call_arguments(parser: argparse.ArgumentParser) -> None:
    """The call shape and timing options, shared with benchmarks/tools/host_cost_ladder.py."""
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--rows", type=int, default=16)
    parser.add_argument("--hidden", type=int, default=4096)
    parser.add_argument("--dtype", default="bfloat16")
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=11)


def dtype_and_sync(
    parser: argparse.ArgumentParser, args: argparse.Namespace
) -> tuple[torch.dtype, Callable[[], None]]:
    """add_call_arguments's dtype, checked, and how to wait for the device."""
    dtype = getattr(torch, args.dtype, None)
    if not isinstance(dtype, torch.dtype):
        parser.error(f"--dtype: not a torch dtype: {args.dtype!r}")
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        parser.error("--device cuda: no CUDA device here")
    return dtype, torch.cuda.synchronize if args.device.startswith("cuda") else (lambda: None)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_call_arguments(parser)
    parser.add_argument("--csv", help="write the rows to this CSV file too")
    parser.add_argument("--compile", action="store_true", help="also time both under torch.compile")
    args = parser.parse_args(argv)
    dtype, sync = dtype_and_sync(parser, args)

    times = time_interleaved(
        cases(args.rows, args.hidden, dtype, args.device, args.compile),
        args.calls,
        args.rounds,
        sync,
    )
    best = {name: min(ts) for name, ts in times.items()}
    print(f"{'case':52s} {'min us':>8s} {'median':>8s}")
    for name, ts in times.items():
        print(f"{name:52s} {best[name]:8.2f} {statistics.median(ts):8.2f}")
    print(f"\n{args.rows} x {args.hidden} {args.dtype} on {args.device}, fusedops / F.rms_norm:")
    for case in ("no_grad", "fwd_requires_grad", "fwd_bwd"):
        ratio = best[f"{case} fusedops.rms_norm"] / best[f"{case} F.rms_norm"]
        print(f"  {case:22s} {ratio:5.2f}x  (target <= 1.20x)")
    for case in ("compiled_requires_grad", "compiled_fwd_bwd"):
        if f"{case} F.rms_norm" in best:
            ratio = best[f"{case} fusedops.rms_norm"] / best[f"{case} F.rms_norm"]
            print(f"  {case:22s} {ratio:5.2f}x")
    node = best["floor empty autograd.Function, requires_grad"] - best["floor torch.empty_like"]
    print(f"  an autograd.Function node costs {node:.2f} us over its forward's own work")
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            writer = csv.writer(f)
            writer.writerow(
                ["case", "device", "rows", "hidden", "dtype", "us_per_call", "median_us"]
            )
            for name, ts in times.items():
                shape = [args.device, args.rows, args.hidden, args.dtype]
                median = statistics.median(ts)
                writer.writerow([name, *shape, f"{best[name]:.3f}", f"{median:.3f}"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
