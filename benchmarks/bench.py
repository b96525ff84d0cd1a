"""Achieved memory bandwidth of the fusedops kernels against torch eager and torch.compile.

    python benchmarks/bench.py [--dtype bfloat16] [--quick] [--json OUT]

For each op, direction and shape: time (median of CUDA-event timings via
triton.testing.do_bench when available), TB/s over the fewest bytes that must
move (each input read once, each output written once), % of a device-to-device
copy measured in the same run, and the speed ratio against eager,
torch.compile and (if installed) Liger-Kernel. Also the per-call overhead at
one row. A script, not a test: numbers go to benchmarks/RESULTS.md.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass

import torch
from l2_state import reset_l2_persisting
from references import EPS, allow_many_graphs, eager_rms_norm, eager_silu_and_mul, manual_rms_norm

import fusedops

ROWS = (4096, 16384, 65536)
HIDDEN = (2048, 4096, 8192, 16384)
SILU_D = (4096, 14336)


def bench(fn: Callable[[], object], rep_ms: int = 100) -> float:
    """Median milliseconds of fn(), from an L2 without lines that earlier
    kernels left evict_last (l2_state.py)."""
    reset_l2_persisting()
    try:
        from triton.testing import do_bench

        return float(do_bench(fn, warmup=25, rep=rep_ms, return_mode="median"))
    except ImportError:
        for _ in range(10):
            fn()
        times = []
        for _ in range(50):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end))
        return statistics.median(times)


def copy_bandwidth() -> float:
    """TB/s of a large device-to-device copy (bytes read + bytes written)."""
    n = 1 << 30
    src = torch.empty(n, dtype=torch.uint8, device="cuda").random_()
    dst = torch.empty_like(src)
    ms = bench(lambda: dst.copy_(src), rep_ms=200)
    return 2 * n / ms / 1e9


def tbps(nbytes: int, ms: float) -> float:
    return nbytes / ms / 1e9


allow_many_graphs()
compiled_rms_norm = torch.compile(manual_rms_norm, dynamic=False)
compiled_silu_and_mul = torch.compile(eager_silu_and_mul, dynamic=False)


def liger():
    try:
        from liger_kernel.ops.rms_norm import LigerRMSNormFunction
        from liger_kernel.ops.swiglu import LigerSiLUMulFunction
    except ImportError:
        return None
    # in_place=False: Liger's default writes dx into dy, which the timing loop reuses.
    # silu takes gate and up as two tensors (as Liger's MLP has them): pass
    # contiguous halves so no copy is timed.
    return {
        "rms_norm": lambda x, w: LigerRMSNormFunction.apply(x, w, EPS, 0.0, "llama", False),
        "silu_and_mul": lambda a, b: LigerSiLUMulFunction.apply(a, b),
    }


@dataclass
class Row:
    op: str
    direction: str
    shape: str
    ms: float
    tbps: float
    pct_copy: float
    vs_eager: float
    vs_compile: float
    vs_liger: float | None
    op_tbps: float | None = None  # backward: fusedops's backward op alone, without autograd


def backward_timer(
    fn: Callable, inputs: list[torch.Tensor], grad: torch.Tensor
) -> Callable[[], object]:
    for t in inputs:
        t.requires_grad_(True)
    out = fn(*inputs)
    out = out[0] if isinstance(out, tuple) else out
    return lambda: torch.autograd.grad(out, inputs, grad, retain_graph=True)


def measure(op, direction, shape, nbytes, impls, copy_tbps) -> Row:
    times = {name: bench(f) for name, f in impls.items() if f is not None}
    ms = times["fusedops"]
    liger_ratio = times["liger"] / ms if "liger" in times else None
    return Row(
        op,
        direction,
        shape,
        ms,
        tbps(nbytes, ms),
        100 * tbps(nbytes, ms) / copy_tbps,
        times["eager"] / ms,
        times["compile"] / ms,
        liger_ratio,
    )


def bench_rms_norm(rows: int, hidden: int, dtype: torch.dtype, copy: float, lg) -> list[Row]:
    shape, esize = f"{rows}x{hidden}", torch.finfo(dtype).bits // 8
    x = torch.randn(rows, hidden, dtype=dtype, device="cuda")
    w = torch.randn(hidden, dtype=dtype, device="cuda")
    dy = torch.randn_like(x)
    forward = {
        "fusedops": lambda: fusedops.rms_norm(x, w, EPS),
        "eager": lambda: eager_rms_norm(x, w),
        "compile": lambda: compiled_rms_norm(x, w),
        "liger": (lambda: lg["rms_norm"](x, w)) if lg else None,
    }

    def bwd(fn):
        return backward_timer(fn, [x.clone(), w.clone()], dy)

    backward = {
        "fusedops": bwd(fusedops.rms_norm),
        "eager": bwd(eager_rms_norm),
        "compile": bwd(compiled_rms_norm),
        "liger": bwd(lg["rms_norm"]) if lg else None,
    }
    bwd_bytes = (3 * rows * hidden + 2 * hidden) * esize
    bwd_row = measure("rms_norm", "bwd", shape, bwd_bytes, backward, copy)
    bwd_row.op_tbps = tbps(
        bwd_bytes, bench(lambda: torch.ops.fusedops.rms_norm_backward(dy, x, w, EPS))
    )
    return [
        measure("rms_norm", "fwd", shape, (2 * rows * hidden + hidden) * esize, forward, copy),
        bwd_row,
    ]


def bench_silu_and_mul(rows: int, d: int, dtype: torch.dtype, copy: float, lg) -> list[Row]:
    shape, esize = f"{rows}x2*{d}", torch.finfo(dtype).bits // 8
    x = torch.randn(rows, 2 * d, dtype=dtype, device="cuda")
    dy = torch.randn(rows, d, dtype=dtype, device="cuda")
    gate, up = x[:, :d].contiguous(), x[:, d:].contiguous()
    forward = {
        "fusedops": lambda: fusedops.silu_and_mul(x),
        "eager": lambda: eager_silu_and_mul(x),
        "compile": lambda: compiled_silu_and_mul(x),
        "liger": (lambda: lg["silu_and_mul"](gate, up)) if lg else None,
    }

    def bwd(fn):
        return backward_timer(fn, [x.clone()], dy)

    backward = {
        "fusedops": bwd(fusedops.silu_and_mul),
        "eager": bwd(eager_silu_and_mul),
        "compile": bwd(compiled_silu_and_mul),
        "liger": backward_timer(lg["silu_and_mul"], [gate.clone(), up.clone()], dy) if lg else None,
    }
    bwd_row = measure("silu_and_mul", "bwd", shape, 5 * rows * d * esize, backward, copy)
    bwd_row.op_tbps = tbps(
        5 * rows * d * esize, bench(lambda: torch.ops.fusedops.silu_and_mul_backward(dy, x))
    )
    return [measure("silu_and_mul", "fwd", shape, 3 * rows * d * esize, forward, copy), bwd_row]


def run(dtype: torch.dtype, quick: bool) -> tuple[float, list[Row], dict[str, float]]:
    copy = copy_bandwidth()
    lg = liger()
    rows_list = ROWS[:1] if quick else ROWS
    results: list[Row] = []
    for rows in rows_list:
        for hidden in HIDDEN[1:2] if quick else HIDDEN:
            results += bench_rms_norm(rows, hidden, dtype, copy, lg)
    for rows in rows_list:
        for d in SILU_D[:1] if quick else SILU_D:
            results += bench_silu_and_mul(rows, d, dtype, copy, lg)
    return copy, results, small_shapes(dtype)


def small_shapes(dtype: torch.dtype) -> dict[str, float]:
    """Microseconds per call at 1 row (dispatch overhead) against native torch ops."""
    x = torch.randn(1, 4096, dtype=dtype, device="cuda")
    w = torch.randn(4096, dtype=dtype, device="cuda")
    g = torch.randn(1, 8192, dtype=dtype, device="cuda")
    return {
        "fusedops.rms_norm 1x4096": 1e3 * bench(lambda: fusedops.rms_norm(x, w, EPS)),
        "torch.ops.fusedops.rms_norm 1x4096": 1e3
        * bench(lambda: torch.ops.fusedops.rms_norm(x, w, EPS)),
        "F.rms_norm 1x4096 (eager)": 1e3 * bench(lambda: eager_rms_norm(x, w)),
        "torch.add 1x4096 (native op)": 1e3 * bench(lambda: torch.add(x, x)),
        "fusedops.silu_and_mul 1x2*4096": 1e3 * bench(lambda: fusedops.silu_and_mul(g)),
        "silu*mul 1x2*4096 (eager)": 1e3 * bench(lambda: eager_silu_and_mul(g)),
    }


def render(copy: float, rows: list[Row], small: dict[str, float]) -> str:
    lines = [
        f"device-to-device copy: {copy:.2f} TB/s",
        "",
        "TB/s and % copy include autograd for bwd; 'op TB/s' is the backward op alone.",
        "",
        "| op | dir | shape | ms | TB/s | % copy | x eager | x compile | x liger | op TB/s |",
        "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        lg = f"{r.vs_liger:.2f}" if r.vs_liger is not None else "-"
        op = f"{r.op_tbps:.2f}" if r.op_tbps is not None else "-"
        lines.append(
            f"| {r.op} | {r.direction} | {r.shape} | {r.ms:.4f} | {r.tbps:.2f} | {r.pct_copy:.1f} | "
            f"{r.vs_eager:.2f} | {r.vs_compile:.2f} | {lg} | {op} |"
        )
    lines += ["", "| call at 1 row | us |", "| --- | ---: |"]
    lines += [f"| {k} | {v:.1f} |" for k, v in small.items()]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dtype", default="bfloat16", choices=["bfloat16", "float16", "float32"])
    parser.add_argument("--quick", action="store_true", help="one shape per op")
    parser.add_argument("--json", help="also write the raw numbers here")
    args = parser.parse_args(argv)
    if not torch.cuda.is_available():
        print("bench.py needs a CUDA GPU", file=sys.stderr)
        return 2
    dtype = getattr(torch, args.dtype)
    print(f"GPU: {torch.cuda.get_device_name()} | torch {torch.__version__} | {args.dtype}")
    copy, rows, small = run(dtype, args.quick)
    print(render(copy, rows, small))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(
                {"copy_tbps": copy, "rows": [asdict(r) for r in rows], "small_us": small},
                f,
                indent=1,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
