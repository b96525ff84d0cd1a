"""exp81 (session 63): which part of inductor's fused add makes it faster rotating.

A Triton kernel written in the form of the one inductor generated for the float32 fused add
(call A's `inductor-f32-add-process*.log`): XBLOCK rows a program, the row in tiles of RBLOCK,
the residual sum stored and read back for the output, the weight loaded evict_last. It is
timed with the loads as inductor has them (evict_first) and plain, at one and two rows a
program and at inductor's warp count and half of it, beside fusedops and compile-static, in
gpu_sweep.py's three patterns, the implementations taking turns in one process for ROUNDS
rounds (median). Outputs are checked against fusedops (allclose: the sum order differs).
Run from the repository root with the wheel and Liger on PYTHONPATH:

    [VARIANTS=grid] python benchmarks/raw/2026-11-30-h200-v45-exp79-exp80/exp81_structure.py OUT.csv
"""

import csv
import os
import statistics
import sys

import torch
import triton
import triton.language as tl

sys.path.insert(0, "benchmarks")
from gpu_sweep import (
    EPS,
    WARM_UP_GRAPHS,
    calls_per_graph,
    graph_us,
    implementation,
    make_inputs,
    pattern_step,
    shape_input_sets,
    warm_up,
)

OP = "fused_add_rms_norm"
ROUNDS = 3
SHAPES = [
    (torch.float32, 1024, 2048),
    (torch.float32, 512, 4096),
    (torch.float32, 512, 2048),
    (torch.float32, 256, 4096),
    (torch.bfloat16, 512, 4096),
    (torch.bfloat16, 1024, 2048),
]
if os.environ.get("VARIANTS", "ind") == "grid":  # the float32 same-tensor misses too
    SHAPES = [*SHAPES[:2], (torch.float32, 2048, 2048), (torch.float32, 1024, 4096), *SHAPES[4:]]


@triton.jit
def fused_add_kernel(
    x_ptr,
    r_ptr,
    w_ptr,
    sum_ptr,
    out_ptr,
    rows,
    eps,
    H: tl.constexpr,
    XBLOCK: tl.constexpr,
    RBLOCK: tl.constexpr,
    EVICT: tl.constexpr,
):
    xi = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)[:, None]
    xm = xi < rows
    rb = tl.arange(0, RBLOCK)[None, :]
    acc = tl.zeros([XBLOCK, RBLOCK], tl.float32)
    for off in tl.range(0, H, RBLOCK):
        idx = off + rb
        m = xm & (idx < H)
        a = tl.load(x_ptr + xi * H + idx, m, other=0.0, eviction_policy=EVICT).to(tl.float32)
        b = tl.load(r_ptr + xi * H + idx, m, other=0.0, eviction_policy=EVICT).to(tl.float32)
        s = (a + b).to(sum_ptr.dtype.element_ty)
        tl.store(sum_ptr + xi * H + idx, s, m)
        f = s.to(tl.float32)
        acc += tl.where(m, f * f, 0.0)
    rstd = tl.rsqrt(tl.sum(acc, 1)[:, None] / H + eps)
    for off in tl.range(0, H, RBLOCK):
        idx = off + rb
        m = xm & (idx < H)
        v = tl.load(sum_ptr + xi * H + idx, m, other=0.0, eviction_policy=EVICT).to(tl.float32)
        w = tl.load(w_ptr + idx, idx < H, other=0.0, eviction_policy="evict_last").to(tl.float32)
        tl.store(out_ptr + xi * H + idx, (v * rstd * w).to(out_ptr.dtype.element_ty), m)


def triton_impl(inputs, xblock: int, rblock: int, warps: int, evict: str):
    x, r, w = inputs
    rows, hidden = x.shape
    grid = (triton.cdiv(rows, xblock),)

    def call():
        s = torch.empty_like(x)
        out = torch.empty_like(x)
        fused_add_kernel[grid](
            x,
            r,
            w,
            s,
            out,
            rows,
            EPS,
            H=hidden,
            XBLOCK=xblock,
            RBLOCK=rblock,
            EVICT=evict,
            num_warps=warps,
            num_stages=1,
        )
        return out, s

    return call


def variants(hidden: int) -> dict[str, tuple[int, int, int, str]]:
    """name -> (XBLOCK, RBLOCK, warps, eviction). VARIANTS=ind (the first run): inductor's
    config for the shape (call A: 2 rows of 2048 at 16 warps; 1 row in tiles of 2048 at
    16 warps for 4096) and one row a program, each evict_first and plain. VARIANTS=grid
    (the second): plain loads only, rows a program, tile width and warps around those."""
    if os.environ.get("VARIANTS", "ind") == "grid":
        if hidden == 2048:
            grid = [
                (1, 2048, 8),
                (2, 2048, 16),
                (2, 2048, 8),
                (4, 2048, 16),
                (1, 1024, 8),
                (2, 1024, 16),
            ]
        else:
            grid = [
                (1, 4096, 16),
                (1, 2048, 16),
                (1, 1024, 16),
                (1, 2048, 8),
                (1, 1024, 8),
                (2, 2048, 16),
            ]
        return {f"tri-x{x}-r{r}-w{w}": (x, r, w, "") for x, r, w in grid}
    ind = (2, 2048, 16) if hidden == 2048 else (1, 2048, 16)
    one = (1, hidden, 8) if hidden == 2048 else (1, hidden, 16)
    return {
        "tri-ind-ef": (*ind, "evict_first"),
        "tri-ind-plain": (*ind, ""),
        "tri-1row-ef": (*one, "evict_first"),
        "tri-1row-plain": (*one, ""),
    }


def main() -> int:
    out_csv = sys.argv[1]
    warm_up(WARM_UP_GRAPHS)
    rows_out = []
    for dtype, rows, hidden in SHAPES:
        n = shape_input_sets("rotating", OP, rows, hidden, dtype)
        sets = [make_inputs(OP, rows, hidden, dtype) for _ in range(n)]
        impls = {
            "fusedops": [implementation(OP, "fusedops", s, None) for s in sets],
            "compile-static": [implementation(OP, "compile-static", s, None) for s in sets],
        }
        for name, (xb, rbk, wp, ev) in variants(hidden).items():
            impls[name] = [triton_impl(s, xb, rbk, wp, ev) for s in sets]
        ref = impls["fusedops"][0]()
        for name, fns in impls.items():
            got = fns[0]()
            for a, b in zip(ref, got, strict=True):
                tol = 1e-5 if dtype == torch.float32 else 2e-2
                if not torch.allclose(a.float(), b.float(), rtol=tol, atol=tol):
                    raise SystemExit(f"{name} differs from fusedops at {dtype} {rows}x{hidden}")
        for pattern in ("same", "rotating", "consumer"):
            times = {name: [] for name in impls}
            names = list(impls)
            for k in range(ROUNDS):
                order = names[k % len(names) :] + names[: k % len(names)]
                for name in order:
                    step = pattern_step(OP, pattern, impls[name])
                    sets_n = 1 if pattern == "same" else n
                    times[name].append(
                        graph_us(step, calls_per_graph(OP, rows, hidden, dtype, sets_n))
                    )
            med = {name: statistics.median(t) for name, t in times.items()}
            base = med["fusedops"]
            line = " ".join(
                f"{name}={100 * (v / base - 1):+.1f}%"
                for name, v in med.items()
                if name != "fusedops"
            )
            d = str(dtype).removeprefix("torch.")
            print(f"{d} {rows}x{hidden} {pattern:8s} fusedops={base:.2f} {line}", flush=True)
            for name, v in med.items():
                rows_out.append([OP, d, rows, hidden, pattern, name, f"{v:.3f}"])
    with open(out_csv, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["op", "dtype", "rows", "hidden", "pattern", "impl", "us"])
        w.writerows(rows_out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
