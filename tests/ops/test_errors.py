"""Every kind of bad input gets a clear error naming the argument.

Each case runs through the eager op (C++ checks) and through FakeTensor (the
Python fake kernels that torch.compile uses), which must agree.
"""

from __future__ import annotations

import pytest
import torch
from torch._subclasses.fake_tensor import FakeTensorMode

import fusedops

ops = torch.ops.fusedops
x = torch.randn(4, 8)
w = torch.randn(8)

CASES = [
    # (id, callable, inputs, message fragment)
    ("rms_norm-int-x", ops.rms_norm, (x.long(), w.long()), "expected x to have dtype"),
    ("rms_norm-bool-x", ops.rms_norm, (x > 0, w), "expected x to have dtype"),
    (
        "rms_norm-weight-dtype",
        ops.rms_norm,
        (x, w.double()),
        "expected weight to have the same dtype",
    ),
    (
        "rms_norm-weight-shape",
        ops.rms_norm,
        (x, torch.randn(7)),
        "expected weight to have shape [8]",
    ),
    (
        "rms_norm-weight-2d",
        ops.rms_norm,
        (x, torch.randn(1, 8)),
        "expected weight to have shape [8]",
    ),
    ("rms_norm-scalar-x", ops.rms_norm, (torch.tensor(1.0), w), "at least 1 dimension"),
    ("rms_norm-negative-eps", ops.rms_norm, (x, w, -1.0), "eps"),
    (
        "fused-residual-shape",
        ops.fused_add_rms_norm,
        (x, torch.randn(4, 9), w),
        "expected residual to have the same shape",
    ),
    (
        "fused-residual-dtype",
        ops.fused_add_rms_norm,
        (x, x.half(), w),
        "expected residual to have the same dtype",
    ),
    (
        "fused-weight-shape",
        ops.fused_add_rms_norm,
        (x, x, torch.randn(3)),
        "expected weight to have shape [8]",
    ),
    ("fused-int", ops.fused_add_rms_norm, (x.int(), x.int(), w.int()), "expected x to have dtype"),
    ("silu-odd", ops.silu_and_mul, (torch.randn(4, 7),), "to be even"),
    (
        "silu-int",
        ops.silu_and_mul,
        (torch.ones(4, 8, dtype=torch.int32),),
        "expected x to have dtype",
    ),
    ("silu-scalar", ops.silu_and_mul, (torch.tensor(2.0),), "at least 1 dimension"),
    (
        "rms-bwd-grad-shape",
        ops.rms_norm_backward,
        (torch.randn(4, 9), x, w, 1e-6),
        "expected grad_out to have the same shape",
    ),
    (
        "fused-bwd-grad-dtype",
        ops.fused_add_rms_norm_backward,
        (x, x.double(), x, w, 1e-6),
        "grad_residual_out",
    ),
    ("silu-bwd-grad-shape", ops.silu_and_mul_backward, (torch.randn(4, 8), x), "grad_out"),
    # None for a tensor argument reaches the op as an undefined tensor.
    ("rms_norm-none-x", ops.rms_norm, (None, w), "expected x to be a tensor, got None"),
    ("rms_norm-none-weight", ops.rms_norm, (x, None), "expected weight to be a tensor, got None"),
    (
        "fused-none-residual",
        ops.fused_add_rms_norm,
        (x, None, w),
        "expected residual to be a tensor, got None",
    ),
    (
        "rms-bwd-none-grad",
        ops.rms_norm_backward,
        (None, x, w, 1e-6),
        "expected grad_out to be a tensor, got None",
    ),
    (
        "fused-bwd-none-grad-residual",
        ops.fused_add_rms_norm_backward,
        (x, None, x, w, 1e-6),
        "expected grad_residual_out to be a tensor, got None",
    ),
    (
        "silu-bwd-none-grad",
        ops.silu_and_mul_backward,
        (None, x),
        "expected grad_out to be a tensor, got None",
    ),
]


@pytest.mark.parametrize(
    ("fn", "args", "fragment"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_bad_input_eager(fn, args, fragment: str) -> None:
    with pytest.raises((RuntimeError, ValueError), match=None) as info:
        fn(*args)
    assert fragment in str(info.value)
    assert "fusedops." in str(info.value)


@pytest.mark.parametrize(
    ("fn", "args", "fragment"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_bad_input_fake(fn, args, fragment: str) -> None:
    with FakeTensorMode() as mode:
        fake_args = tuple(mode.from_tensor(a) if isinstance(a, torch.Tensor) else a for a in args)
        with pytest.raises((RuntimeError, ValueError)) as info:
            fn(*fake_args)
    assert fragment in str(info.value)


@pytest.mark.parametrize("requires_grad", [False, True])
def test_python_api_none_tensor_named(requires_grad: bool) -> None:
    xg = x.clone().requires_grad_(requires_grad)
    with pytest.raises(RuntimeError, match="expected x to be a tensor, got None"):
        fusedops.rms_norm(None, w)
    with pytest.raises(RuntimeError, match="expected weight to be a tensor, got None"):
        fusedops.rms_norm(xg, None)
    with pytest.raises(RuntimeError, match="expected residual to be a tensor, got None"):
        fusedops.fused_add_rms_norm(xg, None, w)
    with pytest.raises(RuntimeError, match="expected x to be a tensor, got None"):
        fusedops.silu_and_mul(None)


def test_python_api_errors_name_the_argument() -> None:
    with pytest.raises(RuntimeError, match="weight"):
        fusedops.rms_norm(x, torch.randn(3))
    with pytest.raises(RuntimeError, match="residual"):
        fusedops.fused_add_rms_norm(x, torch.randn(2, 8), w)
    with pytest.raises(RuntimeError, match="even"):
        fusedops.silu_and_mul(torch.randn(2, 3))


@pytest.mark.gpu
def test_mixed_devices() -> None:
    xc = x.cuda()
    with pytest.raises(RuntimeError, match="expected weight to be on the same device as x"):
        fusedops.rms_norm(xc, w)
    with pytest.raises(RuntimeError, match="expected residual to be on the same device as x"):
        fusedops.fused_add_rms_norm(xc, x, w.cuda())
    with pytest.raises(RuntimeError, match="same device"):
        fusedops.rms_norm(x, w.cuda())
