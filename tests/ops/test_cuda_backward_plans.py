"""The CUDA rms_norm backward: a one-block grid writes grad_weight itself.

With one row the backward's grid is one block, whose weight-gradient sums are
the whole gradient: the staged, register and two-pass kernels store them in the
dtype directly and sum_partials is not launched. With a second row whose
grad_out is zero the grid has two blocks and the sums go through the partial
rows and sum_partials; the zero row adds +0 to each column, so both plans must
give the same bits (dx of the first row too). The same holds for 40 rows and a
41st zero row on a GPU of 41 SMs or more (41 blocks: a split of sum_partials adds
two partial rows); the fallback's row chunks may regroup, so there only the
values are compared.

Hidden sizes (in elements; a 16-byte vector holds 8 bf16/fp16, 4 fp32, 2 double):
- 1 and 2047: not whole vectors, the register kernel element by element;
- 2048: the staged kernel, and the one-row call has no scratch at all (every
  plan it could take is one block: a null scratch pointer reaches the kernel);
- 4096: the staged kernel (sm_80+; the register kernel before);
- 8192: staged, but the two-pass kernel for double (4096 vectors);
- 8196: 16-bit not whole vectors and too long for registers: the three-kernel
  fallback, which always sums partials; the register kernel at 8 vectors a
  thread for fp32 (2049 vectors), the fallback for double;
- 16384: staged for 16-bit, the register kernel at 8 vectors a thread for fp32,
  the fallback for double.
"""

from __future__ import annotations

import pytest
import torch
from helpers import kernels_of, randn

pytestmark = pytest.mark.gpu

EPS = 1e-6
ops = torch.ops.fusedops


def uses_fallback(dtype: torch.dtype, hidden: int) -> bool:
    """Whether the backward of one row of `hidden` takes the three-kernel fallback."""
    size = torch.empty((), dtype=dtype).element_size()
    lanes = 16 // size
    if hidden % lanes:
        return hidden > 4 * 512  # the register kernel holds up to 4 x 512 elements
    vectors = hidden // lanes
    if vectors <= 2048:
        return False  # staged, or the register kernel
    # 8 vectors a thread, up to 512 threads: the register kernel (fp32), the
    # two-pass kernel (double)
    return size == 2 or vectors > 8 * 512


def grad_weight_f64(dy: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """rms_norm's weight gradient in float64: the sum over rows of dy * x * rstd."""
    x64 = x.double()
    rstd = (x64.pow(2).mean(-1, keepdim=True) + EPS).rsqrt()
    return (dy.double() * x64 * rstd).sum(0)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16, torch.float32, torch.float64])
@pytest.mark.parametrize("hidden", [1, 2047, 2048, 4096, 8192, 8196, 16384])
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
    want = grad_weight_f64(dy[:1], x[:1])
    torch.testing.assert_close(dw_one.double(), want, rtol=2e-2, atol=1e-2)

    # The plan itself: one kernel for one row, sum_partials after it otherwise.
    one, two = kernels_of(lambda: backward(1)), kernels_of(lambda: backward(2))
    summed = [any("sum_partials" in name for name in names) for names in (one, two)]
    assert summed == [uses_fallback(dtype, hidden), True], (one, two)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32, torch.float64])
@pytest.mark.parametrize("hidden", [2047, 4096, 16384])
def test_zero_row_adds_nothing_across_41_blocks(dtype: torch.dtype, hidden: int) -> None:
    rows = 40
    x = randn(rows + 1, hidden, dtype=dtype, device="cuda")
    w = randn(hidden, dtype=dtype, device="cuda", seed=1)
    dy = randn(rows + 1, hidden, dtype=dtype, device="cuda", seed=2)
    dy[rows] = 0
    dx, dw = ops.rms_norm_backward(dy[:rows], x[:rows], w, EPS)
    dx_more, dw_more = ops.rms_norm_backward(dy, x, w, EPS)
    assert torch.equal(dx, dx_more[:rows])
    if uses_fallback(dtype, hidden):  # chunks of rows_per_chunk rows, which 41 rows may change
        torch.testing.assert_close(dw, dw_more)
    else:
        assert torch.equal(dw, dw_more)
    assert torch.equal(dw_more, ops.rms_norm_backward(dy, x, w, EPS)[1])  # deterministic
    want = grad_weight_f64(dy[:rows], x[:rows])
    torch.testing.assert_close(dw.double(), want, rtol=2e-2, atol=5e-2)
