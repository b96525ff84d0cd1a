"""silu_and_mul: values, strides, sizes and gradients."""

from __future__ import annotations

import re

import pytest
import torch
from helpers import (
    DEVICES,
    DTYPES,
    assert_close,
    kernels_of,
    randn,
    ref_silu_and_mul,
    strided_views,
)

import fusedops

SHAPES = [(1, 2), (3, 14), (2, 3, 128), (4, 8192), (2, 5, 1002), (1, 131072)]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_matches_reference(device: str, dtype: torch.dtype, shape: tuple[int, ...]) -> None:
    x = randn(*shape, dtype=dtype, device=device) * 3
    out = fusedops.silu_and_mul(x)
    assert out.shape == (*shape[:-1], shape[-1] // 2)
    assert_close(out, ref_silu_and_mul(x), dtype)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_non_contiguous(device: str, dtype: torch.dtype) -> None:
    x = randn(5, 3, 64, dtype=dtype, device=device)
    for name, view in strided_views(x).items():
        assert not view.is_contiguous(), name
        assert_close(fusedops.silu_and_mul(view), ref_silu_and_mul(x), dtype)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("shape", [(0, 8), (2, 0, 8), (3, 0)], ids=str)
def test_zero_size(device: str, shape: tuple[int, ...]) -> None:
    x = torch.empty(shape, device=device, requires_grad=True)
    out = fusedops.silu_and_mul(x)
    assert out.shape == (*shape[:-1], shape[-1] // 2)
    out.sum().backward()
    assert x.grad.shape == x.shape


# x's shapes: on CUDA, 4-byte (1 x 8192), 8-byte (128 x 8192) and 16-byte
# (1024 x 4096) vectors, and scalars (hidden 1002 is no multiple of 8).
_LAUNCH_SHAPES = [(1, 8192), (128, 8192), (1024, 4096), (64, 2004)]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("shape", _LAUNCH_SHAPES, ids=str)
def test_16bit_forward_is_rounded_to_within_half_a_spacing(
    device: str, dtype: torch.dtype, shape: tuple[int, int]
) -> None:
    # The 16-bit CUDA forward takes the hardware reciprocal without a Newton
    # step (silu_and_mul.cu, sigmoid_vec), and both devices' exp are a few
    # float ulps off: an output next to a 16-bit midpoint may round the other
    # way, but it stays within half a 16-bit spacing of the float64 value plus
    # that float error (2^-18 relative: about ten times __expf's error at the
    # data's largest |a|).
    x = randn(*shape, dtype=dtype, device=device, seed=3) * 3
    ref = ref_silu_and_mul(x)
    err = (fusedops.silu_and_mul(x).double().cpu() - ref).abs()
    finfo = torch.finfo(dtype)
    magnitude = ref.abs().clamp_min(finfo.tiny)  # subnormals: the smallest normal's spacing
    spacing = torch.ldexp(torch.full_like(magnitude, finfo.eps), torch.frexp(magnitude)[1] - 1)
    excess = err - (0.5 * spacing + 2**-18 * ref.abs())
    assert excess.max().item() <= 0, f"{(excess > 0).sum().item()} outputs too far"


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("shape", _LAUNCH_SHAPES, ids=str)
def test_outputs_do_not_depend_on_their_neighbours(
    device: str, dtype: torch.dtype, shape: tuple[int, int]
) -> None:
    # Gates of -100 (and NaN) send their lanes to the IEEE division on CUDA;
    # every other output must keep its bits, forward and backward. The 16-bit
    # forward redoes only those lanes (its fast reciprocal is not the IEEE
    # one); the float32 forward and the backward redo the whole vector, which
    # keeps the bits only while their fast path is exactly the IEEE result.
    x = randn(*shape, dtype=dtype, device=device, seed=4) * 3
    grad = randn(shape[0], shape[-1] // 2, dtype=dtype, device=device, seed=5)
    d = shape[-1] // 2
    moved = torch.zeros(shape[0], d, dtype=torch.bool)
    moved[:, 3::37] = True
    moved[1::5, 10::41] = True
    gates = x[..., :d].clone()
    gates[moved.to(device)] = -100.0
    gates[1::5, 10::41] = float("nan")
    y = torch.cat([gates, x[..., d:]], dim=-1)
    before, after = fusedops.silu_and_mul(x).cpu(), fusedops.silu_and_mul(y).cpu()
    assert torch.equal(after[~moved], before[~moved])
    backward = torch.ops.fusedops.silu_and_mul_backward
    before, after = backward(grad, x).cpu(), backward(grad, y).cpu()
    both_halves = torch.cat([moved, moved], dim=-1)
    assert torch.equal(after[~both_halves], before[~both_halves])


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_large_inputs_give_the_bits_of_small_ones(device: str, dtype: torch.dtype) -> None:
    # Inputs past 8 MiB take the CPU loops that prefetch ahead (isa.h,
    # kPrefetchMinBytes), up to the tensor's last row; chunks of 64 rows
    # (1-2 MiB) do not. Neither may change a bit, forward or backward.
    rows, d = 1100, 4096
    x = randn(rows, 2 * d, dtype=dtype, device=device, seed=6) * 3
    grad = randn(rows, d, dtype=dtype, device=device, seed=7)
    assert x.numel() * x.element_size() > 8 << 20
    chunks = [slice(r, r + 64) for r in range(0, rows, 64)]
    out = fusedops.silu_and_mul(x)
    assert torch.equal(out, torch.cat([fusedops.silu_and_mul(x[c]) for c in chunks]))
    grad_x = torch.ops.fusedops.silu_and_mul_backward(grad, x)
    by_chunk = [torch.ops.fusedops.silu_and_mul_backward(grad[c], x[c]) for c in chunks]
    assert torch.equal(grad_x, torch.cat(by_chunk))
    assert_close(out[-3:], ref_silu_and_mul(x[-3:]), dtype)


def test_extreme_values() -> None:
    x = torch.tensor([[-100.0, 0.0, 100.0, 2.0, 3.0, 4.0]])
    torch.testing.assert_close(fusedops.silu_and_mul(x), ref_silu_and_mul(x).float())


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(1, 2), (4, 3, 66), (32, 2048)], ids=str)
def test_gradients(device: str, dtype: torch.dtype, shape: tuple[int, ...]) -> None:
    x = randn(*shape, dtype=dtype, device=device).requires_grad_()
    grad = randn(*shape[:-1], shape[-1] // 2, dtype=dtype, device=device, seed=5)
    fusedops.silu_and_mul(x).backward(grad)
    xd = x.detach().double().cpu().requires_grad_()
    ref_silu_and_mul(xd).backward(grad.double().cpu())
    assert_close(x.grad, xd.grad, dtype, grad=True)


@pytest.mark.parametrize("device", DEVICES)
def test_gradcheck(device: str) -> None:
    x = randn(3, 2, 10, dtype=torch.float64, device=device).requires_grad_()
    assert torch.autograd.gradcheck(fusedops.silu_and_mul, (x,))


@pytest.mark.gpu
@pytest.mark.parametrize("layout", ["aligned", "misaligned"])
@pytest.mark.parametrize(
    "rows", [97541, 97543], ids=["x-under-2^31-elements", "x-over-2^31-elements"]
)
def test_cuda_either_side_of_the_index_width_switch(rows: int, layout: str) -> None:
    # The CUDA kernels index in 32 bits, with a multiply-shift division by the
    # row length in vectors, while x has fewer than 2^31 elements, and in 64
    # bits from there (conservative: 32 bits would overflow only at 2^32
    # vectors). d = 11008 makes that division a real one (not a power of two
    # in vectors of any width: these launches are past 2^20 16-byte vectors,
    # where the forward runs 8-byte ones, or 16-byte ones on a device whose
    # DRAM peaks at 4 TB/s or more); the misaligned view takes the
    # one-element kernels. The last rows, furthest from the start, must be right.
    d = 11008
    torch.cuda.empty_cache()
    needed = 12 * rows * d + (1 << 30)  # x and grad_x (4d bytes a row each), out and grad
    if torch.cuda.mem_get_info()[0] < needed:
        pytest.skip(f"needs {needed >> 30} GiB of free GPU memory")
    # One random row plus a step that differs from row to row (a row mixed up
    # with another shows), cheap to make at 4 GiB.
    base = randn(1, 2 * d, dtype=torch.bfloat16, device="cuda") * 3
    step = (torch.arange(rows, device="cuda") % 89 * 0.125).to(torch.bfloat16)
    storage = torch.empty(rows * 2 * d + 1, dtype=torch.bfloat16, device="cuda")
    x = storage[1:] if layout == "misaligned" else storage[:-1]
    x = x.view(rows, 2 * d)
    torch.add(base, step[:, None], out=x)
    grad = x[:, :d] * 0.5
    out = fusedops.silu_and_mul(x)
    grad_x = torch.ops.fusedops.silu_and_mul_backward(grad, x)
    for part in (slice(0, 2), slice(rows - 2, rows)):
        xs = x[part].detach().double().cpu().requires_grad_()
        ref = ref_silu_and_mul(xs)
        ref.backward(grad[part].double().cpu())
        assert_close(out[part], ref.detach(), torch.bfloat16)
        assert_close(grad_x[part], xs.grad, torch.bfloat16, grad=True)


# The CUDA launches pick 4-, 8- or 16-byte vectors by the launch's count of
# 16-byte vectors, in bands that differ by direction and dtype
# (silu_and_mul.cu, vector_width): 4-byte to 2048, 8-byte to 8192, 4-byte to
# 16384, 8-byte to 131072 forward, 65536 (16-bit) or 262144 (float32)
# backward, then 16-byte, but 8-byte again at 262145-524288 in the float32
# forward and past 2^20 in the float32 backward, and in the forward where the
# device's DRAM peaks below 4 TB/s (an H100, not an H200). One row of one 16-byte
# vector makes the count the row count, so these rows sit on both sides of
# every edge. float64 is left out: every band gives it the same 16-byte
# vectors, and no fast sigmoid path.
_BAND_EDGES = [2048, 2049, 8192, 8193, 16384, 16385, 65536, 65537, 131072, 131073, 262144, 262145]
_BAND_EDGES += [524288, 524289, 2**20, 2**20 + 1]


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("vectors", _BAND_EDGES)
def test_cuda_every_vector_width_band(dtype: torch.dtype, vectors: int) -> None:
    d = 16 // dtype.itemsize  # one 16-byte vector of output a row
    x = randn(vectors, 2 * d, dtype=dtype, device="cuda") * 3
    # Gates of -100 and NaN leave the sigmoid's fast range (1 + exp(-a) past
    # 2^126): their lanes take the IEEE division (the 16-bit forward redoes just
    # those lanes, the other kernels the whole vector), in whichever width the
    # band picked, and the other lanes of that vector must still be right.
    x[::97, 0] = -100.0
    x[1::89, d - 1] = float("nan")
    grad = randn(vectors, d, dtype=dtype, device="cuda", seed=5)
    out = fusedops.silu_and_mul(x)
    grad_x = torch.ops.fusedops.silu_and_mul_backward(grad, x)
    xs = x.double().cpu().requires_grad_()
    ref = ref_silu_and_mul(xs)
    ref.backward(grad.double().cpu())
    assert_close(out, ref.detach(), dtype, equal_nan=True)
    assert_close(grad_x, xs.grad, dtype, grad=True, equal_nan=True)
    # The results cannot show which width ran; the kernels' names can (V, the
    # elements a vector, is their second template argument).
    # A torch that does not report the DRAM's clock (fast is None) leaves the
    # forward past 2^20 vectors either width.
    fast = dram_is_fast(x.device)
    sides = (False, True) if fast is None else (fast,)
    forward = launched_widths(lambda: fusedops.silu_and_mul(x))
    assert len(forward) == 1
    assert forward[0] in {band_width(dtype, vectors, True, side) for side in sides}
    backward = launched_widths(lambda: torch.ops.fusedops.silu_and_mul_backward(grad, x))
    assert backward == [band_width(dtype, vectors, False, fast_dram=False)]  # DRAM aside


_SILU_KERNEL = re.compile(r"silu_and_mul_(?:full_sm_|bwd_)?kernel<[^,<>]+, (\d+),")


def launched_widths(call) -> list[int]:
    """V of each silu_and_mul kernel `call` launches, from torch.profiler's names."""
    return [int(m.group(1)) for m in map(_SILU_KERNEL.search, kernels_of(call)) if m]


def dram_peak_is_fast(clock_khz: int, bus_bits: int) -> bool:
    """Whether a DRAM peaks at 4 TB/s or more (current_dram_is_fast in
    silu_and_mul.cu): memory clock x bus width, two transfers a clock."""
    return 2 * clock_khz * 1e3 * bus_bits / 8 >= 4e12


def dram_is_fast(device: torch.device) -> bool | None:
    """dram_peak_is_fast for a CUDA device; None where torch does not report
    the memory clock and bus width."""
    props = torch.cuda.get_device_properties(device)
    clock_khz = getattr(props, "memory_clock_rate", None)
    bus_bits = getattr(props, "memory_bus_width", None)
    if clock_khz is None or bus_bits is None:
        return None
    return dram_peak_is_fast(clock_khz, bus_bits)


# The only two devices measured past 2^20 vectors, as they report themselves:
# an H100 80GB HBM3 (2619000 kHz, 5120 bits: 3.35 TB/s; 8-byte vectors faster;
# its ncu reports in benchmarks/raw/2026-11-27-h100-v28-ncu-silu/) and an H200
# (3201000 kHz, 6016 bits: 4.81 TB/s; 16-byte vectors faster; v35's callF-dram.txt).
@pytest.mark.parametrize(
    ("clock_khz", "bus_bits", "fast"), [(2619000, 5120, False), (3201000, 6016, True)]
)
def test_dram_rule_sides_the_measured_devices(clock_khz: int, bus_bits: int, fast: bool) -> None:
    assert dram_peak_is_fast(clock_khz, bus_bits) is fast


def band_width(dtype: torch.dtype, vectors: int, forward: bool, fast_dram: bool) -> int:
    """Elements a vector for a launch of `vectors` 16-byte vectors (vector_width)."""
    size = dtype.itemsize
    narrow, mid, wide = 4 // size, 8 // size, 16 // size
    if vectors <= 2048 or 8192 < vectors <= 16384:
        return narrow
    mid_max = 131072 if forward else (262144 if size == 4 else 65536)
    if vectors <= mid_max:
        return mid
    if forward and size == 4 and 262144 < vectors <= 524288:
        return mid
    wide_band_ends = forward or size == 4
    if not wide_band_ends or vectors <= 2**20:
        return wide
    return wide if forward and fast_dram else mid
