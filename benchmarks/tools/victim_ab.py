"""Experiment settings timed against the shipped plan, with what each leaves in the L2.

An experiment wheel's settings over a grid of shapes, and the time the kernels after each
setting's kernel lose to lines it left pinned in the L2: the loop exp54.py and exp55.py ran
(v37), shared by the exp*.py scripts after them.

    import victim_ab
    SETTINGS = {"base": {}, "late": {"FUSEDOPS_EXP_DEMOTE_LATE": "1"}}
    sys.exit(victim_ab.main(SETTINGS, op="rms_norm", rivals=("compile", "copy")))

`main` takes the command line `OUT.csv [--dtypes ...] [--rows ...] [--hidden ...]
[--rounds N]`. First the victim probe: per shape of `victim_shapes` (VICTIM_SHAPES unless
given), a graph of one call of the op and then VICTIM_COPIES copies of a 12 MiB float32
buffer into another (24 MiB, which
the L2 holds when nothing pins it), against a graph of the call alone; the difference is the
copies' time after that setting's kernel (lines a kernel leaves evict_last are evicted after
the copies' normal lines). Then the grid: every setting's outputs checked bit for bit against
the first's (inprocess_ab.check_same_outputs), each setting's fastest of 2 x rounds mirrored
turns of gpu_sweep.py's graph time, the rivals timed once beside. Rows go to the CSV as
gpu_sweep.py's (op, dtype, rows, hidden, impl, us); the probe's op is "victim after OP".
For the GPU machine; not a test.
"""

from __future__ import annotations

import argparse
import csv
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from gpu_sweep import calls_per_graph, graph_us, implementation, liger_ops, make_inputs
from inprocess_ab import Settings, check_same_outputs, fastest_turns, relative, turn_order

VICTIM_COPIES = 4
VICTIM_SHAPES = (("bfloat16", 16384, 8192), ("float32", 16384, 2048))


def victim_probe(
    out: TextIO,
    op: str,
    settings: Settings,
    order: list[str],
    shapes: Sequence[tuple[str, int, int]] = VICTIM_SHAPES,
) -> None:
    writer = csv.writer(out)
    src = torch.randn(3 << 20, device="cuda")  # 12 MiB
    dst = torch.empty_like(src)

    def copies() -> None:
        for _ in range(VICTIM_COPIES):
            dst.copy_(src)

    for dtype_name, rows, hidden in shapes:
        inputs = make_inputs(op, rows, hidden, getattr(torch, dtype_name))
        ours = implementation(op, "fusedops", inputs, None)

        def call_then_copies(ours=ours) -> None:
            ours()
            copies()

        alone = fastest_turns(lambda fn=ours: graph_us(fn, 1), settings, order)
        both = fastest_turns(lambda: graph_us(call_then_copies, 1), settings, order)
        copies_alone = graph_us(copies, 1)  # after a flush, no setting's kernel before
        victim = {name: both[name] - alone[name] for name in settings}
        for name, us in [*victim.items(), ("copies_alone", copies_alone)]:
            writer.writerow([f"victim after {op}", dtype_name, rows, hidden, name, f"{us:.3f}"])
        parts = " ".join(f"{name}={us:.2f}" for name, us in victim.items())
        print(f"victim after {dtype_name} {rows}x{hidden}: {VICTIM_COPIES} copies us {parts}")
        print(f"  (copies alone after a flush {copies_alone:.2f})", flush=True)
        out.flush()
        del inputs, ours
        torch.cuda.empty_cache()


def grid(
    out: TextIO,
    op: str,
    settings: Settings,
    order: list[str],
    rivals: Sequence[str],
    shapes: tuple[list[str], list[int], list[int]],
) -> None:
    writer = csv.writer(out)
    dtypes, rows_list, hidden_list = shapes
    lg = liger_ops() if "liger" in rivals else None
    base = next(iter(settings))
    for dtype_name in dtypes:
        dtype = getattr(torch, dtype_name)
        for hidden in hidden_list:
            for rows in rows_list:
                inputs = make_inputs(op, rows, hidden, dtype)
                calls = calls_per_graph(op, rows, hidden, dtype)
                ours = implementation(op, "fusedops", inputs, lg)
                label = f"{dtype_name} {rows}x{hidden}"
                check_same_outputs(ours, settings, label=label)
                times = fastest_turns(lambda fn=ours, n=calls: graph_us(fn, n), settings, order)
                for impl in rivals:
                    fn = implementation(op, impl, inputs, lg)
                    if fn is not None:
                        times[impl] = graph_us(fn, calls)
                for impl, us in times.items():
                    writer.writerow([op, dtype_name, rows, hidden, impl, f"{us:.3f}"])
                out.flush()  # a call cut short keeps the shapes it finished
                rel = " ".join(f"{k}={v:+.1f}%" for k, v in relative(times).items())
                print(f"{label:22s} {base}={times[base]:.2f} {rel}", flush=True)
                del inputs, ours
                torch.cuda.empty_cache()


def main(
    settings: Settings,
    op: str,
    rivals: Sequence[str],
    argv: list[str] | None = None,
    victim_shapes: Sequence[tuple[str, int, int]] = VICTIM_SHAPES,
) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("csv")
    p.add_argument("--dtypes", default="bfloat16,float16,float32")
    p.add_argument("--rows", default="4096,16384,65536")
    p.add_argument("--hidden", default="2048,4096,8192,16384")
    p.add_argument("--rounds", type=int, default=2)
    args = p.parse_args(argv)
    shapes = (
        args.dtypes.split(","),
        [int(v) for v in args.rows.split(",")],
        [int(v) for v in args.hidden.split(",")],
    )
    order = turn_order(settings, args.rounds)
    a = torch.randn(4096, 4096, device="cuda")
    for _ in range(200):  # clocks up before the first timing
        a @ a
    with open(args.csv, "w", newline="") as out:
        csv.writer(out).writerow(["op", "dtype", "rows", "hidden", "impl", "us"])
        victim_probe(out, op, settings, order, victim_shapes)
        grid(out, op, settings, order, rivals, shapes)
    return 0
