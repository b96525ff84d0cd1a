"""s50: run-to-run noise of gpu_sweep.py's silu_and_mul rows between v35's run and v36's, and
the shapes where fusedops trails the faster rival by more than 1% in each run and in both.

    python silu_noise.py   (from anywhere; reads the sweep CSVs one level up)

The CSVs are read, and the faster rival found, by benchmarks/tools/ncu_miss_table.py's
sweep_times and misses. A script for the record, not a test.
"""

import statistics
import sys
from pathlib import Path

RAW = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(RAW.parent / "tools"))
from ncu_miss_table import misses, sweep_times  # noqa: E402

RUN2 = RAW / "2026-11-29-h200-v36-sweep-silu-cb9e3a8-run2.csv"


def of_op(paths, op):
    """(op, dtype, rows, hidden) -> impl -> µs, fastest over `paths`, for `op` only."""
    return {s: t for s, t in sweep_times(paths).items() if s[0] == op}


def gaps(times):
    """shape -> (percent fusedops trails the faster rival by, that rival), every shape."""
    return {
        (op, dtype, rows, hidden): (behind, rival)
        for (op, dtype), rows_of in misses(times, float("-inf")).items()
        for rows, hidden, rival, behind in rows_of
    }


for op, run1 in (
    ("silu_and_mul", RAW / "2026-11-28-h200-v35-sweep-silu-fwd-16byte-run1.csv"),
    ("silu_and_mul_backward", RAW / "2026-11-28-h200-v35-sweep-silu-8fcccda-run1.csv"),
):
    a, b = of_op([run1], op), of_op([RUN2], op)
    assert set(a) == set(b), (len(a), len(b))
    impls = sorted({i for s in a for i in a[s]})
    print(op, len(a), "shapes")
    for i in impls:
        ds = [100 * (b[s][i] / a[s][i] - 1) for s in a if i in a[s] and i in b[s]]
        print(
            f"  {i:9s} run2 vs run1: median {statistics.median(ds):+.2f}%  "
            f"|median| {statistics.median(map(abs, ds)):.2f}%  max |{max(map(abs, ds)):.2f}|%"
        )
    g1, g2, gb = gaps(a), gaps(b), gaps(of_op([run1, RUN2], op))
    m1 = {s for s in g1 if g1[s][0] > 1}
    m2 = {s for s in g2 if g2[s][0] > 1}
    mb = {s for s in gb if gb[s][0] > 1}
    print(
        f"  behind >1%: run1 {len(m1)}, run2 {len(m2)}, both runs {len(m1 & m2)}, "
        f"fastest-of-two each {len(mb)}"
    )
    for s in sorted(m1 & m2, key=lambda s: (s[1], s[2], s[3])):
        print(
            f"    {s[1]:8s} {s[2]:6d}x{s[3]:<6d} run1 {g1[s][0]:+.1f}% ({g1[s][1]}) "
            f"run2 {g2[s][0]:+.1f}% ({g2[s][1]}) best {gb[s][0]:+.1f}% ({gb[s][1]})"
        )
    print(
        "  from 1024 rows, behind in either run:",
        sorted(
            (s[1], s[2], s[3], round(g1[s][0], 1), round(g2[s][0], 1))
            for s in (m1 | m2)
            if s[2] >= 1024
        ),
    )
