"""The CUDA rms_norm backward: a one-block grid writes grad_weight itself.

With one row the backward's grid is one block, whose weight-gradient sums are
the whole gradient: it stores them in the dtype directly and sum_partials is not
launched. With a second row whose grad_out is zero the grid has two blocks and
the sums go through the partial rows and sum_partials; the zero row adds +0 to
each column, so both plans must give the same bits (dx of the first row too).
Hidden sizes: staged kernel (16-byte rows), the register kernel on unaligned
rows (not whole vectors), and a row of one element.
"""

from __future__ import annotations

import pytest
import torch
from helpers import randn

pytestmark = pytest.mark.gpu

EPS = 1e-6
ops = torch.ops.fusedops


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16, torch.float32, torch.float64])
@pytest.mark.parametrize("hidden", [4096, 4095, 1])
@pytest.mark.parametrize("op", ["rms_norm_backward", "fused_add_rms_norm_backward"])
def test_one_row_grad_weight_same_bits_as_partials(
    dtype: torch.dtype, hidden: int, op: str
) -> None:
    x = randn(2, hidden, dtype=dtype, device="cuda")
    w = randn(hidden, dtype=dtype, device="cuda", seed=1)
    dy = randn(2, hidden, dtype=dtype, device="cuda", seed=2)
    dy[1] = 0
    extra = randn(2, hidden, dtype=dtype, device="cuda", seed=3)

    def backward(rows: int) -> tuple[torch.Tensor, torch.Tensor]:
        if op == "rms_norm_backward":
            return ops.rms_norm_backward(dy[:rows], x[:rows], w, EPS)
        return ops.fused_add_rms_norm_backward(dy[:rows], extra[:rows], x[:rows], w, EPS)

    dx_one, dw_one = backward(1)
    dx_two, dw_two = backward(2)
    assert torch.equal(dw_one, dw_two)
    assert torch.equal(dx_one, dx_two[:1])
    # And the gradient itself: sum over the one row of dy * x * rstd.
    x64 = x[:1].double()
    rstd = (x64.pow(2).mean(-1, keepdim=True) + EPS).rsqrt()
    want = (dy[:1].double() * x64 * rstd).sum(0)
    torch.testing.assert_close(dw_one.double(), want, rtol=2e-2, atol=1e-2)
