"""Numerics at the edges: long rows, large-mean data, many rows, odd widths, inf/NaN.

Every result is compared with a float64 reference computed on the CPU from the
dtype-rounded inputs, within the dtype's tolerance (helpers.TOL / GRAD_TOL).
A float32 running sum stops growing once it holds 2^24 times the term it adds:
before the blocked sums, rms_norm of a row of 2^25 ones returned 1.414 and of
2^26 ones 2.0 (expected 1.0). The same tests run on CUDA (marked gpu).
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from helpers import CPU_ISAS, DEVICES, DTYPES, GRAD_TOL, TOL

import fusedops  # noqa: F401  (loads the extension: registers torch.ops.fusedops)

ops = torch.ops.fusedops
EPS = 1e-6
LONG = 1 << 25


# ---- float64 references (the ops' documented formulas, no shared code) -----
def ref_forward(x, w, eps):
    xd = x.double().cpu()
    return xd * torch.rsqrt(xd.pow(2).mean(-1, keepdim=True) + eps) * w.double().cpu()


def within(actual: torch.Tensor, expected: torch.Tensor, rtol: float, atol: float) -> None:
    """|actual - expected| <= atol + rtol * |expected| everywhere, NaN only where expected is.

    torch.testing.assert_close's test, without its per-call overhead: the
    long-row checks run it on 32 chunks per tensor.
    """
    a, e = actual.double().cpu(), expected.double().cpu()
    assert torch.equal(torch.isnan(a), torch.isnan(e)), "NaN where the reference has none"
    # inf - inf is NaN and compares False: same-signed infinities pass.
    bad = (a - e).abs() > atol + rtol * e.abs()
    if bool(bad.any()):
        i = int(torch.nonzero(bad.flatten())[0])
        raise AssertionError(
            f"{int(bad.sum())} of {e.numel()} elements outside rtol={rtol} atol={atol}; "
            f"first: got {a.flatten()[i].item()!r}, expected {e.flatten()[i].item()!r}"
        )


def close(actual: torch.Tensor, expected: torch.Tensor, dtype, grad=False, equal_nan=False):
    """Within the dtype's tolerance (helpers.TOL, or GRAD_TOL for gradients)."""
    assert actual.dtype == dtype
    if not equal_nan:
        assert not torch.isnan(actual).any(), "NaN in result"
    within(actual, expected, **(GRAD_TOL if grad else TOL)[dtype])


def rand(*shape, dtype, device, seed=0, mean=0.0, std=1.0):
    gen = torch.Generator().manual_seed(seed)
    n = math.prod(shape)
    if n > 1 << 22:
        # Long inputs tile a block of 2^20 + 7 random values: what these tests
        # need is the length, and drawing 2^25 float64 normals is the slow part.
        block = torch.randn((1 << 20) + 7, generator=gen, dtype=torch.float64)
        x = block.repeat(n // block.numel() + 1)[:n].reshape(shape)
    else:
        x = torch.randn(*shape, generator=gen, dtype=torch.float64)
    return (mean + std * x).to(dtype=dtype, device=device)


def close_scaled(actual: torch.Tensor, expected: torch.Tensor, dtype) -> None:
    """Gradient within GRAD_TOL relative to the tensor's largest magnitude.

    A gradient of a whole row (dx) or a sum over rows (dw) is only as exact as
    its largest terms: judge each element against that scale, not against
    its own size or an absolute 1e-4 (which a 1e-3-sized float16 dx would pass
    whatever it held).
    """
    assert actual.dtype == dtype
    assert not torch.isnan(actual).any(), "NaN in result"
    e = expected.double().cpu()
    scale = e.abs().max().clamp_min(1e-30)
    within(actual.double().cpu() / scale, e / scale, **GRAD_TOL[dtype])


CHUNK = 1 << 18  # columns per float64 reference chunk: no 2^25-element float64 temporaries


def col_chunks(n: int) -> list[slice]:
    return [slice(c, min(n, c + CHUNK)) for c in range(0, n, CHUNK)]


def row_sum(fn, *tensors: torch.Tensor) -> torch.Tensor:
    """sum over the last dim of fn(*float64 chunks), chunk by chunk."""
    total = 0
    for c in col_chunks(tensors[0].shape[-1]):
        chunk = [t[..., c].double().cpu() for t in tensors]
        total = total + fn(*chunk).sum(-1, keepdim=True)
    return total


def check_all_norm_ops(x, dtype, device, seed=1):
    """rms_norm, fused_add_rms_norm and both backward ops on x against float64.

    The references are the formulas of the contract in float64, evaluated by
    column chunks (row statistics first), so 2^25-wide rows stay cheap.
    """
    hidden = x.shape[-1]
    w = rand(hidden, dtype=dtype, device=device, seed=seed, mean=1.0, std=0.1)
    dy = rand(*x.shape, dtype=dtype, device=device, seed=seed + 1)
    extra = rand(*x.shape, dtype=dtype, device=device, seed=seed + 2)
    # x = a + b split so a + b is exact in every dtype: residual_out == x.
    a = (x / 2).to(dtype)
    b = x - a
    assert torch.equal(a + b, x)

    out = ops.rms_norm(x, w, EPS)
    out_add, res_out = ops.fused_add_rms_norm(a, b, w, EPS)
    assert torch.equal(res_out, x)
    dx, dw = ops.rms_norm_backward(dy, x, w, EPS)
    dx2, dw2 = ops.fused_add_rms_norm_backward(dy, extra, x, w, EPS)
    assert torch.equal(dw2, dw)

    rstd = torch.rsqrt(row_sum(lambda v: v * v, x) / hidden + EPS)
    mean_wdyx = row_sum(lambda wv, g, v: wv * g * v, w, dy, x) / hidden
    for c in col_chunks(hidden):
        xd, wd, dyd = x[..., c].double().cpu(), w[c].double().cpu(), dy[..., c].double().cpu()
        ref = xd * rstd * wd
        close(out[..., c], ref, dtype)
        close(out_add[..., c], ref, dtype)
        ref_dx = rstd * wd * dyd - xd * rstd.pow(3) * mean_wdyx
        ref_dw = (dyd * xd * rstd).reshape(-1, xd.shape[-1]).sum(0)
        if hidden == 1:
            # dx = rstd*w*dy * eps/(x^2 + eps): the difference 1 - x^2*rstd^2 is
            # ~1e-6 and any float32 rstd carries ~1e-7 of error, so here dx is
            # only absolutely small, as in torch's own float32 backward.
            close(dx[..., c], ref_dx, dtype, grad=True)
        else:
            close_scaled(dx[..., c], ref_dx, dtype)
        close(dx2[..., c], ref_dx + extra[..., c].double().cpu(), dtype, grad=True)
        close_scaled(dw[c], ref_dw, dtype)


# ---- long rows ----------------------------------------------------------------
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_row_of_2_25_ones(device, dtype):
    x = torch.ones(1, LONG, dtype=dtype, device=device)
    w = torch.ones(LONG, dtype=dtype, device=device)
    out = ops.rms_norm(x, w, EPS)
    # Every element is 1/sqrt(1 + eps): was 1.414 with a float32 running sum.
    close(out[:, :8], torch.full((1, 8), (1 + EPS) ** -0.5, dtype=torch.float64), dtype)
    assert torch.equal(out, out[:, :1].expand_as(out))
    check_all_norm_ops(x, dtype, device)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_row_of_2_26_ones(device, dtype):
    x = torch.ones(1, 2 * LONG, dtype=dtype, device=device)
    out = ops.rms_norm(x, x[0], EPS)  # was 2.0
    close(out[:, -8:], torch.full((1, 8), (1 + EPS) ** -0.5, dtype=torch.float64), dtype)
    assert torch.equal(out, out[:, :1].expand_as(out))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_long_row_large_mean(device, dtype):
    # 1000 + small noise: x^2 ~ 1e6 per element, 3e13 per row (beyond float16's
    # range: the sums must not be taken in the input dtype either).
    check_all_norm_ops(
        rand(1, LONG, dtype=dtype, device=device, mean=1000.0, std=0.1), dtype, device
    )


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_large_mean_rows(device, dtype):
    check_all_norm_ops(
        rand(64, 4096, dtype=dtype, device=device, mean=1000.0, std=0.1), dtype, device
    )


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_several_wide_rows(device, dtype):
    # Past 2^22 columns the CPU weight gradient sums all rows in one block
    # (its scratch is capped): still every op within tolerance.
    check_all_norm_ops(rand(3, (1 << 22) + 5, dtype=dtype, device=device), dtype, device)


# ---- many rows: the weight gradient sums over all of them ---------------------
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_weight_gradient_over_2_25_rows(device, dtype):
    x = torch.ones(LONG, 1, dtype=dtype, device=device)
    # dy = 2^-12 keeps the sum (8192) inside float16's range.
    dy = torch.full((LONG, 1), 2.0**-12, dtype=dtype, device=device)
    w = torch.ones(1, dtype=dtype, device=device)
    _, dw = ops.rms_norm_backward(dy, x, w, EPS)
    # 2^25 rows of 2^-12/sqrt(1 + eps): a float32 running sum stalls at 2^24 terms.
    expected = LONG * 2.0**-12 * (1 + EPS) ** -0.5
    assert abs(dw.double().item() / expected - 1) <= TOL[dtype]["rtol"]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_many_rows_random(device, dtype):
    check_all_norm_ops(rand(1 << 18, 24, dtype=dtype, device=device), dtype, device)


# Rows too long to stage, short enough for 8 vectors per thread at up to 512
# threads: the backward's register kernel at C = 8 for fp32 (2049-4096
# vectors, hidden 8196-16384) and its two-pass kernel for double (2049-4096
# vectors, 4098-8192); more rows than the persistent grid has blocks, so blocks
# carry dw over several rows. Then one vector past it (the three-kernel fallback).
@pytest.mark.gpu
@pytest.mark.parametrize(
    ("dtype", "hidden"),
    [
        (torch.float32, 8196),
        (torch.float32, 12292),
        (torch.float32, 16384),
        (torch.float32, 16388),
        (torch.float64, 4098),
        (torch.float64, 8192),
        (torch.float64, 8194),
    ],
    ids=str,
)
def test_backward_long_rows(dtype, hidden):
    rows = 8 * torch.cuda.get_device_properties(0).multi_processor_count + 5
    check_all_norm_ops(rand(rows, hidden, dtype=dtype, device="cuda"), dtype, "cuda")


# ---- every width around the vector and block sizes ----------------------------
WIDTHS = [1, 2, 7, 15, 16, 17, 31, 33, 63, 64, 65, 127, 1023, 1024, 1025, 2049, 4097]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_odd_widths(device, dtype):
    for i, hidden in enumerate(WIDTHS):
        x = rand(5, hidden, dtype=dtype, device=device, seed=i)
        check_all_norm_ops(x, dtype, device, seed=100 + i)
        g = rand(5, 2 * hidden, dtype=dtype, device=device, seed=i, std=4.0)
        check_silu_and_mul(g, dtype, device)


# ---- silu_and_mul ------------------------------------------------------------
def ref_silu_grads(dy, x):
    xd, dyd = x.double().cpu(), dy.double().cpu()
    d = xd.shape[-1] // 2
    a, b = xd[..., :d], xd[..., d:]
    s = torch.sigmoid(a)
    return torch.cat([dyd * b * s * (1 + a * (1 - s)), dyd * a * s], dim=-1)


def check_silu_and_mul(x, dtype, device, equal_nan=False):
    d = x.shape[-1] // 2
    xd = x.double().cpu()
    expected = torch.nn.functional.silu(xd[..., :d]) * xd[..., d:]
    close(ops.silu_and_mul(x), expected, dtype, equal_nan=equal_nan)
    dy = rand(*x.shape[:-1], d, dtype=dtype, device=device, seed=7)
    close(ops.silu_and_mul_backward(dy, x), ref_silu_grads(dy, x), dtype, True, equal_nan)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_silu_and_mul_wide_range(device, dtype):
    # |a| up to 100: exp(-a) over/underflows float; silu(a) -> 0 or a.
    check_silu_and_mul(rand(256, 2 * 1000, dtype=dtype, device=device, std=30.0), dtype, device)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_silu_and_mul_long_row(device, dtype):
    # One row wider than a task: the CPU kernel splits it into column blocks.
    check_silu_and_mul(rand(2, 2 * (1 << 17) + 6, dtype=dtype, device=device), dtype, device)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_silu_and_mul_special_values(device, dtype):
    tiny = torch.finfo(dtype).tiny
    a = [0.0, -0.0, 1.0, -1.0, 88.5, -88.5, 89.0, -89.0, 120.0, -120.0, tiny, -tiny / 4]
    a += [float("inf"), float("-inf"), float("nan")] + [0.5] * 5  # 20: vector body + tail
    a_t = torch.tensor(a, dtype=torch.float64)
    b_t = torch.linspace(-2, 2, len(a), dtype=torch.float64)
    x = torch.cat([a_t, b_t]).repeat(3, 1).to(dtype=dtype, device=device)
    check_silu_and_mul(x, dtype, device, equal_nan=True)


# The CUDA silu_and_mul takes 4-byte vectors for launches of at most
# SILU_NARROW_MAX_VECTORS 16-byte vectors, 8-byte vectors up to
# SILU_MID_MAX_VECTORS and 16-byte vectors above (kNarrowMaxVectors and
# kMidMaxVectors in csrc/kernels/cuda/silu_and_mul.cu). Its sigmoid has a fast path for
# 1 + exp(-a) in [1, 2^126); when any lane of a vector is outside, the whole
# vector takes the IEEE division.
SILU_NARROW_MAX_VECTORS = 16384
SILU_MID_MAX_VECTORS = 65536
SILU_EDGES = [-1e4, -104.0, -100.0, -89.0, -88.0, -87.5, -87.0, -86.0]
SILU_EDGES += [-20.0, 0.0, -0.0, 3.0, 90.0, float("inf"), float("-inf"), float("nan")]
# Gates whose sigmoid is tiny (1e-38 ... 4e-38) while float32's exp(-a) still
# fits: -88 and -87.5 take the fallback, -87 and -86 the fast path. Their
# products are far below the tolerances' atol, so a flush to zero would pass
# `close`; these lanes are checked relative to the value instead, loosely
# (results there are subnormal: float32 gradients came out a few dozen
# subnormal steps off, bf16 ones one step, which is 3% of the value).
SILU_TINY = [-88.0, -87.5, -87.0, -86.0]
TINY_RTOL = {torch.float32: 2**-6, torch.float16: 2**-6, torch.bfloat16: 2**-6}
TINY_RTOL[torch.float64] = 1e-9


def assert_tiny_lanes_kept(actual, expected, lanes, dtype):
    a = actual.double().cpu()[lanes]
    e = expected.to(dtype).double()[lanes]  # the exact result, rounded as the op must
    info = torch.finfo(dtype)
    subnormal_step = info.smallest_normal * info.eps
    bad = (a - e).abs() > TINY_RTOL[dtype] * e.abs() + 2 * subnormal_step
    assert not bool(bad.any()), f"{a[bad][:4].tolist()} where {e[bad][:4].tolist()} is expected"


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("launch", ["4-byte", "4-byte-limit", "8-byte", "8-byte-limit", "16-byte"])
def test_silu_and_mul_special_values_every_lane(device, dtype, launch):
    # Each of the 16 values at every position of a vector, for every vector
    # width, at and past each switch: vectors that mix fast-path and fallback
    # lanes must be right in every lane, and tiny results must not flush to zero.
    d = len(SILU_EDGES)
    vectors_per_row = d * dtype.itemsize // 16
    narrow_rows = SILU_NARROW_MAX_VECTORS // vectors_per_row
    mid_rows = SILU_MID_MAX_VECTORS // vectors_per_row
    rows = {
        "4-byte": 16,
        "4-byte-limit": narrow_rows,
        "8-byte": narrow_rows + 16,
        "8-byte-limit": mid_rows,
        "16-byte": mid_rows + 16,
    }[launch]
    a = torch.tensor(SILU_EDGES, dtype=torch.float64)
    b = torch.linspace(-2, 2, d, dtype=torch.float64)  # no zero: every product keeps a's size
    lanes = torch.stack([torch.cat([a.roll(k), b.roll(k)]) for k in range(d)])
    x = lanes.repeat(rows // d, 1).to(dtype=dtype, device=device)
    check_silu_and_mul(x, dtype, device, equal_nan=True)

    xd = x.double().cpu()
    tiny = torch.isin(xd[:, :d], torch.tensor(SILU_TINY, dtype=torch.float64))
    expected = torch.nn.functional.silu(xd[:, :d]) * xd[:, d:]
    assert_tiny_lanes_kept(ops.silu_and_mul(x), expected, tiny, dtype)
    dy = rand(rows, d, dtype=dtype, device=device, seed=7)
    grads = ops.silu_and_mul_backward(dy, x)
    assert_tiny_lanes_kept(grads, ref_silu_grads(dy, x), torch.cat([tiny, tiny], -1), dtype)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_rms_norm_special_rows(device, dtype):
    x = rand(4, 40, dtype=dtype, device=device)
    x[0] = 0  # rstd = 1/sqrt(eps): output 0, not NaN
    x[1, 3] = float("inf")  # rstd = 1/sqrt(inf) = 0
    x[2, 39] = float("nan")  # NaN in the tail propagates to the row
    w = rand(40, dtype=dtype, device=device, seed=1)
    out = ops.rms_norm(x, w, EPS).cpu()
    assert torch.equal(out[0], torch.zeros_like(out[0]))
    assert torch.isnan(out[1, 3]) and torch.isnan(out[2]).all()
    # inf in a row: rstd = 0, so the row is 0 but for NaN at the inf (as float64 gives).
    close(out, ref_forward(x, w, EPS), dtype, equal_nan=True)


# ---- determinism and the per-ISA builds (CPU only) ------------------------------
# Hidden 200 sums all its columns in one task; 2500 splits them over the
# pool (kColumnGrain in csrc/kernels/cpu/rms_norm.cpp), and its 16-bit rows
# prefetch (x and dy past 8 MiB).
@pytest.mark.parametrize("hidden", [200, 2500])
@pytest.mark.parametrize("dtype", DTYPES)
def test_weight_gradient_same_bits_for_any_thread_count(dtype, hidden):
    x = rand(3000, hidden, dtype=dtype, device="cpu")
    dy = rand(3000, hidden, dtype=dtype, device="cpu", seed=1)
    w = rand(hidden, dtype=dtype, device="cpu", seed=2)
    before = torch.get_num_threads()
    try:
        results = []
        for threads in (1, 2, 3):
            torch.set_num_threads(threads)
            results.append(ops.rms_norm_backward(dy, x, w, EPS))
    finally:
        torch.set_num_threads(before)
    for dx, dw in results[1:]:
        assert torch.equal(dx, results[0][0]) and torch.equal(dw, results[0][1])


ISA_SCRIPT = """
import sys, torch, fusedops
ops = torch.ops.fusedops
g = torch.Generator().manual_seed(0)
out = []
for dt in (torch.float32, torch.float16, torch.bfloat16, torch.float64):
    x = torch.randn(7, 1031, generator=g, dtype=torch.float64).to(dt)
    w = torch.randn(1031, generator=g, dtype=torch.float64).to(dt)
    s = (4 * torch.randn(7, 2 * 1031, generator=g, dtype=torch.float64)).to(dt)
    out += [ops.rms_norm(x, w, 1e-6), *ops.fused_add_rms_norm(x, x, w, 1e-6)]
    out += [*ops.rms_norm_backward(x, x, w, 1e-6), ops.silu_and_mul(s)]
    out += [ops.silu_and_mul_backward(s[:, :1031], s)]
torch.save([(str(t.dtype), t.double()) for t in out], sys.argv[1])
"""


def run_with_isa(isa: str | None, path) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env.pop("FUSEDOPS_CPU_ISA", None)
    if isa is not None:
        env["FUSEDOPS_CPU_ISA"] = isa
    return subprocess.run(
        [sys.executable, "-c", ISA_SCRIPT, str(path)], env=env, capture_output=True, text=True
    )


def test_every_cpu_isa_build_agrees(tmp_path):
    """The baseline, AVX2, AVX-512 and AVX-512 BF16 builds of the kernels give the same answers."""
    default = run_with_isa(None, tmp_path / "default.pt")
    assert default.returncode == 0, default.stderr
    expected = torch.load(tmp_path / "default.pt")
    ran = []
    for isa in CPU_ISAS:
        proc = run_with_isa(isa, tmp_path / f"{isa}.pt")
        if proc.returncode != 0 and "does not support it" in proc.stderr:
            continue  # this CPU lacks the ISA: the refusal is tested below
        assert proc.returncode == 0, proc.stderr
        ran.append(isa)
        got = torch.load(tmp_path / f"{isa}.pt")
        for (dtype, a), (_, e) in zip(got, expected, strict=True):
            # Same math, other vector width: sums may differ in the last bits.
            tol = GRAD_TOL[getattr(torch, dtype.removeprefix("torch."))]
            torch.testing.assert_close(a, e, equal_nan=True, **tol)
    assert "baseline" in ran
    if "avx512" in ran and "avx512bf16" in ran:
        # The BF16 build differs only in how it rounds to bf16, to the same bits.
        avx512 = torch.load(tmp_path / "avx512.pt")
        for (_, a), (_, b) in zip(torch.load(tmp_path / "avx512bf16.pt"), avx512, strict=True):
            assert torch.equal(a.isnan(), b.isnan())
            assert torch.equal(a.nan_to_num(), b.nan_to_num())


def test_unknown_cpu_isa_is_refused(tmp_path):
    proc = run_with_isa("sse9", tmp_path / "x.pt")
    assert proc.returncode != 0
    assert "FUSEDOPS_CPU_ISA=sse9 is not one of: " in proc.stderr
    assert "baseline" in proc.stderr


def test_cpu_isa_this_cpu_lacks_is_refused(tmp_path):
    cpuinfo = Path("/proc/cpuinfo")
    flags = cpuinfo.read_text() if cpuinfo.exists() else ""
    missing = [
        isa
        for isa, flag in (
            ("avx512bf16", " avx512_bf16"),
            ("avx512", " avx512bw"),
            ("avx2", " avx2"),
        )
        if flag not in flags
    ]
    if not missing or sys.platform != "linux":
        pytest.skip("this CPU has every ISA fusedops builds for, nothing to refuse")
    proc = run_with_isa(missing[0], tmp_path / "x.pt")
    assert proc.returncode != 0
    assert f"FUSEDOPS_CPU_ISA={missing[0]} but this CPU does not support it" in proc.stderr
