"""Prepared in s51, not run: the fused add past the L2 reading x and the residual
evict_last, the rows within one L2 of the end (both tensors' reads) set back to normal
(add_el), against the shipped plan (plain loads), in one process; and the victim probe.

    pip install -q --no-deps --no-index --target /tmp/inst .device/exp57/*.whl \\
        .whl/liger_kernel-0.8.5-py3-none-any.whl
    PYTHONPATH=/tmp/inst python exp57.py OUT.csv

The wheel is a `pip wheel` build for sm_90 of e567a34 with next/exp-add-evict-last.diff
(FUSEDOPS_EXP_ADD_EL=1, read on every launch; blocks below 1024 threads, sm_90). ptxas
(CUDA 13.0, sm_90): the add_el builds take more registers than the shipped ones at some
widths (16-bit C = 2 at a runtime warp count 56 against 52), so a difference may be the
occupancy as well as the policy. Timing and the victim probe as exp54.py. A script for the
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
from inprocess_ab import check_same_outputs, fastest_turns, relative, turn_order, use

SETTINGS = {
    "base": {},
    "add_el": {"FUSEDOPS_EXP_ADD_EL": "1"},
}
OP = "fused_add_rms_norm"
RIVALS = ("compile", "liger", "copy")
VICTIM_COPIES = 4
VICTIM_SHAPES = (("bfloat16", 16384, 8192), ("float32", 16384, 2048))


def sweep(writer, f, dtypes: str, rows_list: str, hidden_list: str, order: list[str]) -> None:
    op = OP
    lg = liger_ops()
    for dtype in (getattr(torch, d) for d in dtypes.split(",")):
        for hidden in map(int, hidden_list.split(",")):
            for rows in map(int, rows_list.split(",")):
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
                    writer.writerow([op, str(dtype)[6:], rows, hidden, k, f"{v:.3f}"])
                f.flush()
                rel = " ".join(f"{k}={v:+.1f}%" for k, v in relative(times).items())
                print(f"{label:22s} base={times['base']:.2f} {rel}", flush=True)
                del inputs, ours
                torch.cuda.empty_cache()


def victim_probe(writer, f, order: list[str]) -> None:
    src = torch.randn(3 << 20, device="cuda")  # 12 MiB
    dst = torch.empty_like(src)
    for dtype_name, rows, hidden in VICTIM_SHAPES:
        dtype = getattr(torch, dtype_name)
        inputs = make_inputs(OP, rows, hidden, dtype)
        ours = implementation(OP, "fusedops", inputs, None)

        def norm_then_copies(ours=ours):
            ours()
            for _ in range(VICTIM_COPIES):
                dst.copy_(src)

        alone = fastest_turns(lambda fn=ours: graph_us(fn, 1), SETTINGS, order)
        both = fastest_turns(lambda: graph_us(norm_then_copies, 1), SETTINGS, order)
        use(SETTINGS, "base")
        copies_alone = graph_us(lambda: [dst.copy_(src) for _ in range(VICTIM_COPIES)], 1)
        label = f"victim after {dtype_name} {rows}x{hidden}"
        parts = []
        for name in SETTINGS:
            victim = both[name] - alone[name]
            writer.writerow(["victim-after-add", dtype_name, rows, hidden, name, f"{victim:.3f}"])
            parts.append(f"{name}={victim:.2f}")
        writer.writerow(["victim", dtype_name, rows, hidden, "copies_alone", f"{copies_alone:.3f}"])
        f.flush()
        print(f"{label}: {VICTIM_COPIES} copies us " + " ".join(parts), flush=True)
        print(f"  (copies alone after a flush {copies_alone:.2f})", flush=True)
        del inputs, ours
        torch.cuda.empty_cache()


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("csv")
    p.add_argument("--dtypes", default="bfloat16,float16,float32")
    p.add_argument("--rows", default="4096,16384,65536")
    p.add_argument("--hidden", default="2048,4096,8192,16384")
    p.add_argument("--rounds", type=int, default=2)
    args = p.parse_args()
    a = torch.randn(4096, 4096, device="cuda")
    for _ in range(200):
        a @ a
    order = turn_order(SETTINGS, args.rounds)
    with open(args.csv, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["op", "dtype", "rows", "hidden", "impl", "us"])
        victim_probe(writer, f, order)
        sweep(writer, f, args.dtypes, args.rows, args.hidden, order)
    return 0


if __name__ == "__main__":
    sys.exit(main())
