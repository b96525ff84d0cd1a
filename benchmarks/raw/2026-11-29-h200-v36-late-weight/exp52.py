"""s50: 16-bit rms_norm in C = 2's order at C = 4 (the kHalves builds: past the L2 on sm_90,
and 1024-thread C = 2 plans) loading the weight after the reduction instead of with x
(47-48 registers on sm_90 against 55-56: 5 blocks of 8 warps an SM instead of 4), against
the shipped plan, in one process.

    pip install -q --no-deps --no-index --target /tmp/inst .device/exp52/*.whl \\
        .whl/liger_kernel-0.8.5-py3-none-any.whl
    PYTHONPATH=/tmp/inst python exp52.py OUT.csv [--dtypes ...] [--rows ...] [--hidden ...]

The wheel is a `pip wheel` build for sm_90 of cb9e3a8 with exp-late.diff (an environment
switch read on every launch). Settings: base (the shipped plan); late
(FUSEDOPS_EXP_LATE=1). Every setting's outputs are checked bit for bit against base's
before it is timed; times are gpu_sweep.py's (kernel time per call in a CUDA graph), each
setting's fastest of three turns. A script for the GPU machine, not a test.
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

EPS = 1e-6
SETTINGS = {
    "base": {},
    "late": {"FUSEDOPS_EXP_LATE": "1"},
}
ORDER = ["base", "late", "late", "base", "base", "late"]
SWITCHES = ("FUSEDOPS_EXP_LATE",)


def use(setting: str) -> None:
    for name in SWITCHES:
        os.environ.pop(name, None)
    os.environ.update(SETTINGS[setting])


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("csv")
    p.add_argument("--ops", default="rms_norm")
    p.add_argument("--dtypes", default="bfloat16,float16")
    p.add_argument("--rows", default="4096,8192,16384,65536")
    p.add_argument("--hidden", default="4096,8192,12288,16384")
    args = p.parse_args()
    liger = liger_ops()
    a = torch.randn(4096, 4096, device="cuda")
    for _ in range(200):
        a @ a
    with open(args.csv, "w", newline="") as f:
        out_csv = csv.writer(f)
        out_csv.writerow(["op", "dtype", "rows", "hidden", "impl", "us"])
        for op in args.ops.split(","):
            add = op == "fused_add_rms_norm"
            for dtype in (getattr(torch, d) for d in args.dtypes.split(",")):
                for hidden in map(int, args.hidden.split(",")):
                    w = torch.randn(hidden, dtype=dtype, device="cuda")
                    for rows in map(int, args.rows.split(",")):
                        x = torch.randn(rows, hidden, dtype=dtype, device="cuda")
                        r = torch.randn(rows, hidden, dtype=dtype, device="cuda") if add else None
                        tensors = 4 if add else 2
                        moved = (tensors * rows * hidden + hidden) * x.element_size()
                        calls = max(1, min(MAX_CALLS, GRAPH_BYTES // moved))

                        def call(x=x, r=r, w=w, add=add):
                            if add:
                                return fusedops.fused_add_rms_norm(x, r, w, EPS)
                            return (fusedops.rms_norm(x, w, EPS),)

                        settings = list(SETTINGS)
                        use("base")
                        ref = call()
                        for s in settings[1:]:
                            use(s)
                            got = call()
                            for g, e in zip(got, ref, strict=True):
                                if not torch.equal(
                                    g.view(torch.int16 if g.element_size() == 2 else torch.int32),
                                    e.view(torch.int16 if e.element_size() == 2 else torch.int32),
                                ):
                                    raise AssertionError(
                                        f"{s} {op} {dtype} {rows}x{hidden}: other bits"
                                    )
                        del ref, got
                        times = {}
                        for s in (s for s in ORDER if s in settings):
                            use(s)
                            times[s] = min(times.get(s, 1e18), graph_us(call, calls))
                        use("base")
                        o = torch.empty_like(x)
                        times["copy"] = graph_us(lambda o=o, x=x: o.copy_(x), calls)
                        if liger is not None:
                            key = "fused_add_rms_norm" if add else "rms_norm"
                            if add:
                                times["liger"] = graph_us(
                                    lambda f=liger[key], x=x, r=r, w=w: f(x, r, w), calls
                                )
                            else:
                                times["liger"] = graph_us(
                                    lambda f=liger[key], x=x, w=w: f(x, w), calls
                                )
                        for k, v in times.items():
                            out_csv.writerow([op, str(dtype)[6:], rows, hidden, k, f"{v:.3f}"])
                        f.flush()
                        rel = " ".join(
                            f"{s}={100 * (times[s] / times['base'] - 1):+.1f}%"
                            for s in settings[1:]
                        )
                        print(
                            f"{op[:9]:9s} {str(dtype)[6:]:8s} {rows:6d}x{hidden:<6d} "
                            + " ".join(f"{k}={v:.2f}" for k, v in times.items())
                            + "  "
                            + rel,
                            flush=True,
                        )
                        torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main())
