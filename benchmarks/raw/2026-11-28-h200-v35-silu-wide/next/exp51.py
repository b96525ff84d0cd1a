"""s49: silu_and_mul's vector widths on the H200 at small launches (forward) and the float32
backward past 2^20 vectors, settings taking turns in one process.

    PYTHONPATH=/tmp/inst python exp51.py OUT.csv [--ops ...] [--dtypes ...] [--rows ...] [--hidden ...]

The wheel is a `pip wheel` build for sm_90 of 44a5d15 with exp-silu2.diff (an environment
switch read on every launch). Settings: base (the shipped plan); n8 (FUSEDOPS_EXP_SILU2=1:
forward launches of at most 131072 16-byte vectors in 8-byte vectors, the 4-byte bands
too); n16 (=2: in 16-byte vectors); b16 (=3: the float32 backward past 2^20 vectors in
16-byte vectors). Every setting's outputs are checked bit for bit against
base's before it is timed; times are gpu_sweep.py's (kernel time per call in a CUDA graph),
each setting's fastest of four turns. A script for the GPU machine, not a test.
"""

import argparse
import csv
import os
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path("benchmarks").resolve()))
from gpu_sweep import GRAPH_BYTES, MAX_CALLS, graph_us, liger_ops

import fusedops

ALL_SETTINGS = {
    "base": {},
    "n8": {"FUSEDOPS_EXP_SILU2": "1"},
    "n16": {"FUSEDOPS_EXP_SILU2": "2"},
    "b16": {"FUSEDOPS_EXP_SILU2": "3"},
}
SETTINGS = ALL_SETTINGS
ORDER: list[str] = []


def use(setting: str) -> None:
    os.environ.pop("FUSEDOPS_EXP_SILU2", None)
    os.environ.update(SETTINGS[setting])


def same_bits(g: torch.Tensor, e: torch.Tensor) -> bool:
    view = torch.int16 if g.element_size() == 2 else torch.int32
    return torch.equal(g.view(view), e.view(view))


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("csv")
    p.add_argument("--ops", default="silu_and_mul")
    p.add_argument("--dtypes", default="bfloat16,float16,float32")
    p.add_argument("--rows", default="1024,2048,4096,16384,65536")
    p.add_argument("--hidden", default="2048,4096,8192,16384")
    p.add_argument("--settings", default="base,n8,n16")
    args = p.parse_args()
    global SETTINGS, ORDER
    names = args.settings.split(",")
    SETTINGS = {n: ALL_SETTINGS[n] for n in names}
    ORDER = (names + names[::-1]) * 2
    liger = liger_ops()
    a = torch.randn(4096, 4096, device="cuda")
    for _ in range(200):
        a @ a
    with open(args.csv, "w", newline="") as f:
        out_csv = csv.writer(f)
        out_csv.writerow(["op", "dtype", "rows", "hidden", "impl", "us"])
        for op in args.ops.split(","):
            bwd = op == "silu_and_mul_backward"
            for dtype in (getattr(torch, d) for d in args.dtypes.split(",")):
                for hidden in map(int, args.hidden.split(",")):
                    for rows in map(int, args.rows.split(",")):
                        x = torch.randn(rows, 2 * hidden, dtype=dtype, device="cuda")
                        g = torch.randn(rows, hidden, dtype=dtype, device="cuda") if bwd else None
                        moved = (5 if bwd else 3) * rows * hidden * x.element_size()
                        calls = max(1, min(MAX_CALLS, GRAPH_BYTES // moved))

                        def call(x=x, g=g, bwd=bwd):
                            if bwd:
                                return torch.ops.fusedops.silu_and_mul_backward(g, x)
                            return fusedops.silu_and_mul(x)

                        use("base")
                        ref = call()
                        for s in list(SETTINGS)[1:]:
                            use(s)
                            if not same_bits(call(), ref):
                                raise AssertionError(
                                    f"{s} {op} {dtype} {rows}x{hidden}: other bits"
                                )
                        del ref
                        times = {}
                        for s in ORDER:
                            use(s)
                            times[s] = min(times.get(s, 1e18), graph_us(call, calls))
                        use("base")
                        o = torch.empty_like(x)
                        times["copy"] = graph_us(lambda o=o, x=x: o.copy_(x), calls)
                        if liger is not None and not bwd:
                            gate, up = x[:, :hidden].contiguous(), x[:, hidden:].contiguous()
                            times["liger"] = graph_us(
                                lambda f=liger["silu_and_mul"], a=gate, b=up: f(a, b), calls
                            )
                        for k, v in times.items():
                            out_csv.writerow([op, str(dtype)[6:], rows, hidden, k, f"{v:.3f}"])
                        f.flush()
                        rel = " ".join(
                            f"{s}={100 * (times[s] / times['base'] - 1):+.1f}%"
                            for s in list(SETTINGS)[1:]
                        )
                        print(
                            f"{op[:12]:12s} {str(dtype)[6:]:8s} {rows:6d}x{hidden:<6d} "
                            + " ".join(f"{k}={v:.2f}" for k, v in times.items())
                            + "  "
                            + rel,
                            flush=True,
                        )
                        del x, g, o
                        torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main())
