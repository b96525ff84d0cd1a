"""One-row-per-block rms_norm kernels, rung by rung, on the same inputs as fusedops and Liger.

    nvcc -O3 -std=c++17 -arch=sm_90 -shared -Xcompiler -fPIC \\
        -o /tmp/row_ladder.so benchmarks/tools/row_ladder.cu
    python benchmarks/tools/row_ladder.py /tmp/row_ladder.so --csv OUT.csv
        [--dtype bfloat16] [--shape 16384x2048] [--placements 6] [--impls ...]
        [--out-buffer] [--keep-l2]

Written for the 64 MB misses of v15: there Liger's rms_norm and the device
copy ran at about 45 us a call at most placements and fusedops's at 47.5 at
every one. Both Liger's kernel and ours run one row per block with the same
block size, so the probe times a ladder of stand-alone kernels that do more
and more of the work:

- `cu:MODE:LOAD:C`: row_ladder.cu's nvcc kernels. MODE: copy (load and store
  the row), scale (x * w, no reduction), norm (the whole rms_norm), pfnorm
  (norm with the wheel's L2 prefetch 4 MB ahead, lines marked evict_last) or
  pfdemote (pfnorm, and each line of its row set back to evict_normal once
  read). LOAD: nc (ld.global.nc, the wheel's) or plain (ld.global, Triton's).
  C: 16-byte vectors per thread;
- `tr:copy`, `tr:norm`: the same row copy and rms_norm in Triton, with
  Liger's block size and warp count;
- `fusedops`, `compile`, `liger`, `copy` as gpu_sweep.py times them.

What it found (NOTES.md, v16): with --keep-l2, every kernel timed after a
prefetching one (fusedops 42a6a66, pfnorm) on the same x was "fast", the
others "slow", whatever the placement and whether the kernel was an nvcc or
a Triton copy: the prefetch left x's lines evict_last in the L2, cache
flushes kept them, and the next kernel read them from there. Without
--keep-l2 each timing starts from an L2 with no such lines
(gpu_sweep.graph_us resets them), and fusedops is level with or ahead of the
others; pfdemote is the kernel change that came of it.

Every kernel's output is checked first (copies bit for bit, the norms against
fusedops.rms_norm). Outputs are allocated inside the captured calls, from the
graph's pool, as fusedops and Liger allocate theirs (the copy, as in
gpu_sweep.py, writes to a buffer made before the capture); with --out-buffer
the cu and tr rungs all write into one buffer made before the capture
instead, so that they differ in nothing but the kernel and how it is
launched. Placements as in placement_probe.py (gpu_sweep.py's spacers, then
fresh inputs); the order of the implementations rotates from one placement
to the next. A script, not a test: it needs a GPU, nvcc and Triton.
"""

from __future__ import annotations

import argparse
import csv
import ctypes
import functools
import random
import statistics
import sys
from pathlib import Path

import torch
from ncu_target import parse_shapes

import fusedops

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from gpu_sweep import (
    EPS,
    calls_per_graph,
    graph_us,
    implementation,
    liger_ops,
    make_inputs,
    rotated,
    spacers,
)

DTYPE_CODE = {torch.float32: 0, torch.bfloat16: 2}
VECTORS_PER_THREAD = (1, 2, 4)  # the C row_ladder.cu is built for
MODES = {"copy": 0, "scale": 1, "norm": 2, "pfnorm": 3, "pfdemote": 4}


def liger_warps(hidden: int) -> tuple[int, int]:
    """Liger-Kernel's (BLOCK_SIZE, num_warps) for a row of `hidden` (calculate_settings)."""
    block = 1 << (hidden - 1).bit_length()
    warps = 32 if block >= 32768 else 16 if block >= 8192 else 8 if block >= 2048 else 4
    return block, warps


@functools.cache
def triton_row_kernel():
    """The Triton rungs' kernel, jitted once: a row copy, or the rms_norm in
    float32 with Liger's "llama" casting (x * r * w, rounded once)."""
    import triton
    import triton.language as tl

    @triton.jit
    def row_kernel(Y, X, W, n_cols, inv_hidden, eps, BLOCK: tl.constexpr, NORM: tl.constexpr):
        row = tl.program_id(0).to(tl.int64)
        offs = tl.arange(0, BLOCK)
        mask = offs < n_cols
        xv = tl.load(X + row * n_cols + offs, mask=mask, other=0.0)
        if NORM:
            xf = xv.to(tl.float32)
            r = tl.rsqrt(tl.sum(xf * xf, axis=0) * inv_hidden + eps)
            wv = tl.load(W + offs, mask=mask, other=0.0)
            tl.store(Y + row * n_cols + offs, (xf * r * wv.to(tl.float32)).to(xv.dtype), mask=mask)
        else:
            tl.store(Y + row * n_cols + offs, xv, mask=mask)

    return row_kernel


def triton_impl(name: str, x: torch.Tensor, w: torch.Tensor, out: torch.Tensor | None):
    """The callable for `tr:copy` or `tr:norm`, writing into `out` if given,
    else into a new tensor per call."""
    kernel = triton_row_kernel()
    rows, hidden = x.shape
    block, warps = liger_warps(hidden)
    norm = name == "tr:norm"

    def run() -> torch.Tensor:
        y = torch.empty_like(x) if out is None else out
        kernel[(rows,)](y, x, w, hidden, 1.0 / hidden, EPS, BLOCK=block, NORM=norm, num_warps=warps)
        return y

    return run


def cuda_impl(
    lib: ctypes.CDLL, name: str, x: torch.Tensor, w: torch.Tensor, out: torch.Tensor | None
):
    """The callable for `cu:MODE:LOAD:C` (into `out` as triton_impl), or None
    if that C does not fit the row."""
    _, mode, load, c = name.split(":")
    rows, hidden = x.shape
    nvec = hidden * x.element_size() // 16
    c = int(c)
    if nvec % c or nvec // c > 1024 or (nvec // c) % 32:
        return None

    def run() -> torch.Tensor:
        y = torch.empty_like(x) if out is None else out
        rc = lib.launch(
            DTYPE_CODE[x.dtype], MODES[mode], c, int(load == "nc"), y.data_ptr(), x.data_ptr(),
            w.data_ptr(), rows, hidden, EPS, torch.cuda.current_stream().cuda_stream,
        )  # fmt: skip
        if rc != 0:
            raise RuntimeError(f"{name}: launch returned {rc}")
        return y

    return run


def check(name: str, out: torch.Tensor, x: torch.Tensor, w: torch.Tensor, ref: torch.Tensor):
    """Raises if a rung's output is wrong: timing a wrong kernel tells nothing.
    Copies must give x bit for bit; scale x * w and the norms `ref` (fusedops)
    within a rounding."""
    if "copy" in name:
        if not torch.equal(out, x):
            raise AssertionError(f"{name}: the copy differs from x")
        return
    expect = (x.float() * w.float()).to(x.dtype) if ":scale:" in name else ref
    tol = 1e-5 if x.dtype == torch.float32 else 2**-6
    err = (out.float() - expect.float()).abs().max().item()
    if not err <= tol * max(1.0, expect.float().abs().max().item()):
        raise AssertionError(f"{name}: output off by {err}")


def known(name: str) -> bool:
    """Whether `name` is a rung this probe has (cu:MODE:LOAD:C, tr:..., or gpu_sweep's)."""
    parts = name.split(":")
    if parts[0] == "cu":
        return (
            len(parts) == 4
            and parts[1] in MODES
            and parts[2] in ("nc", "plain")
            and parts[3].isdigit()
            and int(parts[3]) in VECTORS_PER_THREAD
        )
    return name in ("tr:copy", "tr:norm", "fusedops", "compile", "liger", "copy")


def default_impls(dtype: torch.dtype, hidden: int) -> list[str]:
    nvec = hidden * dtype.itemsize // 16
    _, warps = liger_warps(hidden)
    # Liger's C and a 256-thread block's, where row_ladder.cu has that C
    cs = sorted({max(1, nvec // (warps * 32)), max(1, nvec // 256)} & set(VECTORS_PER_THREAD))
    names = ["fusedops", "liger", "copy", "tr:copy", "tr:norm"]
    for mode in MODES:
        for load in ("nc", "plain"):
            names += [f"cu:{mode}:{load}:{c}" for c in cs]
    return names


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("library", help="row_ladder.cu built as a shared library")
    parser.add_argument("--csv", required=True)
    parser.add_argument("--dtype", default="bfloat16", choices=[str(d)[6:] for d in DTYPE_CODE])
    parser.add_argument("--shape", type=parse_shapes, default="16384x2048", help="ROWSxHIDDEN")
    parser.add_argument("--placements", type=int, default=6)
    parser.add_argument("--impls", help="comma-separated (default: every rung that fits)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--keep-l2",
        action="store_true",
        help="do not reset the L2's evict_last lines between timings",
    )
    parser.add_argument(
        "--out-buffer",
        action="store_true",
        help="cu and tr rungs write into one preallocated buffer",
    )
    args = parser.parse_args(argv)
    if len(args.shape) != 1:
        parser.error("--shape takes one ROWSxHIDDEN")
    if args.placements < 1:
        parser.error(f"--placements must be at least 1, not {args.placements}")
    if not torch.cuda.is_available():
        print("row_ladder.py needs a CUDA GPU", file=sys.stderr)
        return 2
    (rows, hidden), dtype = args.shape[0], getattr(torch, args.dtype)
    if hidden * dtype.itemsize % 16:
        parser.error("rows must be whole 16-byte vectors")
    lib = ctypes.CDLL(args.library)
    lib.launch.argtypes = [ctypes.c_int] * 4 + [ctypes.c_void_p] * 3
    lib.launch.argtypes += [ctypes.c_long, ctypes.c_int, ctypes.c_float, ctypes.c_void_p]
    names = args.impls.split(",") if args.impls else default_impls(dtype, hidden)
    bad = [name for name in names if not known(name)]
    if bad:
        parser.error(f"unknown implementations {bad}: see the module docstring")
    lg = liger_ops() if "liger" in names else None
    calls = calls_per_graph("rms_norm", rows, hidden, dtype)
    rng = random.Random(args.seed)
    held: list[object] = []
    times: dict[str, list[float]] = {}
    with open(args.csv, "w", newline="") as f:
        out = csv.writer(f)
        out.writerow(
            [
                "dtype",
                "rows",
                "hidden",
                "placement",
                "impl",
                "x_address",
                "out_buffer",
                "demote",
                "us",
            ]
        )
        for p in range(args.placements):
            held += spacers(rng)
            x, w = make_inputs("rms_norm", rows, hidden, dtype)
            held.append((x, w))
            ref = fusedops.rms_norm(x, w, EPS)
            y = torch.empty_like(x) if args.out_buffer else None
            held.append(y)
            fns = {}
            for name in names:
                if name.startswith("cu:"):
                    fn = cuda_impl(lib, name, x, w, y)
                elif name in ("tr:copy", "tr:norm"):
                    fn = triton_impl(name, x, w, y)
                else:
                    fn = implementation("rms_norm", name, (x, w), lg)
                if fn is None:
                    continue
                result = fn()
                check(name, result[0] if isinstance(result, tuple) else result, x, w, ref)
                fns[name] = fn
            if not fns:
                parser.error(f"no implementation fits {rows}x{hidden} {args.dtype}")
            cells = []
            for name in rotated(list(fns), p):
                us = graph_us(fns[name], calls, reset_l2=not args.keep_l2)
                times.setdefault(name, []).append(us)
                buffer = y.data_ptr() if y is not None and name.startswith(("cu:", "tr:")) else ""
                out.writerow(
                    [
                        args.dtype,
                        rows,
                        hidden,
                        p,
                        name,
                        x.data_ptr(),
                        buffer,
                        int(not args.keep_l2),
                        f"{us:.3f}",
                    ]
                )
                cells.append(f"{name}={us:.2f}")
            print(f"placement {p}: " + " ".join(sorted(cells)), flush=True)
    print(f"{args.dtype} {rows}x{hidden}, us per call over {args.placements} placements:")
    for name, ts in sorted(times.items(), key=lambda kv: statistics.median(kv[1])):
        mid = statistics.median(ts)
        print(f"  {name:22s} min {min(ts):7.2f}  median {mid:7.2f}  max {max(ts):7.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
