"""Runs every op and backward once on small CUDA inputs of awkward sizes.

Run by scripts/gpu_test.py under `compute-sanitizer` (memcheck, racecheck): it exercises the
vectorised, scalar (misaligned) and long-row fallback paths of each kernel; 12288 is the
fp32 forward at 4 vectors per thread (the fused add's weight loaded late).

The misaligned inputs are contiguous views that start one element into their
storage: contiguous, so the op makes no aligned copy of them, and off a 16-byte
boundary, so the kernels' scalar paths are what runs. `reaches_kernel_misaligned`
checks both (a CPU profile of the call must show no copy), so a change that
quietly copies them stops this workload instead of sanitizing nothing.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

import torch

import fusedops

COPY_OPS = ("aten::copy_", "aten::clone", "aten::_to_copy")
# `--dtype` runs a part of the workload: racecheck's host memory grows with the
# launches of one process (on an H100 runner the whole workload peaked at 120.5 of
# 126 GiB), so scripts/gpu_test.py runs it once a dtype under racecheck.
DTYPES = ("float32", "float16", "bfloat16", "float64")


def misaligned(rows: int, hidden: int, dtype: torch.dtype) -> torch.Tensor:
    flat = torch.randn(rows * hidden + 1, dtype=dtype, device="cuda")
    return flat[1:].view(rows, hidden)


def reaches_kernel_misaligned(x: torch.Tensor, call) -> None:
    assert x.is_contiguous() and x.data_ptr() % 16 != 0, (
        "the input is not a misaligned contiguous view"
    )
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        call()
    copies = [e.name for e in prof.events() if e.name in COPY_OPS]
    assert not copies, f"the op copied its misaligned input before the kernel: {copies}"


def norms_past_the_l2(dtype: torch.dtype, hidden: int) -> None:
    """The forward's builds for rows past the L2: those that prefetch rows ahead, and on
    sm_90 the evict_last reads of x (and the fused add's residual) with the last rows'
    lines set back to normal (bf16 4096: rms_norm C = 4 in C = 2's order, the fused add
    C = 2; float32 2048: C = 2; fp16 2048: the fused add at C = 1; float32 16384:
    rms_norm reading x twice, its lines set back after the second read; bf16 16384 and
    float32 8192: the fused add's 1024-thread blocks, whose reads here are 5/2 of the L2;
    bf16 16384 rms_norm's kHalves build reads plainly at 5/4)."""
    row_bytes = hidden * dtype.itemsize
    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    rows = props.L2_cache_size * 5 // 4 // row_bytes + 1
    x = torch.randn(rows, hidden, dtype=dtype, device="cuda")
    w = torch.randn(hidden, dtype=dtype, device="cuda")
    fusedops.rms_norm(x, w)
    fusedops.fused_add_rms_norm(x, torch.randn_like(x), w)


def fused_add_moving_about_the_l2(dtype: torch.dtype, hidden: int) -> None:
    """On sm_90 the 16-bit fused add's streamed, re-reading build (kStreamAdd,
    stream_add_planned): a batch of 1024-thread rows whose reads and writes are 16/15
    of the L2 (the band is 3/4 to 7/4 of it), at a full row (16384) and at one with the
    last warp's slots past it (16000, bounds-checked)."""
    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    moved = props.L2_cache_size * 16 // 15
    w = torch.randn(hidden, dtype=dtype, device="cuda")
    x = torch.randn(moved // (4 * hidden * dtype.itemsize) + 1, hidden, dtype=dtype, device="cuda")
    fusedops.fused_add_rms_norm(x, torch.randn_like(x), w)


def rows_past_the_l2() -> None:
    norms_past_the_l2(torch.bfloat16, 4096)
    norms_past_the_l2(torch.bfloat16, 16384)


def float32_rows_past_the_l2() -> None:
    norms_past_the_l2(torch.float32, 2048)
    norms_past_the_l2(torch.float32, 16384)
    norms_past_the_l2(torch.float32, 8192)


def rows_moving_about_the_l2() -> None:
    fused_add_moving_about_the_l2(torch.bfloat16, 16384)
    fused_add_moving_about_the_l2(torch.bfloat16, 16000)


def fp16_rows_moving_about_the_l2() -> None:
    fused_add_moving_about_the_l2(torch.float16, 16384)


def fp16_rows_past_the_l2() -> None:
    norms_past_the_l2(torch.float16, 2048)


def held_split_launch() -> None:
    """A split launch held to two even waves with dynamic shared memory it does not use
    (hold_clusters_to): fp16 256 x 16384 on an H100, whose split halves fit three an SM,
    a tail of 58 clusters past the 198 resident."""
    x = torch.randn(256, 16384, dtype=torch.float16, device="cuda")
    w = torch.randn(16384, dtype=torch.float16, device="cuda")
    fusedops.fused_add_rms_norm(x, torch.randn_like(x), w)


# Forward-only parts past the loop, each run with one dtype's part of the workload (so
# once in all, as racecheck's per-dtype runs keep the whole under one process's memory):
# keyed by dtype, a part cannot run in every dtype's process by accident.
ONE_DTYPE_PARTS: dict[str, tuple[Callable[[], None], ...]] = {
    "bfloat16": (rows_past_the_l2, rows_moving_about_the_l2),
    "float16": (held_split_launch, fp16_rows_past_the_l2, fp16_rows_moving_about_the_l2),
    "float32": (float32_rows_past_the_l2,),
}


def main(dtype_names: tuple[str, ...] = DTYPES) -> None:
    checked = 0
    for dtype in [getattr(torch, name) for name in dtype_names]:
        for rows, hidden in (
            (1, 1),
            (3, 7),
            (5, 64),
            # One row: the backward's one-block grid writes grad_weight itself;
            # at 2048 with no scratch at all (a null pointer reaches the kernel).
            # 16-bit 2048 (both ops) and 4096 (the fused add): the forward's
            # unchecked 8-warp latency kernels; 2040 and 4000 leave a thread slot of
            # those blocks idle, so they take the checked ones.
            (1, 2048),
            (1, 4096),
            (2, 4096),
            (1, 2040),
            (2, 4000),
            (2, 12288),
            # 1024-thread single-pass blocks at a few rows: the forward's cluster
            # kernel on sm_90+ (8 blocks a row at 2 rows; 2 at 40 rows on 132 SMs).
            (2, 16384),
            (40, 16384),
            # 100 rows: the latency build, too many rows for a cluster on 132 SMs;
            # 16-bit 8192 (fused add) and 16384 take its unchecked kernels.
            (100, 8192),
            (100, 16384),
            # 16-bit 16384 at 200 rows: the fused add's 1024-thread blocks (2 vectors
            # a thread) fit one an SM, so on an H100 a wave and a tail, split over
            # 2-block clusters (so is 300 x 8192 below, two 512-thread blocks an SM).
            (200, 16384),
            # 16-bit rows of 2049-4096 vectors: the fused add at 4 vectors a
            # thread with its weight loaded late (a cluster at 2 rows on
            # sm_90+), 60 thread slots past the row; at 200 rows (between one
            # and two times the SMs of an H100) split over 2-block clusters.
            (2, 20000),
            (200, 20000),
            (300, 20000),
            (3, 40000),
            (1, 65536),
            # More rows than any GPU has SMs. 300: one wave of latency blocks
            # on an H100, which takes the latency build for most blocks, several
            # a SM; 1200: past that wave, the forward's occupancy build (the
            # shapes above take the one-row-per-SM latency build). One row per
            # block still: the scratch parity only alternates past 2^30 rows.
            (300, 4096),
            (1200, 4096),
            # Long backward rows, several a block: fp32 12288 and 16384 in the register
            # kernel at 8 vectors a thread; the two-pass kernel for double 6144, and
            # double 8192 (16-warp blocks) with its floor of 8 rows a block. 8196 and
            # 4098 leave thread slots idle (fp32 C = 8: 288 threads for 2049 vectors;
            # double two-pass likewise). fp32 16384's forward: rms_norm reads x twice
            # on sm_90 (two 1024-thread blocks an SM).
            (300, 12288),
            (300, 6144),
            (300, 16384),
            (300, 8192),
            (300, 8196),
            (300, 4098),
        ):
            x = torch.randn(rows, hidden, dtype=dtype, device="cuda", requires_grad=True)
            r = torch.randn_like(x, requires_grad=True)
            w = torch.randn(hidden, dtype=dtype, device="cuda", requires_grad=True)
            out, res = fusedops.fused_add_rms_norm(x, r, w)
            (fusedops.rms_norm(x, w).sum() + out.sum() + res.sum()).backward()
            xu = misaligned(rows, hidden, dtype)
            reaches_kernel_misaligned(xu, lambda xu=xu, w=w: fusedops.rms_norm(xu, w.detach()))
            checked += 1
            if hidden % 2 == 0:
                g = x.detach().clone().requires_grad_()
                fusedops.silu_and_mul(g).sum().backward()
                reaches_kernel_misaligned(xu, lambda xu=xu: fusedops.silu_and_mul(xu))
    with torch.no_grad():
        for name in dtype_names:
            for part in ONE_DTYPE_PARTS.get(name, ()):
                part()
    torch.cuda.synchronize()
    print(
        f"sanitize smoke ({', '.join(dtype_names)}): all ops ran; {checked} misaligned inputs"
        " reached the kernels uncopied"
    )


def parse_dtypes(argv: list[str] | None = None) -> tuple[str, ...]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--dtype",
        action="append",
        choices=DTYPES,
        help="run this dtype's part only (repeatable; default: every dtype)",
    )
    names = parser.parse_args(argv).dtype
    return tuple(dict.fromkeys(names)) if names else DTYPES


if __name__ == "__main__":
    main(parse_dtypes())
