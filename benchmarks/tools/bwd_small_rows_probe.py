"""The rms_norm backward at small rows: GPU time per call in a CUDA graph, and host time.

    python benchmarks/tools/bwd_small_rows_probe.py [--hidden 4096 ...] [--rows 1 16 128 1024 4096]
        [--dtypes bfloat16 float32] [--fusedops-only]

bench.py times the backward at 4096 rows and up; this probe covers the rows a
decode step or a small fine-tuning batch has. Columns, per dtype and shape:
- fusedops backward op, `calls` calls captured in one CUDA graph;
- torch's fused backward (`aten::_fused_rms_norm_backward`, what F.rms_norm's
  autograd node runs on CUDA), the same way, on the rstd of its own forward;
- forward + `torch.autograd.grad` in a graph, for torch.compile of F.rms_norm,
  Liger (if importable) and fusedops;
- host time per call of the fusedops backward op below autograd in a plain loop
  (the device synchronised once per loop).
`--fusedops-only` keeps the fusedops columns (for comparing wheels: run
it once per installed wheel, alternating). A script, not a test: the numbers go to benchmarks/RESULTS.md.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

import torch
from triton.testing import do_bench

import fusedops

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from l2_state import reset_l2_persisting
from references import allow_many_graphs

EPS = 1e-6


def graph_us(fn: Callable[[], object], calls: int = 32) -> float:
    """Microseconds per call of fn, `calls` calls captured in one graph and replayed."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm up off the capture stream, as torch advises
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(calls):
            fn()
    reset_l2_persisting()
    return do_bench(graph.replay, warmup=5, rep=30, return_mode="median") * 1e3 / calls


def host_us(fn: Callable[[], object], calls: int = 2000, rounds: int = 5) -> float:
    for _ in range(100):
        fn()
    torch.cuda.synchronize()
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
        best = min(best, (time.perf_counter() - start) / calls * 1e6)
    return best


def compiled_rms_norm() -> Callable:
    def rms_norm(x: torch.Tensor, w: torch.Tensor, eps: float) -> torch.Tensor:
        return torch.nn.functional.rms_norm(x, (x.shape[-1],), w, eps)

    return torch.compile(rms_norm, dynamic=False)


def measure(
    dtype: torch.dtype, rows: int, hidden: int, liger: Callable | None, others: bool = True
) -> list[float]:
    """One shape's columns (see the module docstring); NaN for Liger when it is absent
    and for torch's columns without `others`."""
    below = torch._C._AutoDispatchBelowAutograd
    backward_op = torch.ops.fusedops.rms_norm_backward.default._op
    x = torch.randn(rows, hidden, device="cuda", dtype=dtype)
    w = torch.randn(hidden, device="cuda", dtype=dtype)
    dy = torch.randn_like(x)
    rstd = torch.ops.aten._fused_rms_norm(x, [hidden], w, EPS)[1]
    xg, wg = x.clone().requires_grad_(), w.clone().requires_grad_()

    def ours() -> object:
        with below():
            return backward_op(dy, x, w, EPS)

    def aten() -> object:
        return torch.ops.aten._fused_rms_norm_backward(dy, x, [hidden], rstd, w, [True, True])

    def fwd_bwd(forward: Callable) -> Callable[[], object]:
        return lambda: torch.autograd.grad(forward(xg, wg, EPS), (xg, wg), dy)

    nan = float("nan")
    return [
        graph_us(ours),
        graph_us(aten) if others else nan,
        graph_us(fwd_bwd(compiled_rms_norm())) if others else nan,
        graph_us(fwd_bwd(liger)) if others and liger is not None else nan,
        graph_us(fwd_bwd(fusedops.rms_norm)),
        host_us(ours),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hidden", type=int, nargs="+", default=[4096])
    parser.add_argument("--rows", type=int, nargs="+", default=[1, 16, 128, 1024, 4096])
    parser.add_argument(
        "--dtypes",
        nargs="+",
        default=["bfloat16", "float32"],
        choices=["bfloat16", "float16", "float32"],
    )
    parser.add_argument(
        "--fusedops-only", action="store_true", help="skip torch's and Liger's columns"
    )
    args = parser.parse_args(argv)
    if not torch.cuda.is_available():
        parser.error("needs a CUDA device")
    allow_many_graphs()  # one compiled graph per shape
    try:
        from liger_kernel.ops.rms_norm import LigerRMSNormFunction

        liger = LigerRMSNormFunction.apply
    except ImportError:
        liger = None
    print(
        f"{torch.cuda.get_device_name()}, torch {torch.__version__}, "
        f"fusedops {fusedops.__version__} (git {fusedops.BUILD_INFO.get('git_sha')}), us per call"
    )
    print(
        "dtype     hidden  rows  | fusedops bwd | aten bwd | compile fwd+bwd | Liger fwd+bwd | "
        "fusedops fwd+bwd | host"
    )
    for name in args.dtypes:
        dtype = getattr(torch, name)
        for hidden in args.hidden:
            for rows in args.rows:
                ours, aten, comp, lig, fused, host = measure(
                    dtype, rows, hidden, liger, others=not args.fusedops_only
                )
                print(
                    f"{name:9s} {hidden:6d} {rows:5d} | {ours:12.2f} | {aten:8.2f} | "
                    f"{comp:15.2f} | {lig:13.2f} | {fused:16.2f} | {host:5.2f}",
                    flush=True,
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
