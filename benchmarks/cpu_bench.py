"""CPU benchmark: fusedops's CPU kernels against torch eager and torch.compile (inductor).

    python benchmarks/cpu_bench.py [--dtype float32 --dtype bfloat16 ...] [--quick]
                                   [--reps 15] [--csv OUT.csv]

For each op, direction, dtype and shape (4096 rows, as benchmarks/bench.py):
median wall time of `--reps` calls after warm-up, GB/s over the fewest bytes
that must move (each input read once, each output written once), the same for
a plain tensor copy that moves as many bytes (timed in the same turns, so the
machine's load at that moment applies to both), and the speed ratio against
eager and torch.compile (> 1: fusedops is faster).

Two copies are timed. `copy` writes into a buffer allocated once: the memory
ceiling. `fresh copy` allocates its destination on every call, as an
out-of-place op must, and marks it for 2 MiB pages as fusedops marks its
outputs (FUSEDOPS_CPU_HUGE_PAGES): once an output is too large for the C
allocator to reuse a freed block, every call writes pages the kernel has to
zero first, and `fresh copy` pays that as the op does. It writes half the bytes
(the rms_norm and fused-add forwards write as much as they read; silu_and_mul
and the backwards write less, so for them it pays for more fresh pages than
the op). Backward rows time
`torch.autograd.grad` through each implementation, as bench.py does on the GPU.

Writes one CSV per run (default: benchmarks/csv/cpu-<UTC time>-<git sha>.csv)
and, with matplotlib, one plot per op (benchmarks/plots/ or --plots DIR; plot_cpu.py).
Timings on a shared machine are noisy: run it twice and compare before
reading a difference into the numbers. A script, not a test.
"""

from __future__ import annotations

import argparse
import csv
import ctypes
import datetime
import importlib.util
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, fields
from pathlib import Path

import torch
from provenance import measured_commit
from references import (
    EPS,
    allow_many_graphs,
    eager_add_rms_norm,
    eager_rms_norm,
    eager_silu_and_mul,
    manual_add_rms_norm,
    manual_rms_norm,
)

import fusedops

ROWS = 4096
HIDDEN = (2048, 4096, 8192, 16384)
SILU_D = (4096, 14336)
HERE = Path(__file__).resolve().parent


def bench(fn: Callable[[], object], reps: int) -> float:
    """Median milliseconds of fn() over `reps` calls, after 3 warm-up calls."""
    return bench_many({"fn": fn}, reps)["fn"]


def bench_many(fns: dict[str, Callable[[], object]], reps: int) -> dict[str, float]:
    """Median milliseconds of each fn, timed in turns (one call of each per round).

    Taking turns spreads a burst of load from other processes over every
    implementation instead of charging it to whichever ran at the time.
    """
    for fn in fns.values():
        for _ in range(3):
            fn()
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(reps):
        for name, fn in fns.items():
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    return {name: 1e3 * statistics.median(t) for name, t in times.items()}


def copy_timer(nbytes: int) -> Callable[[], object]:
    """A tensor copy that reads nbytes/2 and writes nbytes/2: the ceiling for nbytes."""
    src = torch.ones(nbytes // 2, dtype=torch.uint8)
    dst = torch.empty_like(src)
    return lambda: dst.copy_(src)


HUGE_PAGE = 1 << 21
MADV_HUGEPAGE = 14  # <sys/mman.h> on Linux


def _huge_page_advice() -> Callable[[torch.Tensor], None]:
    """What the CPU kernels do to a fresh output (csrc/kernels/cpu/huge_pages.cpp):
    madvise(MADV_HUGEPAGE) over its whole 2 MiB pages; nothing where that is off."""
    flag = os.environ.get("FUSEDOPS_CPU_HUGE_PAGES", "").lower()  # as huge_pages.cpp reads it
    if sys.platform != "linux" or flag in ("0", "false", "no", "off"):
        return lambda t: None
    libc = ctypes.CDLL(None, use_errno=True)
    libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]

    def advise(t: torch.Tensor) -> None:
        begin = t.data_ptr()
        first = -(-begin // HUGE_PAGE) * HUGE_PAGE
        last = (begin + t.numel() * t.element_size()) // HUGE_PAGE * HUGE_PAGE
        if last > first:
            libc.madvise(first, last - first, MADV_HUGEPAGE)

    return advise


_advise_huge_pages = _huge_page_advice()  # read the flag and load libc once


def fresh_copy_timer(nbytes: int) -> Callable[[], object]:
    """copy_timer into a destination allocated (and advised) on every call."""
    src = torch.ones(nbytes // 2, dtype=torch.uint8)

    def run() -> torch.Tensor:
        dst = torch.empty_like(src)
        _advise_huge_pages(dst)
        return dst.copy_(src)

    return run


allow_many_graphs()
compiled_rms_norm = torch.compile(manual_rms_norm, dynamic=False)
compiled_add_rms_norm = torch.compile(manual_add_rms_norm, dynamic=False)
compiled_silu_and_mul = torch.compile(eager_silu_and_mul, dynamic=False)


@dataclass
class Row:
    op: str
    direction: str
    dtype: str
    shape: str
    fusedops_ms: float
    eager_ms: float
    compile_ms: float
    copy_ms: float
    fresh_copy_ms: float
    gbps: float
    copy_gbps: float
    pct_copy: float
    pct_fresh_copy: float
    vs_eager: float
    vs_compile: float


def grad_timer(fn: Callable, inputs: list[torch.Tensor], grads: list[torch.Tensor]):
    inputs = [t.clone().requires_grad_(True) for t in inputs]
    out = fn(*inputs)
    outs = list(out) if isinstance(out, tuple) else [out]
    return lambda: torch.autograd.grad(outs, inputs, grads[: len(outs)], retain_graph=True)


def measure(op, direction, dtype, shape, nbytes, impls, reps) -> Row:
    copies = {"copy": copy_timer(nbytes), "fresh_copy": fresh_copy_timer(nbytes)}
    ms = bench_many({**impls, **copies}, reps)
    gbps = nbytes / ms["fusedops"] / 1e6
    return Row(
        op,
        direction,
        str(dtype).removeprefix("torch."),
        shape,
        ms["fusedops"],
        ms["eager"],
        ms["compile"],
        ms["copy"],
        ms["fresh_copy"],
        gbps,
        nbytes / ms["copy"] / 1e6,
        100 * ms["copy"] / ms["fusedops"],
        100 * ms["fresh_copy"] / ms["fusedops"],
        ms["eager"] / ms["fusedops"],
        ms["compile"] / ms["fusedops"],
    )


def randn(*shape, dtype):
    return torch.randn(*shape, dtype=torch.float32).to(dtype)


def bench_rms_norm(hidden, dtype, reps) -> list[Row]:
    es = torch.finfo(dtype).bits // 8
    x, w = randn(ROWS, hidden, dtype=dtype), randn(hidden, dtype=dtype)
    dy = randn(ROWS, hidden, dtype=dtype)
    shape = f"{ROWS}x{hidden}"
    fwd = {
        "fusedops": lambda: fusedops.rms_norm(x, w, EPS),
        "eager": lambda: eager_rms_norm(x, w),
        "compile": lambda: compiled_rms_norm(x, w),
    }
    bwd = {
        name: grad_timer(fn, [x, w], [dy])
        for name, fn in (
            ("fusedops", lambda a, b: fusedops.rms_norm(a, b, EPS)),
            ("eager", eager_rms_norm),
            ("compile", compiled_rms_norm),
        )
    }
    n = ROWS * hidden
    return [
        measure("rms_norm", "fwd", dtype, shape, (2 * n + hidden) * es, fwd, reps),
        measure("rms_norm", "bwd", dtype, shape, (3 * n + 2 * hidden) * es, bwd, reps),
    ]


def bench_add_rms_norm(hidden, dtype, reps) -> list[Row]:
    es = torch.finfo(dtype).bits // 8
    x, r = randn(ROWS, hidden, dtype=dtype), randn(ROWS, hidden, dtype=dtype)
    w = randn(hidden, dtype=dtype)
    shape = f"{ROWS}x{hidden}"
    fwd = {
        "fusedops": lambda: fusedops.fused_add_rms_norm(x, r, w, EPS),
        "eager": lambda: eager_add_rms_norm(x, r, w),
        "compile": lambda: compiled_add_rms_norm(x, r, w),
    }
    n = ROWS * hidden
    return [measure("fused_add_rms_norm", "fwd", dtype, shape, (4 * n + hidden) * es, fwd, reps)]


def bench_silu_and_mul(d, dtype, reps) -> list[Row]:
    es = torch.finfo(dtype).bits // 8
    x, dy = randn(ROWS, 2 * d, dtype=dtype), randn(ROWS, d, dtype=dtype)
    shape = f"{ROWS}x2*{d}"
    fwd = {
        "fusedops": lambda: fusedops.silu_and_mul(x),
        "eager": lambda: eager_silu_and_mul(x),
        "compile": lambda: compiled_silu_and_mul(x),
    }
    bwd = {
        name: grad_timer(fn, [x], [dy])
        for name, fn in (
            ("fusedops", fusedops.silu_and_mul),
            ("eager", eager_silu_and_mul),
            ("compile", compiled_silu_and_mul),
        )
    }
    n = ROWS * d
    return [
        measure("silu_and_mul", "fwd", dtype, shape, 3 * n * es, fwd, reps),
        measure("silu_and_mul", "bwd", dtype, shape, 5 * n * es, bwd, reps),
    ]


def render(rows: list[Row]) -> str:
    lines = [
        "| op | dir | dtype | shape | fusedops ms | eager ms | compile ms | GB/s | copy GB/s "
        "| % copy | % fresh copy | x eager | x compile |",
        "| --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        lines.append(
            f"| {r.op} | {r.direction} | {r.dtype} | {r.shape} | {r.fusedops_ms:.2f} | "
            f"{r.eager_ms:.2f} | {r.compile_ms:.2f} | {r.gbps:.1f} | {r.copy_gbps:.1f} | {r.pct_copy:.0f} | "
            f"{r.pct_fresh_copy:.0f} | "
            f"{r.vs_eager:.2f} | {r.vs_compile:.2f} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--dtype",
        action="append",
        choices=["float32", "bfloat16", "float16", "float64"],
        help="repeatable (default: float32, bfloat16, float16)",
    )
    parser.add_argument("--quick", action="store_true", help="hidden 4096 and d 4096 only")
    parser.add_argument("--reps", type=int, default=15, help="timed calls per median")
    parser.add_argument("--csv", type=Path, help="CSV path (default: benchmarks/csv/...)")
    parser.add_argument(
        "--plots",
        type=Path,
        default=HERE / "plots",
        help="directory for one plot per op (default: benchmarks/plots; needs matplotlib)",
    )
    args = parser.parse_args(argv)
    if args.reps < 1:
        parser.error("--reps must be >= 1")
    dtypes = [getattr(torch, d) for d in args.dtype or ["float32", "bfloat16", "float16"]]
    hidden = (4096,) if args.quick else HIDDEN
    silu_d = (4096,) if args.quick else SILU_D

    stamp = datetime.datetime.now(datetime.timezone.utc)
    sha = measured_commit() or "unknown"
    print(
        f"CPU: {platform.processor() or platform.machine()} | threads {torch.get_num_threads()} | "
        f"torch {torch.__version__} | fusedops {fusedops.__version__} | git {sha} | "
        f"{stamp:%Y-%m-%d %H:%M} UTC",
        flush=True,
    )
    rows: list[Row] = []
    for dtype in dtypes:
        for h in hidden:
            rows += bench_rms_norm(h, dtype, args.reps)
        rows += bench_add_rms_norm(4096, dtype, args.reps)
        for d in silu_d:
            rows += bench_silu_and_mul(d, dtype, args.reps)
        print(f"{dtype} done", file=sys.stderr, flush=True)
    print(render(rows))

    out = args.csv or HERE / "csv" / f"cpu-{stamp:%Y%m%dT%H%M%SZ}-{sha}.csv"
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["date_utc", "git", "threads"] + [fl.name for fl in fields(Row)])
        for r in rows:
            writer.writerow(
                [
                    f"{stamp:%Y-%m-%dT%H:%M:%SZ}",
                    sha,
                    torch.get_num_threads(),
                    *asdict(r).values(),
                ]
            )
    print(f"CSV: {out}")
    if importlib.util.find_spec("matplotlib") is None:  # the CSV is the result, plots are extra
        print("plots: skipped (matplotlib is not installed)")
        return 0
    import plot_cpu  # this folder is on sys.path: run as a script

    with out.open(newline="") as f:
        csv_rows = list(csv.DictReader(f))
    for path in plot_cpu.plot(csv_rows, args.plots, f"cpu-{stamp:%Y%m%dT%H%M%SZ}-{sha}-"):
        print(f"plot: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
