"""Host (CPU-side) cost per call: fusedops against torch's own ops, layer by layer.

    python benchmarks/host_overhead.py [--device cuda] [--rows 16] [--hidden 4096]
        [--dtype bfloat16] [--calls 2000] [--repeats 7] [--csv OUT.csv]

Wall time per call of a loop of `--calls` calls (the device synchronised once
at the end: with small CUDA tensors the host, not the GPU, sets the pace), the
median of `--repeats` loops. Three cases, as a model meets them:

- `no_grad`: inputs without requires_grad,
- `fwd_requires_grad`: x and weight require grad (the graph is recorded),
- `fwd_bwd`: that forward and `out.backward(dy)`.

Rows, first for torch (F.rms_norm, torch.add as the cheapest launch), then for
fusedops from the outside in, so the differences say where the time goes:
the public wrapper, `torch.ops.fusedops.rms_norm.default` (the dispatcher,
Autograd kernel included), and the C++ op alone (`_op` below autograd). A
script, not a test: numbers go to benchmarks/RESULTS.md.
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


def per_call_us(
    fn: Callable[[], object], calls: int, repeats: int, sync: Callable[[], None]
) -> float:
    """Median over `repeats` loops of the wall time per call, in microseconds."""
    for _ in range(max(50, calls // 10)):  # warm-up: allocator, caches, lazy init
        fn()
    sync()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        sync()
        times.append((time.perf_counter() - start) / calls * 1e6)
    return statistics.median(times)


def cases(rows: int, hidden: int, dtype: torch.dtype, device: str) -> dict[str, Callable]:
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

    return {
        "no_grad torch.add": lambda: torch.add(x, x),
        "no_grad F.rms_norm": lambda: torch_rms(x, w),
        "no_grad fusedops.rms_norm": lambda: fused_rms(x, w),
        "no_grad torch.ops (dispatcher)": lambda: dispatched(x, w),
        "no_grad C++ op below autograd": cxx_only,
        "fwd_requires_grad F.rms_norm": lambda: torch_rms(xg, wg),
        "fwd_requires_grad fusedops.rms_norm": lambda: fused_rms(xg, wg),
        "fwd_requires_grad torch.ops (dispatcher)": lambda: dispatched(xg, wg),
        "fwd_bwd F.rms_norm": fwd_bwd(torch_rms),
        "fwd_bwd fusedops.rms_norm": fwd_bwd(fused_rms),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--rows", type=int, default=16)
    parser.add_argument("--hidden", type=int, default=4096)
    parser.add_argument("--dtype", default="bfloat16")
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--csv", help="write the rows to this CSV file too")
    args = parser.parse_args(argv)
    dtype = getattr(torch, args.dtype, None)
    if not isinstance(dtype, torch.dtype):
        parser.error(f"--dtype: not a torch dtype: {args.dtype!r}")
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        parser.error("--device cuda: no CUDA device here")
    sync = torch.cuda.synchronize if args.device.startswith("cuda") else (lambda: None)

    results = []
    for name, fn in cases(args.rows, args.hidden, dtype, args.device).items():
        us = per_call_us(fn, args.calls, args.repeats, sync)
        results.append((name, us))
        print(f"{name:45s} {us:8.2f} us/call", flush=True)
    by_name = dict(results)
    print(f"\n{args.rows} x {args.hidden} {args.dtype} on {args.device}, fusedops / F.rms_norm:")
    for case in ("no_grad", "fwd_requires_grad", "fwd_bwd"):
        ratio = by_name[f"{case} fusedops.rms_norm"] / by_name[f"{case} F.rms_norm"]
        print(f"  {case:20s} {ratio:5.2f}x  (target <= 1.20x)")
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            writer = csv.writer(f)
            writer.writerow(["case", "device", "rows", "hidden", "dtype", "us_per_call"])
            for name, us in results:
                writer.writerow(
                    [name, args.device, args.rows, args.hidden, args.dtype, f"{us:.3f}"]
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
