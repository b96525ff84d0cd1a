"""The CUDA forward picks its kernel and block shape from the row length: test each side of each edge.

Single-pass kernel: 1 vector (16 bytes) per thread up to 256, then 2 up to 1024 threads,
(float32 rms_norm: 4 from 1024 vectors; its unchecked latency build at 8 and
16 warps loads the weight late), then 4 (rms_norm, and the fused add with its
weight loaded late; the float64 fused add stops at 2), then
the two-pass kernel; rows that are not whole 16-byte vectors take the scalar
kernel. Hidden sizes below are in elements; a bf16/fp16 vector holds 8, fp32 4.
The single-pass kernel has a build for at most one row per SM (latency) and
one for more rows (occupancy); both must give the same bits. A batch of more
rows than SMs whose latency blocks all fit on the GPU at once takes the latency
build too, unless its block has 1 vector a thread or loads the weight late as
float32 rms_norm's 8- and 16-warp blocks and the fused add's 4-vector blocks do
(the fused add's 2-vector latency blocks of 16 and 32 warps in 16-bit and 32 in
float32 load it late on sm_90+ and keep the latency build; so do rms_norm's
32-warp ones in fp16 and float32, which fit one an SM and so never run past the
SM count).
float32 rows of 2 or 4 vectors a thread that fill a block of 8, 16 or 32 warps exactly
(power-of-two hidden 2048-16384) take a build without bounds checks, and so
do 16-bit rows that fill their block in the latency build for the fused add at
8 (1 or 2 vectors a thread), 16 and 32 warps and rms_norm at 8 warps of 1 vector
a thread and at 32 (UNCHECKED_16_BIT below); every other row keeps them.
Batches of more rows than the L2 holds take builds that prefetch rows ahead
into the L2 where an SM holds few warps of them (rms_norm; on sm_90 the 16-bit
fused add there runs at 4 vectors a thread in the order of 2 at an even warp
count); they too must give the same bits. On sm_90 16-bit rms_norm rows
that the plan gives 2 vectors a thread and an even warp count run at 4 in half
the threads, adding in the same order, in such batches and in the occupancy
build's batches of 32-warp blocks (HALVES_BATCH below). On sm_90+
a few long rows run split over a thread block cluster (CLUSTER below), and so do
16-bit fused-add rows of 1024-4096 vectors (blocks of 512+ threads) in batches of one
to two waves of their single-pass blocks (WAVE_AND_TAIL), with the same bits again;
at 2 vectors a thread a long tail of those clusters is held to two even waves
(HELD_SPLIT). On sm_90 a 16-bit fused add of 1024-thread rows that reads and writes 3/4
to 7/4 of the L2 streams its inputs and reads its stored sum back (STREAM_ADD_ROWS), and
rows whose C = 2 plan fills 1024-thread blocks read evict_last past the L2 only beyond
3/2 of it (LONG_ROWS), with the same bits.
"""

from __future__ import annotations

import json
import re
import tempfile
from collections.abc import Sequence
from pathlib import Path

import pytest
import torch
from helpers import assert_close, kernels_of, randn, ref_rms_norm, rounding_addends
from torch import Tensor

import fusedops

pytestmark = pytest.mark.gpu

EPS = 1e-6
HIDDEN = {
    # 128 threads x 1; 1024 x 2 (last C=2); 2049 vectors (C=4, the fused add
    # with the late weight); 1024 x 4 (last single-pass row); 4097 vectors
    # (two-pass); not whole vectors.
    torch.bfloat16: [1024, 16384, 16392, 32768, 32776, 16388],
    torch.float16: [16384, 16392, 32776],
    # 128 and 256 x 1 vector (4 and 8 warps, checked); 256 x 2 (8 warps, no
    # bounds checks); 1023 vectors (rms_norm C=2), 1024 (rms_norm C=4 from
    # here); 1024 x 2 for the fused add (512 x 4 for rms_norm); 2049 vectors
    # (C=4, fused add with the late weight); 1024 x 4; 4097 vectors; not whole
    # vectors.
    torch.float32: [512, 1024, 2048, 4092, 4096, 8192, 8196, 16384, 16388, 8190],
}
CASES = [(dtype, hidden) for dtype, hiddens in HIDDEN.items() for hidden in hiddens]


def sm_count() -> int:
    return torch.cuda.get_device_properties(0).multi_processor_count


def occupancy_batch(dtype: torch.dtype, hidden: int) -> int:
    """A batch of rows of `hidden` that takes the single-pass kernel's occupancy build
    for both ops: more blocks than the GPU holds at once (no GPU holds more than 2048
    threads an SM). A smaller batch of more rows than SMs may take the latency build
    (latency_build_in_one_wave in rms_norm.cu)."""
    threads = [t for add in (False, True) if (t := single_pass_threads(dtype, hidden, add))]
    return sm_count() * (2048 // min(threads, default=2048)) + 1


def norm_inputs(rows: int, hidden: int, dtype: torch.dtype) -> tuple[Tensor, Tensor, Tensor]:
    """x, the residual and the weight of a forward test: the same values in every test."""
    x = randn(rows, hidden, dtype=dtype, device="cuda")
    r = randn(rows, hidden, dtype=dtype, device="cuda", seed=2)
    w = randn(hidden, dtype=dtype, device="cuda", seed=1)
    return x, r, w


def forwards(x: Tensor, r: Tensor, w: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """Both forward ops on the same rows: rms_norm's output, then the fused add's
    output and residual sum."""
    return (fusedops.rms_norm(x, w, EPS), *fusedops.fused_add_rms_norm(x, r, w, EPS))


BITS = {1: torch.int8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


def assert_same_bits(got: Sequence[Tensor], want: Sequence[Tensor], where: str) -> None:
    """Each output of `forwards` bit for bit equal to the other run's, compared as
    integers (assert_close alone would take -0 for +0); `where` names the rows."""
    assert len(got) == len(want)
    names = ("rms_norm", "fused add out", "fused add residual")
    for name, g, e in zip(names, got, want, strict=True):
        bits = BITS[g.element_size()]
        torch.testing.assert_close(
            g.view(bits), e.view(bits), rtol=0, atol=0, msg=lambda m, n=name: f"{n}, {where}: {m}"
        )


@pytest.mark.parametrize(("dtype", "hidden"), CASES, ids=str)
@pytest.mark.parametrize("rows", [1, 3, "more-than-SMs", "occupancy"])
def test_forward_at_plan_edges(dtype: torch.dtype, hidden: int, rows: int | str) -> None:
    if rows == "more-than-SMs":
        rows = sm_count() + 1
    elif rows == "occupancy":
        rows = occupancy_batch(dtype, hidden)
    x, r, w = norm_inputs(rows, hidden, dtype)
    # Poison the memory the outputs will be allocated from: an element the
    # kernel does not write stays NaN and fails the comparison.
    poison = torch.full((3 * rows * hidden,), float("nan"), dtype=dtype, device="cuda")
    del poison
    assert_close(fusedops.rms_norm(x, w, EPS), ref_rms_norm(x, w, EPS), dtype)
    out, res = fusedops.fused_add_rms_norm(x, r, w, EPS)
    torch.testing.assert_close(res, x + r, rtol=0, atol=0)
    assert_close(out, ref_rms_norm(x + r, w, EPS), dtype)


# Single-pass shapes only (the two-pass and scalar kernels have one build): a
# power-of-two warp count and others (17 and 9 warps, with a partial last
# vector: the zero padding of the short reduction and the out-of-row vectors),
# and every vectors-per-thread count of each dtype.
SAME_BITS = [
    (torch.bfloat16, 2048),  # C=1, 8 warps
    (torch.bfloat16, 4096),  # C=2, 8 warps
    (torch.bfloat16, 8200),  # C=2, 17 warps, last thread short
    (torch.bfloat16, 16384),  # C=2, 32 warps
    (torch.bfloat16, 24576),  # C=4, 24 warps (the fused add with the late weight)
    (torch.float16, 4096),
    (torch.float16, 8200),
    (torch.float16, 20000),  # C=4, 20 warps, 60 slots past the row
    (torch.float32, 1000),  # C=1, 8 warps, 6 threads past the row
    (torch.float32, 2048),  # C=2, 8 warps, no bounds checks
    # rms_norm C=4 at 8 and 16 warps: the one-row latency build loads the weight
    # late, the batch's occupancy build early; the fused add C=2 at 16 and 32
    # warps, whose occupancy build is held to 32 registers on sm_80/sm_90.
    (torch.float32, 4096),
    (torch.float32, 4100),  # rms_norm C=4 with 9 warps; fused add C=2
    (torch.float32, 8192),
    (torch.float32, 16384),  # C=4, 32 warps (the weight late: fused add; sm_90+ latency)
    (torch.float64, 1000),  # C=2
    (torch.float64, 8192),  # rms_norm C=4; fused add two-pass
]


@pytest.mark.parametrize(("dtype", "hidden"), SAME_BITS, ids=str)
def test_a_row_gets_the_same_bits_in_any_batch(dtype: torch.dtype, hidden: int) -> None:
    """One row alone (the latency build, or on sm_90+ the cluster kernel for long rows)
    and inside a batch of more rows than the GPU holds blocks at once (the occupancy
    build) must give bit-identical outputs."""
    rows = occupancy_batch(dtype, hidden) + 4
    x, r, w = norm_inputs(rows, hidden, dtype)
    batch = forwards(x, r, w)
    for k in (0, rows // 2, rows - 1):
        one = slice(k, k + 1)
        assert_same_bits(forwards(x[one], r[one], w), [b[one] for b in batch], f"row {k} alone")


# Batches whose rows are more than the L2 holds: past_l2_plan in rms_norm.cu
# prefetches rows ahead into the L2 only for rms_norm where the occupancy build
# leaves an SM at most 24 warps; there the 16-bit fused add at an even warp count
# runs in C = 2's order at C = 4 (on sm_90), and the fused add never prefetches.
# Which builds those are follows from their registers, so the kernels each case
# launches on sm_90 (ptxas of CUDA 13.0) are listed: (rms_norm prefetches, the
# fused add runs in C = 2's order, rms_norm reads x evict_last, the fused add reads
# x and the residual evict_last). 16-bit rms_norm at an even warp count runs in
# C = 2's order there (halves_planned); in blocks of fewer than 1024 threads,
# rms_norm reads x evict_last at C >= 2 where it does not prefetch, and the fused
# add its inputs at C <= 2 where it does not run in C = 2's order
# (evict_last_x_planned), where that build keeps the warps an SM holds or more than
# 24 (evict_last_keeps_warps; the kHalves builds too); rows whose C = 2 plan fills
# 1024-thread blocks only past 3/2 of the L2 (evict_last_pays; these batches read 2 or
# 4 L2s). float32 rms_norm rows of full
# 1024-thread blocks (hidden 16384) read x twice, evict_last first (reread_planned).
# Other archs check the bits only.
PAST_L2 = {  # (dtype, hidden): on sm_90
    (torch.bfloat16, 2048): (False, False, False, True),  # C = 1, 8 blocks of 8 warps an SM
    (torch.bfloat16, 4096): (False, False, True, True),  # fused add: 4 blocks of 8 warps
    # fp16 fused add: 5 blocks of 8 warps, 4 with evict_last (56 registers): 32 warps > 24
    (torch.float16, 4096): (False, False, True, True),
    (torch.bfloat16, 8200): (False, False, True, True),  # 17 warps: 3 / 2 blocks an SM
    (torch.bfloat16, 10240): (False, True, True, False),  # fused add: one block of 20 warps
    # 22 warps, the row short of the block; rms_norm's kHalves build of 11 warps holds 33
    # an SM, 22 with evict_last (59 registers): plain
    (torch.bfloat16, 11200): (False, True, False, False),
    # fused add: two blocks of 20 warps; its evict_last build (56 registers) would hold one
    (torch.float16, 10240): (False, False, True, False),
    # fused add: one block of 24 warps; rms_norm's kHalves build of 12 warps holds 36 an
    # SM, 24 with evict_last (61 registers): plain
    (torch.float16, 12288): (False, True, False, False),
    # fused add: C = 2 in 32 warps, evict_last as its reads are past 3/2 of the L2
    (torch.float16, 16384): (False, False, True, True),
    (torch.float32, 2048): (False, False, True, True),  # 8 blocks of 8 warps
    (torch.float32, 4096): (False, False, True, True),  # C = 4, 4 blocks of 8 warps, kFull
    (torch.float32, 6144): (False, False, True, True),  # the fused add: one block of 24 warps
    (torch.float32, 8192): (False, False, True, True),  # the fused add: C = 2 in 32 warps
    (torch.float32, 10240): (True, False, False, False),  # one block of 20 warps (the add: C = 4)
    # one 1024-thread block an SM holding the row; rms_norm re-reads x instead, two blocks an
    # SM (REREAD_ROWS)
    (torch.float32, 16384): (False, False, True, False),
}


def halves_planned(dtype: torch.dtype, hidden: int, past_l2: bool) -> bool:
    """Whether rms_norm runs a batch (not one wave of the latency build) of these rows
    at 4 vectors a thread in C = 2's order (halves_planned in rms_norm.cu)."""
    threads = single_pass_threads(dtype, hidden, add=False)
    nvec = hidden * dtype.itemsize // 16
    c2_even = dtype.itemsize == 2 and 256 < nvec <= 2048 and (threads // 32) % 2 == 0
    hopper = torch.cuda.get_device_capability()[0] == 9
    return hopper and c2_even and (past_l2 or threads == 1024)


SINGLE_PASS = re.compile(r"rms_norm_fwd_single_pass_kernel<([^<>]*)>")
FLAG = {"true": True, "1": True, "false": False, "0": False}


def single_pass_args(names: list[str]) -> list[list[str]]:
    """The template arguments <T, C, kAdd, kFewRows, kWarps, kFull, kPrefetch, kHalves,
    kEvictLastX, kReread, kStreamAdd> of each single-pass forward kernel among `names`
    (kernels_of's demangled names)."""
    found = (SINGLE_PASS.search(name) for name in names)
    return [[arg.strip() for arg in m.group(1).split(",")] for m in found if m]


# Where single_pass_args finds the bool template arguments the tests read.
FEW_ROWS = 3
PREFETCH = 6
HALVES = 7
EVICT_LAST_X = 8
REREAD = 9
STREAM_ADD = 10


def single_pass_flags(call, index: int) -> list[bool]:
    """One bool template argument (FEW_ROWS: kFewRows, the latency build; PREFETCH:
    kPrefetch; HALVES: kHalves; EVICT_LAST_X: kEvictLastX; REREAD: kReread; STREAM_ADD:
    kStreamAdd) of each single-pass forward kernel `call` launches, from the demangled
    names torch.profiler records."""
    names = kernels_of(call)
    flags = []
    for args in single_pass_args(names):
        assert args[index] in FLAG, f"argument {index} of <{', '.join(args)}> is not a bool"
        flags.append(FLAG[args[index]])
    assert flags, f"no single-pass forward kernel among the profiled kernels {names}"
    return flags


@pytest.mark.parametrize(("dtype", "hidden"), list(PAST_L2), ids=str)
def test_rows_past_the_l2_get_the_same_bits(dtype: torch.dtype, hidden: int) -> None:
    """A batch of twice the L2 (past_l2_plan) against the same rows in batches of at
    most one row per SM (the latency build or its cluster split, no prefetch): every
    bit the same, the rows near the end (which prefetch nothing) included."""
    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    row_bytes = hidden * dtype.itemsize
    rows = 2 * props.L2_cache_size // row_bytes + 3
    x, r, w = norm_inputs(rows, hidden, dtype)
    batch = forwards(x, r, w)
    chunk = props.multi_processor_count
    chunks = [forwards(x[k : k + chunk], r[k : k + chunk], w) for k in range(0, rows, chunk)]
    assert_same_bits(
        [torch.cat(parts) for parts in zip(*chunks, strict=True)], batch, f"{chunk}-row chunks"
    )
    assert_close(batch[0], ref_rms_norm(x, w, EPS), dtype)
    for flag in (PREFETCH, EVICT_LAST_X, REREAD):
        assert single_pass_flags(forward_call(x[:chunk], None, w), flag) == [False]
        assert single_pass_flags(forward_call(x[:chunk], r[:chunk], w), flag) == [False]
    if torch.cuda.get_device_capability() != (9, 0):
        return

    # A prefetch or a cache policy cannot change a result, so the bits alone do not
    # show which builds ran: the kernel names do.
    rms_prefetches, add_halves, rms_evict_last, add_evict_last = PAST_L2[(dtype, hidden)]
    assert single_pass_flags(forward_call(x, None, w), PREFETCH) == [rms_prefetches]
    rms_halves = halves_planned(dtype, hidden, past_l2=True)
    assert single_pass_flags(forward_call(x, None, w), HALVES) == [rms_halves]
    assert single_pass_flags(forward_call(x, None, w), EVICT_LAST_X) == [rms_evict_last]
    rereads = reread_planned(dtype, hidden)
    assert single_pass_flags(forward_call(x, None, w), REREAD) == [rereads]
    add = single_pass_args(kernels_of(forward_call(x, r, w)))
    assert len(add) == 1, add
    assert not FLAG[add[0][REREAD]], add[0]
    assert (FLAG[add[0][PREFETCH]], FLAG[add[0][HALVES]]) == (False, add_halves), add[0]
    assert FLAG[add[0][EVICT_LAST_X]] == add_evict_last, add[0]
    if add_halves:  # at a runtime warp count, 4 vectors a thread
        assert (add[0][1], add[0][4]) == ("4", "0"), add[0]


def rows_at(fraction: tuple[int, int, int], row_bytes: int) -> int:
    """The rows of `row_bytes` each in (numerator, denominator, extra): numerator /
    denominator of this GPU's L2, rounded down, and `extra` rows more."""
    num, den, extra = fraction
    l2 = torch.cuda.get_device_properties(torch.cuda.current_device()).L2_cache_size
    return l2 * num // den // row_bytes + extra


# Rows whose C = 2 plan fills 1024-thread blocks (16-bit hidden 16384, float32 8192) read
# evict_last past the L2 only where the call reads more than 3/2 of it (evict_last_pays in
# rms_norm.cu): the fused add's C = 2 build and 16-bit rms_norm's kHalves build, at 5/4
# and at 3/2 of the L2 read plainly, a row past 3/2 and at 2 L2s evict_last. Narrower rows
# (bf16 8192) read evict_last at all four. On sm_90; other archs check the bits only.
LONG_ROWS = [  # (dtype, hidden, add, whether the rows are long)
    (torch.bfloat16, 16384, True, True),
    (torch.float32, 8192, True, True),
    (torch.float16, 16384, False, True),
    (torch.bfloat16, 8192, True, False),
]
# name: (numerator, denominator, rows added to the fraction's rows, rounded down)
READ_FRACTIONS = {
    "5/4 of the L2": (5, 4, 1),
    "3/2 of it": (3, 2, 0),
    "a row past 3/2": (3, 2, 1),
    "2 L2s": (2, 1, 1),
}


@pytest.mark.parametrize("reads", list(READ_FRACTIONS))
@pytest.mark.parametrize(("dtype", "hidden", "add", "long_rows"), LONG_ROWS, ids=str)
def test_rows_of_1024_thread_blocks_read_evict_last_only_well_past_the_l2(
    dtype: torch.dtype, hidden: int, add: bool, long_rows: bool, reads: str
) -> None:
    rows = rows_at(READ_FRACTIONS[reads], hidden * dtype.itemsize * (2 if add else 1))
    x, r, w = norm_inputs(rows, hidden, dtype)
    if torch.cuda.get_device_capability() == (9, 0):
        assert single_pass_threads(dtype, hidden, add) == (1024 if long_rows else 512)
        launched = single_pass_args(kernels_of(forward_call(x, r if add else None, w)))
        assert len(launched) == 1, launched
        expected = not long_rows or reads in ("a row past 3/2", "2 L2s")
        assert FLAG[launched[0][EVICT_LAST_X]] == expected, launched[0]
        flags = (FEW_ROWS, PREFETCH, REREAD, STREAM_ADD) + ((HALVES,) if add else ())
        assert not any(FLAG[launched[0][f]] for f in flags), launched[0]
        if not add:  # 4 vectors a thread in C = 2's order, 16 warps
            assert FLAG[launched[0][HALVES]] and launched[0][1] == "4", launched[0]
    assert_batch_bits_match_smaller_batches(x, r, w, dtype)


def assert_batch_bits_match_smaller_batches(
    x: Tensor, r: Tensor, w: Tensor, dtype: torch.dtype
) -> None:
    """Both forward ops on the whole batch against its first sm_count rows (the
    latency build) and its last row alone (on sm_90+ the cluster kernel): every bit
    the same; and rms_norm's batch close to the reference."""
    sms, rows = sm_count(), x.shape[0]
    batch = forwards(x, r, w)
    for part in (slice(0, sms), slice(rows - 1, rows)):
        got = forwards(x[part], r[part], w)
        assert_same_bits(got, [b[part] for b in batch], f"rows {part.start}-{part.stop - 1}")
    assert_close(batch[0], ref_rms_norm(x, w, EPS), dtype)


def reread_planned(dtype: torch.dtype, hidden: int) -> bool:
    """Whether rms_norm's batches of more rows than SMs read x twice on sm_90
    (reread_planned in rms_norm.cu): float32 rows that fill 1024-thread blocks at 4
    vectors a thread. The plan also asks that the build hold two blocks an SM, which
    the wheel's sm_90 code does (32 registers), so on sm_90 the flag asserts that too."""
    nvec = hidden * dtype.itemsize // 16
    return dtype == torch.float32 and nvec == 4 * 1024


# float32 rms_norm rows of full 1024-thread blocks in batches the L2 holds: the
# re-reading build without evict_last on sm_90; the held row at as many rows as SMs
# (the latency build), and for rows that do not fill a 1024-thread block or fill a
# smaller one. Bits: the batch against as many rows as SMs and a row alone (on
# sm_90+ the cluster kernel).
REREAD_ROWS = [  # (dtype, hidden)
    (torch.float32, 16384),  # 1024 threads x 4 vectors, full: re-read
    (torch.float32, 16380),  # 1024 threads, the last thread one vector short: held
    (torch.float32, 8192),  # 512 threads x 4 vectors, full: held
]


@pytest.mark.parametrize(("dtype", "hidden"), REREAD_ROWS, ids=str)
def test_a_batch_of_full_1024_thread_float32_rows_reads_x_twice_on_sm90(
    dtype: torch.dtype, hidden: int
) -> None:
    sms = sm_count()
    rows = occupancy_batch(dtype, hidden) + 4
    x, r, w = norm_inputs(rows, hidden, dtype)
    if torch.cuda.get_device_capability() == (9, 0):
        props = torch.cuda.get_device_properties(torch.cuda.current_device())
        assert rows * hidden * dtype.itemsize <= props.L2_cache_size, "not a batch the L2 holds"
        launched = single_pass_args(kernels_of(forward_call(x, None, w)))
        assert len(launched) == 1, launched
        rereads = reread_planned(dtype, hidden)
        assert FLAG[launched[0][REREAD]] == rereads, launched[0]
        assert not FLAG[launched[0][EVICT_LAST_X]], launched[0]
        if rereads:  # C = 4, 32 warps, kFull; the occupancy build
            assert (launched[0][1], launched[0][4]) == ("4", "32"), launched[0]
            assert FLAG[launched[0][5]] and not FLAG[launched[0][FEW_ROWS]], launched[0]
    assert single_pass_flags(forward_call(x[:sms], None, w), REREAD) == [False]
    assert_batch_bits_match_smaller_batches(x, r, w, dtype)


# The 16-bit fused add in 1024-thread rows (hidden 15880-16384), in a batch whose reads and
# writes are more than 3/4 of the L2 and at most 7/4 of it, reads its inputs as streamed
# and its stored residual sum again on sm_90 (stream_add_planned in rms_norm.cu): a row past
# 3/4 and at 7/4 it does; at 3/4, a row past 7/4, for rms_norm, float32 and rows of fewer
# threads it does not. (The band's rows are more than two waves of 1024-thread blocks on an
# H100 too, past the wave split's batches.)
# 16000: the last warp's slots past the row (the bounds-checked build either way).
STREAM_ADD_ROWS = [  # (dtype, hidden, add)
    (torch.bfloat16, 16384, True),
    (torch.float16, 16384, True),
    (torch.bfloat16, 16000, True),
    (torch.bfloat16, 16384, False),
    (torch.bfloat16, 8192, True),
    (torch.float32, 8192, True),
]
# name: (numerator, denominator, rows added to the fraction's rows, rounded down)
L2_FRACTIONS = {
    "3/4 of it": (3, 4, 0),
    "a row past 3/4": (3, 4, 1),
    "7/4 of it": (7, 4, 0),
    "a row past 7/4": (7, 4, 1),
}


def stream_add_planned(rows: int, hidden: int, dtype: torch.dtype, add: bool) -> bool:
    """Whether a batch runs the streamed, re-reading build: stream_add_planned's rule."""
    if torch.cuda.get_device_capability()[0] != 9 or dtype.itemsize != 2 or not add:
        return False
    if single_pass_threads(dtype, hidden, add) != 1024:
        return False
    l2 = torch.cuda.get_device_properties(torch.cuda.current_device()).L2_cache_size
    moved = rows * hidden * dtype.itemsize * 4
    return 3 * l2 < 4 * moved <= 7 * l2


@pytest.mark.parametrize("moved", list(L2_FRACTIONS))
@pytest.mark.parametrize(("dtype", "hidden", "add"), STREAM_ADD_ROWS, ids=str)
def test_a_16_bit_fused_add_moving_about_the_l2_streams_and_rereads_on_sm90(
    dtype: torch.dtype, hidden: int, add: bool, moved: str
) -> None:
    rows = rows_at(L2_FRACTIONS[moved], hidden * dtype.itemsize * (4 if add else 2))
    x, r, w = norm_inputs(rows, hidden, dtype)
    expected = stream_add_planned(rows, hidden, dtype, add)
    if torch.cuda.get_device_capability() == (9, 0):
        in_band = moved in ("a row past 3/4", "7/4 of it")
        planned = dtype.itemsize == 2 and add and hidden > 8192 and in_band
        assert expected == planned, (rows, moved)
    launched = single_pass_args(kernels_of(forward_call(x, r if add else None, w)))
    assert len(launched) == 1, launched
    assert FLAG[launched[0][STREAM_ADD]] == expected, launched[0]
    if expected:  # C = 2, 32 warps, the bounds-checked build, no other plan's flags
        assert (launched[0][1], launched[0][4]) == ("2", "32"), launched[0]
        assert not FLAG[launched[0][5]], launched[0]  # kFull
        flags = (FEW_ROWS, PREFETCH, HALVES, EVICT_LAST_X, REREAD)
        assert not any(FLAG[launched[0][f]] for f in flags), launched[0]
    sms = sm_count()
    assert single_pass_flags(forward_call(x[:sms], r[:sms] if add else None, w), STREAM_ADD) == [
        False
    ]
    assert_batch_bits_match_smaller_batches(x, r, w, dtype)


# 16-bit rms_norm rows of C = 2 blocks of 32 warps (hidden 16384) in a batch past
# one wave of the latency build, and below the L2: the occupancy build's batches,
# which run at 4 vectors a thread in C = 2's order on sm_90 (halves_planned); rows
# of 16-warp blocks (8192) keep C = 2 there, and so do as many rows as SMs (the
# latency build of the few-row path). The bits of every plan must agree: the
# batch, as many rows as SMs, and a row alone (on sm_90+ the cluster kernel).
HALVES_BATCH = [  # (dtype, hidden)
    (torch.bfloat16, 16384),
    (torch.float16, 16384),
    (torch.bfloat16, 8192),
]


@pytest.mark.parametrize(("dtype", "hidden"), HALVES_BATCH, ids=str)
def test_a_batch_of_long_16_bit_rows_runs_in_c2_order_on_sm90(
    dtype: torch.dtype, hidden: int
) -> None:
    sms = sm_count()
    rows = occupancy_batch(dtype, hidden)
    x, r, w = norm_inputs(rows, hidden, dtype)
    launched = single_pass_args(kernels_of(forward_call(x, None, w)))
    assert len(launched) == 1, launched
    halves = halves_planned(dtype, hidden, past_l2=False)
    assert FLAG[launched[0][HALVES]] == halves, launched[0]
    if halves:
        threads = single_pass_threads(dtype, hidden, add=False)
        assert (launched[0][1], launched[0][4]) == ("4", str(threads // 64)), launched[0]
    assert single_pass_flags(forward_call(x[:sms], None, w), HALVES) == [False]
    assert_batch_bits_match_smaller_batches(x, r, w, dtype)


# A few rows whose single-pass block has 512 threads or more (the fused add) or
# 640 and a warp count 4 divides (rms_norm) run split over a thread block cluster
# on sm_90+ (rms_norm_fwd_cluster_kernel): K = 8 blocks a row for the 1024-thread
# blocks of the fused add and float32 rms_norm up to sm_count / 16 rows, else 4,
# then 2 while the rows' blocks fit on the SMs. On a GPU of 132 SMs the rows
# below reach every K (1 and 8 rows: K = 8 or 4; 9-33 rows: 4; 34-66 rows: 2;
# 67 rows: the single-pass kernel). The expected K ignores clusters_fit: on a
# device where a cluster cannot be resident (partitioned) this test fails.
CLUSTER = [
    (torch.bfloat16, 16384),  # C = 2, 32 warps
    (torch.bfloat16, 32768),  # C = 4, 32 warps
    (torch.float16, 20000),  # C = 4, 20 warps, 60 slots past the row
    (torch.bfloat16, 12000),  # C = 2, 24 warps (a short second level), 36 slots past the row
    (torch.float16, 8192),  # fused add C = 2, 16 warps (rms_norm: single pass)
    (torch.float32, 5000),  # fused add C = 2, 20 warps, 30 slots past the row
    (torch.float32, 16384),  # C = 4, 32 warps (the single-pass fused add loads its weight late)
]
CLUSTER_KERNEL = re.compile(r"rms_norm_fwd_cluster_kernel<([^<>]*)>")


def cluster_blocks(call) -> list[int]:
    """K, the blocks a row, of each cluster forward kernel `call` launches (its last
    template argument), from the kernel names torch.profiler records."""
    return [
        int(m.group(1).split(",")[-1]) for m in map(CLUSTER_KERNEL.search, kernels_of(call)) if m
    ]


def forward_call(x: torch.Tensor, residual: torch.Tensor | None, w: torch.Tensor):
    if residual is None:
        return lambda: fusedops.rms_norm(x, w, EPS)
    return lambda: fusedops.fused_add_rms_norm(x, residual, w, EPS)


def expected_cluster_blocks(rows: int, threads: int, add: bool, dtype: torch.dtype) -> int:
    """cluster_split's K (1: the single-pass kernel, or none for threads = 0)."""
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    warps = threads // 32
    if threads < (512 if add else 640) or (not add and warps % 4):
        return 1
    if threads == 1024 and (add or dtype == torch.float32) and rows * 16 <= sms:
        return 8
    return next((k for k in (4, 2) if warps % k == 0 and rows * k <= sms), 1)


def single_pass_threads(dtype: torch.dtype, hidden: int, add: bool) -> int:
    """The single-pass kernel's block size for a row (launch_fwd_single_pass), 0 for
    rows too long for it."""
    nvec = hidden * dtype.itemsize // 16
    if nvec > (2 if add and dtype.itemsize == 8 else 4) * 1024:
        return 0
    c = 1 if nvec <= 256 else 2
    if dtype == torch.float32 and not add and nvec >= 1024:
        c = 4
    while nvec > c * 1024:
        c *= 2
    threads = (nvec + c - 1) // c
    return max(32, (threads + 31) // 32 * 32)


@pytest.mark.parametrize(("dtype", "hidden"), CLUSTER, ids=str)
def test_few_rows_split_over_a_cluster_get_the_same_bits(dtype: torch.dtype, hidden: int) -> None:
    """Rows run across a cluster of K blocks give every bit the single-pass kernel
    gives the same rows in a batch of more rows than SMs, for every K; and the
    cluster kernel ran with the K the plan gives (the bits alone cannot show it)."""
    if torch.cuda.get_device_capability()[0] < 9:
        pytest.skip("thread block clusters need sm_90 or newer")
    x, r, w = norm_inputs(occupancy_batch(dtype, hidden), hidden, dtype)
    batch = forwards(x, r, w)
    assert cluster_blocks(lambda: fusedops.rms_norm(x, w, EPS)) == []
    for rows in (1, 8, 9, 33, 34, 66, 67):
        assert_same_bits(forwards(x[:rows], r[:rows], w), [b[:rows] for b in batch], f"{rows} rows")
        for add in (False, True):
            k = expected_cluster_blocks(rows, single_pass_threads(dtype, hidden, add), add, dtype)
            launched = cluster_blocks(forward_call(x[:rows], r[:rows] if add else None, w))
            assert launched == ([k] if k > 1 else []), (rows, add)
    assert_close(batch[0], ref_rms_norm(x, w, EPS), dtype)


# 16-bit rows that fill their block exactly run unchecked (kFull) in the latency
# build for the fused add at 8 (C = 1 and 2), 16 and 32 warps and rms_norm at 8
# warps of C = 1 and at 32 (fixed_warps_built); every other 16-bit block keeps
# its bounds checks, and so does a row that leaves threads of such a block idle.
# As many rows as SMs: the latency build, and too many rows for a cluster on any
# GPU. warps: the kernel's compile-time warp count (0: read from blockDim).
UNCHECKED_16_BIT = [  # (hidden, fused add, C, warps, unchecked)
    (2048, True, 1, 8, True),
    (4096, True, 2, 8, True),
    (8192, True, 2, 16, True),  # the weight late on sm_90+ (latency_late_weight_build)
    (16384, True, 2, 32, True),  # the same
    (2048, False, 1, 8, True),
    (4096, False, 2, 8, False),
    (8192, False, 2, 16, False),
    (16384, False, 2, 32, True),  # fp16: the weight late on sm_90+ (latency_late_weight_build)
    # 255 and 500 vectors: 256-thread blocks with an idle thread slot
    (2040, True, 1, 8, False),
    (4000, True, 2, 0, False),
]


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=str)
@pytest.mark.parametrize(("hidden", "add", "c", "warps", "unchecked"), UNCHECKED_16_BIT, ids=str)
def test_16_bit_latency_blocks_run_unchecked_where_built(
    dtype: torch.dtype, hidden: int, add: bool, c: int, warps: int, unchecked: bool
) -> None:
    """The unchecked 16-bit latency kernels run where the plan builds them (the kernel
    names show it; the bits alone cannot) and give the occupancy build's bits."""
    sms = sm_count()
    x, r, w = norm_inputs(occupancy_batch(dtype, hidden), hidden, dtype)
    batch = forwards(x, r, w)
    launched = single_pass_args(kernels_of(forward_call(x[:sms], r[:sms] if add else None, w)))
    assert len(launched) == 1, launched
    args = launched[0]
    assert args[3] in FLAG and args[5] in FLAG, args
    assert FLAG[args[3]], f"not the latency build: {args}"
    assert (args[1], args[4]) == (str(c), str(warps)), f"C and warps: {args}"
    assert FLAG[args[5]] == unchecked, args
    assert_same_bits(forwards(x[:sms], r[:sms], w), [b[:sms] for b in batch], f"{sms} rows")


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=str)
@pytest.mark.parametrize("build", ["latency", "occupancy"])
# 1 and 2 vectors per thread; 8192: 8 rows of 512 threads, the cluster kernel on sm_90+
@pytest.mark.parametrize("hidden", [2048, 4096, 8192])
def test_fused_add_residual_is_torchs_sum_for_every_bit_pattern(
    dtype: torch.dtype, build: str, hidden: int
) -> None:
    """The single-pass kernel adds 16-bit pairs in their dtype (one rounding); torch
    rounds the float sum. They must agree bit for bit (signed zeros included): every
    finite 16-bit pattern as the residual against values of every kind as x, in both
    builds."""
    patterns = torch.arange(-(2**15), 2**15, dtype=torch.int32).to(torch.int16).view(dtype)
    finite = patterns[torch.isfinite(patterns.float())]
    r = torch.zeros(-(-finite.numel() // hidden) * hidden, dtype=dtype)
    r[: finite.numel()] = finite
    r = r.view(-1, hidden).cuda()  # 16 or 32 rows
    w = torch.ones(hidden, dtype=dtype, device="cuda")
    xs = [torch.full_like(r, v) for v in rounding_addends(dtype)]
    if build == "latency":  # one x value a call: at most one row per SM
        if r.shape[0] > sm_count():
            pytest.skip(f"{r.shape[0]} rows are more than this GPU's SMs")
        pairs = list(zip(xs, [r] * len(xs), strict=True))
    else:  # every value in one batch past the latency build's wave
        reps = -(-occupancy_batch(dtype, hidden) // (r.shape[0] * len(xs)))
        pairs = [(torch.cat(xs).repeat(reps, 1), r.repeat(len(xs) * reps, 1))]
    for x, rr in pairs:
        _, res = fusedops.fused_add_rms_norm(x, rr, w, EPS)
        expected = x + rr
        assert not expected.isnan().any()
        # Compared as integers: assert_close would take -0 for +0.
        torch.testing.assert_close(
            res.view(torch.int16), expected.view(torch.int16), rtol=0, atol=0
        )


# A batch of more rows than SMs whose latency blocks all fit on the GPU at once
# takes the latency build (kFewRows), except blocks of 1 vector a thread and
# those of late_weight_build, which measured slower so
# (latency_build_in_one_wave; the late-weight blocks of
# latency_late_weight_build on sm_90+ keep it). Past one wave: the
# occupancy build. Twice the SMs is one wave for the blocks below: 2 blocks of
# up to 512 threads fit an SM on every arch the wheel targets at up to 64
# registers, which their latency builds use at most (the 1024-thread launch bound, or ptxas's choice under the
# 256-thread bound of the weight-guarded 8-warp builds, CUDA 13.0).
ONE_WAVE = [  # (dtype, hidden, fused add, latency build at twice the SMs)
    (torch.bfloat16, 4096, False, True),  # C = 2, 8 warps
    (torch.float16, 4096, True, True),  # C = 2, 8 warps, unchecked
    (torch.bfloat16, 8192, True, True),  # C = 2, 16 warps, unchecked, the weight late (sm_90+)
    (torch.float16, 8192, True, True),  # the same
    (torch.bfloat16, 6000, False, True),  # C = 2, 12 warps: a runtime warp count
    (torch.float32, 2048, False, True),  # C = 2, 8 warps, unchecked
    (torch.float32, 4096, True, True),  # C = 2, 16 warps
    (torch.bfloat16, 2048, True, False),  # C = 1
    (torch.float32, 1000, False, False),  # C = 1, 8 warps, checked
    (torch.float32, 4096, False, False),  # C = 4, 8 warps: the weight late
    (torch.float32, 8192, False, False),  # C = 4, 16 warps: the weight late
]


@pytest.mark.parametrize(("dtype", "hidden", "add", "latency"), ONE_WAVE, ids=str)
def test_a_batch_of_one_wave_takes_the_latency_build(
    dtype: torch.dtype, hidden: int, add: bool, latency: bool
) -> None:
    """Twice as many rows as SMs take the latency build where the plan says so (the
    kernel names show it), a batch past one wave the occupancy build, and the two
    give the same bits."""
    x, r, w = norm_inputs(occupancy_batch(dtype, hidden), hidden, dtype)
    wave = 2 * sm_count()

    def few_rows_flags(rows: int) -> list[bool]:
        return single_pass_flags(forward_call(x[:rows], r[:rows] if add else None, w), FEW_ROWS)

    assert few_rows_flags(wave) == [latency]
    assert few_rows_flags(x.shape[0]) == [False]
    batch = forwards(x, r, w)
    assert_same_bits(forwards(x[:wave], r[:wave], w), [b[:wave] for b in batch], f"{wave} rows")


# The 16-bit fused add at 4 vectors a thread (hidden 16392-32768, blocks of
# 544-1024 threads), or at 2 in blocks of 512-1024 threads (hidden 8192-16384),
# runs a batch of one to two waves of its single-pass blocks (more rows than fit
# at once, at most twice as many) split over 2-block clusters where the clusters
# hold as many rows at once as those blocks do, and its warp count is even
# (split_a_wave_and_tail). Which widths split, and how many blocks make a wave,
# follow the registers ptxas gives the two kernels, so the kernel names are
# checked only where those are known: an sm_90 GPU running a build with sm_90
# code from CUDA 13.0 (of 32768's 512-thread halves, fp16's at 64 registers fit
# two an SM, bf16's at 72 one, half the rows). The bits are checked on every
# sm_90+ GPU.
WAVE_AND_TAIL = [  # (dtype, hidden, single-pass blocks an SM, split: both on sm_90)
    (torch.bfloat16, 8192, 2, True),  # 512 threads x 2 vectors: rows past 2 x SMs
    (torch.float16, 12288, 1, True),  # 768 threads x 2
    (torch.bfloat16, 16384, 1, True),  # 1024 threads x 2
    (torch.bfloat16, 4096, 4, False),  # 256 threads x 2: blocks this small are not split
    (torch.bfloat16, 18432, 1, True),  # 576 threads x 4
    (torch.float16, 20000, 1, True),  # 640 threads, 60 slots past the row
    (torch.bfloat16, 24576, 1, True),  # 768 threads
    (torch.float16, 32768, 1, True),  # 1024 threads: two halves an SM
    (torch.bfloat16, 32768, 1, False),  # 1024 threads: one half an SM, half the rows
    (torch.bfloat16, 17408, 1, False),  # 544 threads: 17 warps, no halves
]


@pytest.mark.parametrize(("dtype", "hidden", "per_sm", "split"), WAVE_AND_TAIL, ids=str)
def test_a_wave_and_a_tail_of_long_fused_add_rows_split_over_clusters(
    dtype: torch.dtype, hidden: int, per_sm: int, split: bool
) -> None:
    """Just past one wave of the single-pass blocks (per_sm an SM), at two waves and
    one row more: the fused add's kernel is the cluster kernel of 2 blocks a row where
    the plan says so (rms_norm never), and every bit is the single-pass kernel's in a
    batch past those row counts."""
    if torch.cuda.get_device_capability()[0] < 9:
        pytest.skip("thread block clusters need sm_90 or newer")
    wave = per_sm * sm_count()
    # Past every row count below, so that each is compared with another launch.
    x, r, w = norm_inputs(max(occupancy_batch(dtype, hidden), 2 * wave + 2), hidden, dtype)
    batch = forwards(x, r, w)
    build = fusedops.BUILD_INFO
    known_registers = (
        torch.cuda.get_device_capability() == (9, 0)
        and build["cuda"] == "13.0"
        and "9.0" in build["arch_list"]
    )
    for rows in (wave + 1, 2 * wave, 2 * wave + 1):
        if known_registers:
            expected = [2] if split and rows <= 2 * wave else []
            assert cluster_blocks(forward_call(x[:rows], r[:rows], w)) == expected, rows
            assert cluster_blocks(forward_call(x[:rows], None, w)) == [], rows
        assert_same_bits(forwards(x[:rows], r[:rows], w), [b[:rows] for b in batch], f"{rows} rows")


def cluster_launch_smem(call) -> list[int]:
    """The shared memory (static and dynamic) of each cluster forward kernel `call`
    launches, from torch.profiler's trace of the launch."""
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        call()
        torch.cuda.synchronize()
    with tempfile.TemporaryDirectory() as tmp:
        trace = Path(tmp) / "trace.json"
        prof.export_chrome_trace(str(trace))
        events = json.loads(trace.read_text())["traceEvents"]
    return [
        e["args"]["shared memory"]
        for e in events
        if e.get("cat") == "kernel" and CLUSTER_KERNEL.search(e.get("name", ""))
    ]


# The shared memory the driver reserves for each resident block on sm_90 (its
# cudaDevAttrReservedSharedMemoryPerBlock), which torch's device properties lack.
SM90_RESERVED_SMEM_PER_BLOCK = 1024


def smem_per_sm() -> int:
    return torch.cuda.get_device_properties(0).shared_memory_per_multiprocessor


HELD_SPLIT = [  # (dtype, hidden, the split's halves an SM on sm_90 with CUDA 13.0, held)
    (torch.float16, 16384, 3, True),  # 512-thread halves, 40 registers
    (torch.bfloat16, 12288, 3, True),  # 384-thread halves, 48 registers
    (torch.bfloat16, 8192, 5, True),  # 256-thread halves, 48 registers
    (torch.bfloat16, 16384, 2, False),  # two an SM: two waves already even
    (torch.float16, 20480, 3, False),  # 4 vectors a thread: never held
]


@pytest.mark.parametrize(("dtype", "hidden", "halves_per_sm", "held"), HELD_SPLIT, ids=str)
def test_a_long_tail_of_split_clusters_is_held_to_two_even_waves(
    dtype: torch.dtype, hidden: int, halves_per_sm: int, held: bool
) -> None:
    """A split batch a quarter of a wave of clusters past one wave launches with dynamic
    shared memory that holds the clusters to two even waves (where the plan holds them);
    two rows past one wave launches without; both with the bits of a larger batch."""
    build = fusedops.BUILD_INFO
    if not (
        torch.cuda.get_device_capability() == (9, 0)
        and build["cuda"] == "13.0"
        and "9.0" in build["arch_list"]
    ):
        pytest.skip("the halves an SM are those of sm_90 code from CUDA 13.0")
    wave = halves_per_sm * sm_count() // 2  # clusters of two halves resident at once
    long_tail, short_tail = wave + wave // 4, wave + 2
    x, r, w = norm_inputs(max(occupancy_batch(dtype, hidden), long_tail + 1), hidden, dtype)
    batch = forwards(x, r, w)
    for rows, want_held in ((long_tail, held), (short_tail, False)):
        call = forward_call(x[:rows], r[:rows], w)
        assert cluster_blocks(call) == [2], rows
        (smem,) = cluster_launch_smem(call)
        # The kernel's own shared memory is a few hundred bytes; a hold is tens of KB.
        assert (smem > 16 * 1024) == want_held, (rows, smem)
        if want_held:
            # The halves an SM that shared memory leaves: fewer than the registers
            # allow (so the hold holds), and still two waves' worth of the rows.
            fit = smem_per_sm() // (smem + SM90_RESERVED_SMEM_PER_BLOCK)
            assert fit < halves_per_sm and fit * sm_count() >= rows, (rows, smem, fit)
        assert_same_bits(forwards(x[:rows], r[:rows], w), [b[:rows] for b in batch], f"{rows} rows")
