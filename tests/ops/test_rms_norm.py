"""rms_norm and fused_add_rms_norm: values, strides, sizes and gradients."""

from __future__ import annotations

import pytest
import torch
from helpers import (
    DEVICES,
    DTYPES,
    REL_ERR,
    assert_close,
    assert_rel_err,
    randn,
    ref_rms_norm,
    strided_views,
)

import fusedops

SHAPES = [(1, 1), (3, 7), (2, 3, 64), (5, 4096), (2, 8, 1000), (2, 65536)]
EPS = 1e-6


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_rms_norm_matches_reference(
    device: str, dtype: torch.dtype, shape: tuple[int, ...]
) -> None:
    x = randn(*shape, dtype=dtype, device=device)
    w = randn(shape[-1], dtype=dtype, device=device, seed=1)
    out = fusedops.rms_norm(x, w, EPS)
    assert out.shape == x.shape and out.device == x.device
    assert_close(out, ref_rms_norm(x, w, EPS), dtype)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_rms_norm_matches_torch(device: str, dtype: torch.dtype) -> None:
    x = randn(7, 256, dtype=dtype, device=device)
    w = randn(256, dtype=dtype, device=device, seed=1)
    expected = torch.nn.functional.rms_norm(x.double(), (256,), w.double(), 1e-5)
    assert_close(fusedops.rms_norm(x, w, 1e-5), expected, dtype)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_fused_add_rms_norm_matches_reference(
    device: str, dtype: torch.dtype, shape: tuple[int, ...]
) -> None:
    x = randn(*shape, dtype=dtype, device=device)
    res = randn(*shape, dtype=dtype, device=device, seed=2)
    w = randn(shape[-1], dtype=dtype, device=device, seed=1)
    x_before, res_before = x.clone(), res.clone()
    out, res_out = fusedops.fused_add_rms_norm(x, res, w, EPS)
    expected_sum = x + res  # rounded to the dtype, as the contract says
    torch.testing.assert_close(res_out, expected_sum, rtol=0, atol=0)
    assert_close(out, ref_rms_norm(expected_sum, w, EPS), dtype)
    # Functional: inputs are untouched.
    assert torch.equal(x, x_before) and torch.equal(res, res_before)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_non_contiguous_inputs(device: str, dtype: torch.dtype) -> None:
    x = randn(6, 4, 96, dtype=dtype, device=device)
    w_full = randn(192, dtype=dtype, device=device, seed=1)
    w = w_full[::2]  # non-contiguous weight
    expected = ref_rms_norm(x, w, EPS)
    for name, view in strided_views(x).items():
        assert not view.is_contiguous(), name
        assert_close(fusedops.rms_norm(view, w, EPS), expected, dtype)
        out, _ = fusedops.fused_add_rms_norm(view, view, w, EPS)
        assert_close(out, ref_rms_norm(x + x, w, EPS), dtype)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("shape", [(0, 16), (3, 0, 16), (4, 0), (0,)], ids=str)
def test_zero_size(device: str, shape: tuple[int, ...]) -> None:
    x = torch.empty(shape, device=device)
    w = torch.ones(shape[-1], device=device)
    assert fusedops.rms_norm(x, w).shape == x.shape
    out, res = fusedops.fused_add_rms_norm(x, x, w)
    assert out.shape == x.shape and res.shape == x.shape
    xg = x.clone().requires_grad_()
    wg = w.clone().requires_grad_()
    fusedops.rms_norm(xg, wg).sum().backward()
    assert xg.grad.shape == x.shape
    assert torch.equal(wg.grad, torch.zeros_like(w))


def _ref_grads(x, w, res, grad, grad_res):
    xd = x.detach().double().cpu().requires_grad_()
    wd = w.detach().double().cpu().requires_grad_()
    if res is None:
        out = ref_rms_norm(xd, wd, EPS)
        torch.autograd.backward(out, grad.double().cpu())
    else:
        rd = res.detach().double().cpu().requires_grad_()
        s = xd + rd
        out = ref_rms_norm(s, wd, EPS)
        torch.autograd.backward([out, s], [grad.double().cpu(), grad_res.double().cpu()])
    return xd.grad, wd.grad


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(1, 8), (4, 3, 33), (64, 1024), (3, 20000)], ids=str)
def test_rms_norm_gradients(device: str, dtype: torch.dtype, shape: tuple[int, ...]) -> None:
    x = randn(*shape, dtype=dtype, device=device).requires_grad_()
    w = randn(shape[-1], dtype=dtype, device=device, seed=1).requires_grad_()
    grad = randn(*shape, dtype=dtype, device=device, seed=3)
    fusedops.rms_norm(x, w, EPS).backward(grad)
    gx, gw = _ref_grads(x, w, None, grad, None)
    assert_close(x.grad, gx, dtype, grad=True)
    # The weight gradient sums over rows, so elementwise tolerances do not fit
    # it; compare the relative error of the whole vector instead.
    assert_rel_err(w.grad, gw, REL_ERR[dtype])


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_fused_add_rms_norm_gradients(device: str, dtype: torch.dtype) -> None:
    shape = (5, 3, 96)
    x = randn(*shape, dtype=dtype, device=device).requires_grad_()
    r = randn(*shape, dtype=dtype, device=device, seed=2).requires_grad_()
    w = randn(shape[-1], dtype=dtype, device=device, seed=1).requires_grad_()
    g_out = randn(*shape, dtype=dtype, device=device, seed=3)
    g_res = randn(*shape, dtype=dtype, device=device, seed=4)
    out, res_out = fusedops.fused_add_rms_norm(x, r, w, EPS)
    torch.autograd.backward([out, res_out], [g_out, g_res])
    gx, gw = _ref_grads(x, w, r, g_out, g_res)
    assert_close(x.grad, gx, dtype, grad=True)
    assert_close(r.grad, gx, dtype, grad=True)
    assert_close(w.grad, gw, dtype, grad=True)


@pytest.mark.parametrize("device", DEVICES)
def test_fused_add_rms_norm_gradient_through_one_output(device: str) -> None:
    x = randn(4, 32, dtype=torch.float64, device=device).requires_grad_()
    r = randn(4, 32, dtype=torch.float64, device=device, seed=2).requires_grad_()
    w = randn(32, dtype=torch.float64, device=device, seed=1).requires_grad_()
    out, _ = fusedops.fused_add_rms_norm(x, r, w)
    out.sum().backward()
    gx, gw = _ref_grads(x, w, r, torch.ones(4, 32), torch.zeros(4, 32))
    assert_close(x.grad, gx, torch.float64, grad=True)
    assert_close(w.grad, gw, torch.float64, grad=True)


@pytest.mark.parametrize("device", DEVICES)
def test_gradcheck(device: str) -> None:
    x = randn(3, 2, 17, dtype=torch.float64, device=device).requires_grad_()
    r = randn(3, 2, 17, dtype=torch.float64, device=device, seed=2).requires_grad_()
    w = randn(17, dtype=torch.float64, device=device, seed=1).requires_grad_()
    assert torch.autograd.gradcheck(lambda a, b: fusedops.rms_norm(a, b, EPS), (x, w))
    assert torch.autograd.gradcheck(
        lambda a, b, c: fusedops.fused_add_rms_norm(a, b, c, EPS), (x, r, w)
    )
