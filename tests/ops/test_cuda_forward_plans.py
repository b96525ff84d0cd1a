"""The CUDA forward picks its kernel and block shape from the row length: test each side of each edge.

Single-pass kernel: 1 vector (16 bytes) per thread up to 256, then 2 up to 1024 threads,
(float32 rms_norm: 4 from 1024 vectors), then 4 (rms_norm, and the fp32 fused
add with its weight loaded late), then
the two-pass kernel; rows that are not whole 16-byte vectors take the scalar
kernel. Hidden sizes below are in elements; a bf16/fp16 vector holds 8, fp32 4.
The single-pass kernel has a build for at most one row per SM (latency) and
one for more rows (occupancy); both must give the same bits.
"""

from __future__ import annotations

import pytest
import torch
from helpers import assert_close, randn, ref_rms_norm

import fusedops

pytestmark = pytest.mark.gpu

EPS = 1e-6
HIDDEN = {
    # 128 threads x 1; 1024 x 2 (last C=2); 2049 vectors (C=4, or two-pass for
    # the 16-bit fused add); 1024 x 4 (last single-pass rms_norm); 4097 vectors;
    # not whole vectors.
    torch.bfloat16: [1024, 16384, 16392, 32768, 32776, 16388],
    torch.float16: [16384, 16392, 32776],
    # 1023 vectors (rms_norm C=2), 1024 (rms_norm C=4 from here); 1024 x 2;
    # 2049 vectors (C=4, fused add with the late weight); 1024 x 4; 4097
    # vectors; not whole vectors.
    torch.float32: [4092, 4096, 8192, 8196, 16384, 16388, 8190],
}
CASES = [(dtype, hidden) for dtype, hiddens in HIDDEN.items() for hidden in hiddens]


@pytest.mark.parametrize(("dtype", "hidden"), CASES, ids=str)
@pytest.mark.parametrize("rows", [1, 3])
def test_forward_at_plan_edges(dtype: torch.dtype, hidden: int, rows: int) -> None:
    x = randn(rows, hidden, dtype=dtype, device="cuda")
    r = randn(rows, hidden, dtype=dtype, device="cuda", seed=2)
    w = randn(hidden, dtype=dtype, device="cuda", seed=1)
    # Poison the memory the outputs will be allocated from: an element the
    # kernel does not write stays NaN and fails the comparison.
    poison = torch.full((3 * rows * hidden,), float("nan"), dtype=dtype, device="cuda")
    del poison
    assert_close(fusedops.rms_norm(x, w, EPS), ref_rms_norm(x, w, EPS), dtype)
    out, res = fusedops.fused_add_rms_norm(x, r, w, EPS)
    torch.testing.assert_close(res, x + r, rtol=0, atol=0)
    assert_close(out, ref_rms_norm(x + r, w, EPS), dtype)


@pytest.mark.parametrize(
    ("dtype", "hidden"),
    [
        (dtype, hidden)
        for dtype in (torch.bfloat16, torch.float16, torch.float32, torch.float64)
        for hidden in (2048, 4096, 16384)
    ],
    ids=str,
)
def test_a_row_gets_the_same_bits_in_any_batch(dtype: torch.dtype, hidden: int) -> None:
    """One row alone (the latency build) and inside a batch of more rows than the GPU
    has SMs (the occupancy build) must give bit-identical outputs."""
    rows = torch.cuda.get_device_properties(0).multi_processor_count + 5
    x = randn(rows, hidden, dtype=dtype, device="cuda")
    r = randn(rows, hidden, dtype=dtype, device="cuda", seed=2)
    w = randn(hidden, dtype=dtype, device="cuda", seed=1)
    batch = fusedops.rms_norm(x, w, EPS)
    batch_out, batch_res = fusedops.fused_add_rms_norm(x, r, w, EPS)
    for k in (0, rows // 2, rows - 1):
        alone = fusedops.rms_norm(x[k : k + 1], w, EPS)
        torch.testing.assert_close(alone[0], batch[k], rtol=0, atol=0)
        out, res = fusedops.fused_add_rms_norm(x[k : k + 1], r[k : k + 1], w, EPS)
        torch.testing.assert_close(res[0], batch_res[k], rtol=0, atol=0)
        torch.testing.assert_close(out[0], batch_out[k], rtol=0, atol=0)
