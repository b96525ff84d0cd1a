"""Settings of one experiment wheel and rivals timed in three patterns of calls (s55).

exp62 (s55 call A) found that v40's streamed loads were faster only when every call ran on
the same tensors, which is the sweep's pattern. With rotating buffers they were 1.3-2.9%
slower. So a change, and a miss, is judged here in three patterns:
- same: every call on the same tensors (the sweep's pattern);
- rotating: SETS input sets taken in turn, each call's outputs kept until its set comes
  round again, so no call writes what the call before wrote;
- consumer: rotating, with each call followed by a sum over its output (the next op
  reading it); the pair is timed.
The settings take turns (inprocess_ab), bits are checked, and the rivals are timed
beside them. exp62's graphs, with the settings and cases given on the command line.

    pip install -q --no-deps --no-index --target /tmp/inst WHEEL liger.whl
    PYTHONPATH=/tmp/inst python patterns_ab.py OUT.csv \\
        --cases fused_add_rms_norm:bfloat16:512x16384,rms_norm:float32:256x4096 \\
        --settings 'plain=FUSEDOPS_EXP_NOSTREAM=1;reread=FUSEDOPS_EXP_NOSTREAM=1,FUSEDOPS_EXP_ADD_REREAD=1' \\
        --rivals compile-static,liger

A script for the GPU machine, not a test.
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path("benchmarks").resolve()))
sys.path.insert(0, str(Path("benchmarks/tools").resolve()))
from exp62 import graphs
from gpu_sweep import calls_per_graph, graph_us, liger_ops, make_inputs
from inprocess_ab import check_same_outputs, fastest_turns, relative, turn_order


def parse_settings(text: str) -> dict[str, dict[str, str]]:
    """'a=VAR=1,VAR2=2;b=' -> {"a": {"VAR": "1", "VAR2": "2"}, "b": {}}."""
    settings: dict[str, dict[str, str]] = {}
    for part in text.split(";"):
        name, _, env = part.partition("=")
        settings[name] = dict(kv.split("=", 1) for kv in env.split(",") if kv)
    return settings


def parse_cases(text: str) -> list[tuple[str, str, int, int]]:
    cases = []
    for part in text.split(","):
        op, dtype, shape = part.split(":")
        rows, hidden = shape.split("x")
        cases.append((op, dtype, int(rows), int(hidden)))
    return cases


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("csv")
    p.add_argument("--cases", required=True)
    p.add_argument("--settings", default="base=")
    p.add_argument("--rivals", default="compile-static,liger")
    p.add_argument("--sets", type=int, default=4)
    p.add_argument("--rounds", type=int, default=2)
    args = p.parse_args()
    settings = parse_settings(args.settings)
    rivals = [r for r in args.rivals.split(",") if r]
    order = turn_order(settings, args.rounds)
    lg = liger_ops() if "liger" in rivals else None
    with open(args.csv, "w", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(["op", "dtype", "rows", "hidden", "mode", "impl", "us"])
        for op, dtype_name, rows, hidden in parse_cases(args.cases):
            dtype = getattr(torch, dtype_name)
            sets = [make_inputs(op, rows, hidden, dtype) for _ in range(args.sets)]
            calls = args.sets * max(1, calls_per_graph(op, rows, hidden, dtype) // args.sets)
            label = f"{op} {dtype_name} {rows}x{hidden}"
            if len(settings) > 1:
                check_same_outputs(graphs(op, "fusedops", sets)["same"], settings, label)
            ours = graphs(op, "fusedops", sets)
            theirs = {r: graphs(op, r, sets, lg) for r in rivals}
            for mode in ours:
                times = fastest_turns(
                    lambda fn=ours[mode], n=calls: graph_us(fn, n), settings, order
                )
                for r in rivals:
                    times[r] = graph_us(theirs[r][mode], calls)
                for impl, us in times.items():
                    writer.writerow([op, dtype_name, rows, hidden, mode, impl, f"{us:.3f}"])
                out.flush()
                first = next(iter(times))
                rel = " ".join(f"{k}={v:+.1f}%" for k, v in relative(times).items())
                print(f"{label:36s} {mode:8s} {first}={times[first]:.2f} {rel}", flush=True)
            del sets, ours, theirs
            torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main())
