"""The ops are real torch ops: opcheck, torch.compile, schemas."""

from __future__ import annotations

import pytest
import torch
from helpers import DEVICES, randn

import fusedops

ops = torch.ops.fusedops


def _opcheck_cases(device: str):
    def t(*shape, seed=0, grad=False, dtype=torch.float32):
        return randn(*shape, dtype=dtype, device=device, seed=seed).requires_grad_(grad)

    for grad in (False, True):
        for dtype in (torch.float32, torch.bfloat16):
            yield (
                ops.rms_norm.default,
                (t(3, 5, 32, grad=grad, dtype=dtype), t(32, seed=1, grad=grad, dtype=dtype), 1e-6),
            )
            yield (
                ops.fused_add_rms_norm.default,
                (
                    t(4, 32, grad=grad, dtype=dtype),
                    t(4, 32, seed=2, grad=grad, dtype=dtype),
                    t(32, seed=1, grad=grad, dtype=dtype),
                    1e-5,
                ),
            )
            yield ops.silu_and_mul.default, (t(2, 3, 64, grad=grad, dtype=dtype),)
    yield ops.rms_norm_backward.default, (t(4, 32, seed=3), t(4, 32), t(32, seed=1), 1e-6)
    yield (
        ops.fused_add_rms_norm_backward.default,
        (t(4, 32, seed=3), t(4, 32, seed=4), t(4, 32), t(32, seed=1), 1e-6),
    )
    yield ops.silu_and_mul_backward.default, (t(4, 16, seed=3), t(4, 32))


@pytest.mark.parametrize("device", DEVICES)
def test_opcheck(device: str) -> None:
    checked = 0
    for op, args in _opcheck_cases(device):
        torch.library.opcheck(op, args)
        checked += 1
    assert checked == 15


def test_schemas_are_registered() -> None:
    for name in (
        "rms_norm",
        "fused_add_rms_norm",
        "silu_and_mul",
        "rms_norm_backward",
        "fused_add_rms_norm_backward",
        "silu_and_mul_backward",
    ):
        assert hasattr(ops, name), name
        assert str(getattr(ops, name).default._schema).startswith(f"fusedops::{name}(")


def _model(x, res, w):
    h, res2 = fusedops.fused_add_rms_norm(x, res, w)
    h = fusedops.rms_norm(h, w)
    gate_up = torch.cat([h, h * 2], dim=-1)
    return fusedops.silu_and_mul(gate_up).sum() + res2.sum()


@pytest.mark.parametrize("device", DEVICES)
def test_torch_compile_fullgraph_dynamic(device: str) -> None:
    torch._dynamo.reset()
    compiled = torch.compile(_model, fullgraph=True, dynamic=True)
    for rows in (3, 7):  # two sizes: the dynamic shape path, no recompile needed
        x = randn(rows, 64, dtype=torch.float32, device=device).requires_grad_()
        res = randn(rows, 64, dtype=torch.float32, device=device, seed=1).requires_grad_()
        w = randn(64, dtype=torch.float32, device=device, seed=2).requires_grad_()
        loss = compiled(x, res, w)
        loss.backward()
        grads = [x.grad.clone(), res.grad.clone(), w.grad.clone()]
        for t in (x, res, w):
            t.grad = None
        expected = _model(x, res, w)
        expected.backward()
        torch.testing.assert_close(loss, expected)
        for got, t in zip(grads, (x, res, w), strict=True):
            torch.testing.assert_close(got, t.grad)
