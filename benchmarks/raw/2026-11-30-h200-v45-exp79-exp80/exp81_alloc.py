"""exp81's Triton forms with their outputs allocated in our op's order (session 63, call L).
fusedops' fused add allocates `out` and then `residual_out`; exp81's Triton calls allocate
the sum (`residual_out`) first, so in a graph each writes its two outputs to the other's
addresses. Here each Triton form runs both ways ("-sumfirst" as exp81, "-outfirst" as ours),
over placements as exp81_placements.py. Run from the repository root with the wheel on
PYTHONPATH:

    python benchmarks/raw/2026-11-30-h200-v45-exp79-exp80/exp81_alloc.py OUT.csv
"""

import csv
import os
import random
import statistics
import sys

import torch
import triton

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from exp81_structure import (
    EPS,
    OP,
    WARM_UP_GRAPHS,
    calls_per_graph,
    fused_add_kernel,
    graph_us,
    implementation,
    make_inputs,
    pattern_step,
    shape_input_sets,
    warm_up,
)
from gpu_sweep import spacers

PLACEMENTS = 3
ROUNDS = 2
SHAPES = [(torch.float32, 1024, 2048), (torch.float32, 512, 4096)]
FORMS = {2048: {"x2-w8": (2, 2048, 8), "x1-w8": (1, 2048, 8)}, 4096: {"ind": (1, 2048, 16)}}


def triton_call(inputs, xblock: int, rblock: int, warps: int, out_first: bool):
    x, r, w = inputs
    rows, hidden = x.shape
    grid = (triton.cdiv(rows, xblock),)

    def call():
        if out_first:  # fusedops' order: out, then residual_out
            out = torch.empty_like(x)
            s = torch.empty_like(x)
        else:  # exp81's
            s = torch.empty_like(x)
            out = torch.empty_like(x)
        fused_add_kernel[grid](
            x,
            r,
            w,
            s,
            out,
            rows,
            EPS,
            H=hidden,
            XBLOCK=xblock,
            RBLOCK=rblock,
            EVICT="",
            num_warps=warps,
            num_stages=1,
        )
        return out, s

    return call


def main() -> int:
    out_csv = sys.argv[1]
    rng = random.Random(64)
    warm_up(WARM_UP_GRAPHS)
    out = []
    for dtype, rows, hidden in SHAPES:
        n = shape_input_sets("rotating", OP, rows, hidden, dtype)
        times: dict[tuple[str, str], list[float]] = {}
        held = []
        for p in range(PLACEMENTS):
            held += spacers(rng)
            sets = [make_inputs(OP, rows, hidden, dtype) for _ in range(n)]
            held.append(sets)
            impls = {"fusedops": [implementation(OP, "fusedops", s, None) for s in sets]}
            for name, (xb, rb, w) in FORMS[hidden].items():
                for first in (False, True):
                    tag = f"tri-{name}-{'outfirst' if first else 'sumfirst'}"
                    impls[tag] = [triton_call(s, xb, rb, w, first) for s in sets]
            names = list(impls)
            for pattern in ("same", "rotating", "consumer"):
                calls = calls_per_graph(OP, rows, hidden, dtype, 1 if pattern == "same" else n)
                for k in range(ROUNDS):
                    j = (k + p) % len(names)
                    for name in names[j:] + names[:j]:
                        step = pattern_step(OP, pattern, impls[name])
                        times.setdefault((pattern, name), []).append(graph_us(step, calls))
                        del step
        for pattern in ("same", "rotating", "consumer"):
            med = {nm: statistics.median(t) for (pt, nm), t in times.items() if pt == pattern}
            base = med["fusedops"]
            line = " ".join(
                f"{nm}={100 * (v / base - 1):+.1f}%" for nm, v in med.items() if nm != "fusedops"
            )
            print(f"float32 {rows}x{hidden} {pattern:8s} fusedops={base:.2f} {line}", flush=True)
            for nm, v in med.items():
                out.append([OP, "float32", rows, hidden, pattern, nm, f"{v:.3f}"])
        del held
    with open(out_csv, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["op", "dtype", "rows", "hidden", "pattern", "impl", "us"])
        w.writerows(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
