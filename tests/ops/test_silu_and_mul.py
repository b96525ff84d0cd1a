"""silu_and_mul: values, strides, sizes and gradients."""

from __future__ import annotations

import pytest
import torch
from helpers import DEVICES, DTYPES, assert_close, randn, ref_silu_and_mul, strided_views

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
@pytest.mark.parametrize(
    "rows", [131071, 131073], ids=["x-under-2^31-elements", "x-over-2^31-elements"]
)
def test_cuda_rows_past_32_bit_offsets(rows: int) -> None:
    # The CUDA kernels index in 32 bits (a multiply-shift division) while x has
    # fewer than 2^31 elements and in 64 bits from there: the last rows on
    # either side of the switch (offsets just under, then past 2^31) must be right.
    d = 8192
    needed = 5 * rows * 2 * d * 2  # x, out, grad_out, grad_x (bf16), slack
    if torch.cuda.mem_get_info()[0] < needed:
        pytest.skip(f"needs {needed >> 30} GiB of free GPU memory")
    # One random row plus a step that differs from row to row (a row mixed up
    # with another shows), cheap to make at 4 GiB.
    base = randn(1, 2 * d, dtype=torch.bfloat16, device="cuda") * 3
    step = (torch.arange(rows, device="cuda") % 89 * 0.125).to(torch.bfloat16)
    x = base + step[:, None]
    grad = x[:, :d] * 0.5
    out = fusedops.silu_and_mul(x)
    grad_x = torch.ops.fusedops.silu_and_mul_backward(grad, x)
    for part in (slice(0, 2), slice(rows - 2, rows)):
        xs = x[part].detach().double().cpu().requires_grad_()
        ref = ref_silu_and_mul(xs)
        ref.backward(grad[part].double().cpu())
        assert_close(out[part], ref.detach(), torch.bfloat16)
        assert_close(grad_x[part], xs.grad, torch.bfloat16, grad=True)
