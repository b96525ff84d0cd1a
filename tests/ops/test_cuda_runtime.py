"""CUDA behaviour users rely on: streams, graphs, several GPUs, big shapes."""

from __future__ import annotations

import pytest
import torch
from helpers import assert_close, randn, ref_rms_norm, ref_silu_and_mul

import fusedops

pytestmark = pytest.mark.gpu


def _all_ops(x: torch.Tensor, w: torch.Tensor):
    out, res = fusedops.fused_add_rms_norm(x, x, w)
    return fusedops.rms_norm(x, w), out, res, fusedops.silu_and_mul(x)


def test_work_runs_on_the_current_stream() -> None:
    x = randn(256, 1024, dtype=torch.bfloat16, device="cuda")
    w = randn(1024, dtype=torch.bfloat16, device="cuda", seed=1)
    expected = _all_ops(x, w)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        # A long kernel first on the side stream: if fusedops launched on the
        # default stream instead, it would not be ordered after this sleep.
        torch.cuda._sleep(10_000_000)
        x.mul_(1.0)
        got = _all_ops(x, w)
    torch.cuda.current_stream().wait_stream(side)
    for g, e in zip(got, expected, strict=True):
        torch.testing.assert_close(g, e)


def test_cuda_graph_capture_and_replay() -> None:
    x = randn(64, 512, dtype=torch.float16, device="cuda")
    w = randn(512, dtype=torch.float16, device="cuda", seed=1)
    # Warm up on a side stream, as CUDA graphs require.
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        _all_ops(x, w)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        outs = _all_ops(x, w)
    for seed in (2, 3):
        x.copy_(randn(64, 512, dtype=torch.float16, device="cuda", seed=seed))
        graph.replay()
        torch.cuda.synchronize()
        assert_close(outs[0], ref_rms_norm(x, w, 1e-6), torch.float16)
        assert_close(outs[3], ref_silu_and_mul(x), torch.float16)


def test_backward_in_a_cuda_graph() -> None:
    x = randn(32, 256, dtype=torch.float32, device="cuda").requires_grad_()
    w = randn(256, dtype=torch.float32, device="cuda", seed=1).requires_grad_()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        fusedops.rms_norm(x, w).sum().backward()
    torch.cuda.current_stream().wait_stream(side)
    x.grad = w.grad = None
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        fusedops.rms_norm(x, w).sum().backward()
    graph.replay()
    torch.cuda.synchronize()
    xd = x.detach().double().cpu().requires_grad_()
    wd = w.detach().double().cpu().requires_grad_()
    ref_rms_norm(xd, wd, 1e-6).sum().backward()
    torch.testing.assert_close(x.grad.double().cpu(), xd.grad, rtol=1e-4, atol=1e-4)


@pytest.mark.multi_gpu
def test_second_gpu_runs_on_its_own_device() -> None:
    torch.cuda.set_device(0)
    x = randn(128, 1024, dtype=torch.bfloat16, device="cuda:1")
    w = randn(1024, dtype=torch.bfloat16, device="cuda:1", seed=1)
    got = _all_ops(x, w)
    for t in got:
        assert t.device == torch.device("cuda:1")
    assert_close(got[0], ref_rms_norm(x, w, 1e-6), torch.bfloat16)
    assert_close(got[3], ref_silu_and_mul(x), torch.bfloat16)
    assert torch.cuda.current_device() == 0  # the device guard restored it
    with pytest.raises(RuntimeError, match="same device"):
        fusedops.rms_norm(x, w.to("cuda:0"))


@pytest.mark.parametrize(("rows", "hidden"), [(1 << 20, 16), (3, 65536), (70000, 128)])
def test_extreme_shapes(rows: int, hidden: int) -> None:
    x = randn(rows, hidden, dtype=torch.bfloat16, device="cuda")
    w = randn(hidden, dtype=torch.bfloat16, device="cuda", seed=1)
    assert_close(fusedops.rms_norm(x, w), ref_rms_norm(x, w, 1e-6), torch.bfloat16)
    assert_close(fusedops.silu_and_mul(x), ref_silu_and_mul(x), torch.bfloat16)


def test_first_call_checks_the_gpu_arch() -> None:
    from fusedops import ops

    ops._checked_devices.clear()
    fusedops.rms_norm(torch.ones(1, 8, device="cuda"), torch.ones(8, device="cuda"))
    assert torch.cuda.current_device() in ops._checked_devices or 0 in ops._checked_devices


def _misaligned(rows: int, cols: int, dtype: torch.dtype, seed: int) -> torch.Tensor:
    """A contiguous tensor whose data starts one element past a 16-byte boundary."""
    flat = randn(rows * cols + 1, dtype=dtype, device="cuda", seed=seed)
    t = flat[1:].view(rows, cols)
    assert t.is_contiguous() and t.data_ptr() % 16 != 0
    return t


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32])
@pytest.mark.parametrize("hidden", [64, 4096, 40000])
def test_misaligned_inputs_take_the_scalar_path(dtype: torch.dtype, hidden: int) -> None:
    x = _misaligned(5, hidden, dtype, seed=0).requires_grad_()
    r = _misaligned(5, hidden, dtype, seed=1)
    w = randn(hidden, dtype=dtype, device="cuda", seed=2).requires_grad_()
    assert_close(fusedops.rms_norm(x, w), ref_rms_norm(x, w, 1e-6), dtype)
    out, res = fusedops.fused_add_rms_norm(x, r, w)
    torch.testing.assert_close(res, x + r, rtol=0, atol=0)
    assert_close(out, ref_rms_norm(x + r, w, 1e-6), dtype)
    assert_close(fusedops.silu_and_mul(x), ref_silu_and_mul(x), dtype)
    fusedops.rms_norm(x, w).sum().backward()
    xd = x.detach().double().cpu().requires_grad_()
    wd = w.detach().double().cpu().requires_grad_()
    ref_rms_norm(xd, wd, 1e-6).sum().backward()
    assert_close(x.grad, xd.grad, dtype, grad=True)
