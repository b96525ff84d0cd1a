"""Prepared in s54, not run: does v40's streamed-input plan pay outside the sweep's pattern?

v40 measured the streamed loads (kStreamX) 2.0-4.3% faster where a call moves 64 MiB, in the
sweep's CUDA graph of calls on the same tensors, where every call writes the addresses the
call before wrote. Our reading (not measured) is that the outputs stay in the L2 and the next
call's writes land there. In a model consecutive norms write other tensors, and the next op
reads the output. Three graphs of the same number of calls per case, each with exp61's
wheel's settings base (plain loads) and cs (`FUSEDOPS_EXP_STREAM=3`, the shipped .cs loads),
taking turns, bits checked, and compile-static beside:
- same: every call on the same tensors (the sweep's pattern);
- rotating: SETS input sets taken in turn, each call's outputs kept until its set comes
  round again, so no call writes what the call before wrote (SETS x the call's bytes is far
  past the L2);
- consumer: rotating, each call followed by a sum over its output (the next op reading it);
  the pair is timed.
If cs is faster in `same` only, the plan's gain is the sweep's pattern; if in `consumer` too,
the output kept in the L2 pays its reader.

    pip install -q --no-deps --no-index --target /tmp/inst .device/exp61/*.whl
    PYTHONPATH=/tmp/inst python exp62.py OUT.csv [--sets 4] [--rounds 2]

A script for the GPU machine, not a test.
"""

from __future__ import annotations

import argparse
import csv
import sys
from collections.abc import Callable
from pathlib import Path

import torch

sys.path.insert(0, str(Path("benchmarks").resolve()))
sys.path.insert(0, str(Path("benchmarks/tools").resolve()))
from gpu_sweep import calls_per_graph, graph_us, implementation, make_inputs
from inprocess_ab import check_same_outputs, fastest_turns, relative, turn_order

SETTINGS = {"base": {}, "cs": {"FUSEDOPS_EXP_STREAM": "3"}}
CASES = (  # (op, dtype, rows, hidden): 64 MiB moved, then 32 and 96 MiB
    ("fused_add_rms_norm", "bfloat16", 1024, 8192),
    ("fused_add_rms_norm", "float32", 512, 8192),
    ("rms_norm", "bfloat16", 4096, 4096),
    ("fused_add_rms_norm", "bfloat16", 2048, 2048),
    ("fused_add_rms_norm", "bfloat16", 1536, 8192),
)


def first(result: object) -> torch.Tensor:
    return result[0] if isinstance(result, tuple) else result


def graphs(
    op: str, impl: str, sets: list[tuple[torch.Tensor, ...]], lg: object = None
) -> dict[str, Callable]:
    """The three patterns' call, for one implementation over the input sets (lg: Liger's
    ops, for impl "liger"; added after exp62 ran, which did not time Liger)."""
    fns = [implementation(op, impl, inputs, lg) for inputs in sets]
    ring: list[object] = [None] * len(fns)
    turn = [0]

    def rotating() -> None:
        k = turn[0] % len(fns)
        turn[0] += 1
        ring[k] = fns[k]()

    def consumer() -> None:
        rotating()
        first(ring[(turn[0] - 1) % len(fns)]).sum()

    return {"same": fns[0], "rotating": rotating, "consumer": consumer}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("csv")
    p.add_argument("--sets", type=int, default=4)
    p.add_argument("--rounds", type=int, default=2)
    args = p.parse_args()
    order = turn_order(SETTINGS, args.rounds)
    with open(args.csv, "w", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(["op", "dtype", "rows", "hidden", "mode", "impl", "us"])
        for op, dtype_name, rows, hidden in CASES:
            dtype = getattr(torch, dtype_name)
            sets = [make_inputs(op, rows, hidden, dtype) for _ in range(args.sets)]
            calls = args.sets * max(1, calls_per_graph(op, rows, hidden, dtype) // args.sets)
            label = f"{op} {dtype_name} {rows}x{hidden}"
            check_same_outputs(implementation(op, "fusedops", sets[0], None), SETTINGS, label)
            ours, rival = graphs(op, "fusedops", sets), graphs(op, "compile-static", sets)
            for mode in ours:
                times = fastest_turns(
                    lambda fn=ours[mode], n=calls: graph_us(fn, n), SETTINGS, order
                )
                times["compile-static"] = graph_us(rival[mode], calls)
                for impl, us in times.items():
                    writer.writerow([op, dtype_name, rows, hidden, mode, impl, f"{us:.3f}"])
                out.flush()
                rel = " ".join(f"{k}={v:+.1f}%" for k, v in relative(times).items())
                print(f"{label:36s} {mode:8s} base={times['base']:.2f} {rel}", flush=True)
            del sets, ours, rival
            torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main())
