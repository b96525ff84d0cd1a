"""s51 call B: rms_norm past the L2 with x read under the L2 evict_last policy (as
inductor's kernel reads it: call A's ncu), and 16-bit rows in plain C = 2 blocks instead of
C = 4 in C = 2's order, against the shipped plan, in one process.

    pip install -q --no-deps --no-index --target /tmp/inst .device/exp53/*.whl \\
        .whl/liger_kernel-0.8.5-py3-none-any.whl
    PYTHONPATH=/tmp/inst python exp53.py OUT.csv [--dtypes ...] [--rows ...] [--hidden ...]

The wheel is a `pip wheel` build for sm_90 of b9e8eff with exp-evict-last.diff (switches
read on every launch). Settings: base (the shipped plan); el (FUSEDOPS_EXP_EL=1: x's loads
in past-the-L2 rms_norm launches carry an L2::evict_last cache hint, the weight read through
__ldg); c2 (FUSEDOPS_EXP_C2=1: 16-bit rms_norm past the L2 in plain C = 2 blocks, no
prefetch; float32 launches do not change, so its c2 times are a noise check); c2el (both).
Outputs are checked bit for bit against base's (inprocess_ab.check_same_outputs), times are
gpu_sweep.py's (kernel time per call in a CUDA graph), fastest of four turns in mirrored
order; torch.compile, Liger and the copy are timed once each beside them. A script for the
GPU machine, not a test.
"""

import argparse
import csv
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path("benchmarks").resolve()))
sys.path.insert(0, str(Path("benchmarks/tools").resolve()))
from gpu_sweep import calls_per_graph, graph_us, implementation, liger_ops, make_inputs
from inprocess_ab import check_same_outputs, fastest_turns, relative, turn_order

SETTINGS = {
    "base": {},
    "el": {"FUSEDOPS_EXP_EL": "1"},
    "c2": {"FUSEDOPS_EXP_C2": "1"},
    "c2el": {"FUSEDOPS_EXP_C2": "1", "FUSEDOPS_EXP_EL": "1"},
}
RIVALS = ("compile", "liger", "copy")


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("csv")
    p.add_argument("--dtypes", default="bfloat16,float16,float32")
    p.add_argument("--rows", default="4096,16384,65536")
    p.add_argument("--hidden", default="2048,4096,8192,16384")
    p.add_argument("--rounds", type=int, default=2)
    args = p.parse_args()
    op = "rms_norm"
    lg = liger_ops()
    a = torch.randn(4096, 4096, device="cuda")
    for _ in range(200):
        a @ a
    order = turn_order(SETTINGS, args.rounds)
    with open(args.csv, "w", newline="") as f:
        out = csv.writer(f)
        out.writerow(["op", "dtype", "rows", "hidden", "impl", "us"])
        for dtype in (getattr(torch, d) for d in args.dtypes.split(",")):
            for hidden in map(int, args.hidden.split(",")):
                for rows in map(int, args.rows.split(",")):
                    inputs = make_inputs(op, rows, hidden, dtype)
                    calls = calls_per_graph(op, rows, hidden, dtype)
                    ours = implementation(op, "fusedops", inputs, lg)
                    label = f"{str(dtype)[6:]} {rows}x{hidden}"
                    check_same_outputs(ours, SETTINGS, label=label)
                    times = fastest_turns(lambda fn=ours, n=calls: graph_us(fn, n), SETTINGS, order)
                    for impl in RIVALS:
                        fn = implementation(op, impl, inputs, lg)
                        if fn is not None:
                            times[impl] = graph_us(fn, calls)
                    for k, v in times.items():
                        out.writerow([op, str(dtype)[6:], rows, hidden, k, f"{v:.3f}"])
                    f.flush()
                    rel = " ".join(f"{k}={v:+.1f}%" for k, v in relative(times).items())
                    print(f"{label:22s} base={times['base']:.2f} {rel}", flush=True)
                    del inputs, ours
                    torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main())
