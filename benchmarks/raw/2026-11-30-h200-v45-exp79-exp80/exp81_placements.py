"""exp81 over placements (session 63, call J): does the plain-load Triton forms' lead over ours
at the float32 fused add hold where the inputs land elsewhere? As exp81_structure.py (the
same kernel and harness), but each shape is timed on PLACEMENTS sets of inputs, each after
gpu_sweep.py's spacers (0-1 MB and 2-38 MB allocations, as the sweep places its inputs),
the implementations taking turns ROUNDS times on each; the median over placements and
rounds. Run from the repository root with the wheel on PYTHONPATH:

    python benchmarks/raw/2026-11-30-h200-v45-exp79-exp80/exp81_placements.py OUT.csv
"""

import csv
import os
import random
import statistics
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from exp81_structure import (
    OP,
    WARM_UP_GRAPHS,
    calls_per_graph,
    graph_us,
    implementation,
    make_inputs,
    pattern_step,
    shape_input_sets,
    triton_impl,
    warm_up,
)
from gpu_sweep import spacers

PLACEMENTS = 4
ROUNDS = 2
SHAPES = [(torch.float32, 1024, 2048), (torch.float32, 512, 4096)]
FORMS = {  # name -> (rows a program, tile, warps, eviction)
    2048: {
        "tri-ind-ef": (2, 2048, 16, "evict_first"),
        "tri-ind-plain": (2, 2048, 16, ""),
        "tri-x2-r2048-w8": (2, 2048, 8, ""),
        "tri-x1-r2048-w8": (1, 2048, 8, ""),
    },
    4096: {
        "tri-ind-ef": (1, 2048, 16, "evict_first"),
        "tri-ind-plain": (1, 2048, 16, ""),
        "tri-x1-r4096-w16": (1, 4096, 16, ""),
    },
}


def main() -> int:
    out_csv = sys.argv[1]
    rng = random.Random(63)
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
            impls = {
                "fusedops": [implementation(OP, "fusedops", s, None) for s in sets],
                "compile-static": [implementation(OP, "compile-static", s, None) for s in sets],
            }
            for name, (xb, rb, w, ev) in FORMS[hidden].items():
                impls[name] = [triton_impl(s, xb, rb, w, ev) for s in sets]
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
            spread = {nm: (min(t), max(t)) for (pt, nm), t in times.items() if pt == pattern}
            line = " ".join(
                f"{nm}={100 * (v / base - 1):+.1f}%" for nm, v in med.items() if nm != "fusedops"
            )
            lo, hi = spread["fusedops"]
            print(
                f"float32 {rows}x{hidden} {pattern:8s} fusedops={base:.2f} ({lo:.2f}-{hi:.2f}) {line}",
                flush=True,
            )
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
