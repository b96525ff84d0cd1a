"""s50: run-to-run noise of gpu_sweep.py's silu_and_mul rows between v35's run and v36's, and
the shapes where fusedops trails the faster rival by more than 1% in each run and in both.

    python silu_noise.py   (from this directory; reads the sweep CSVs one level up)

A script for the record, not a test.
"""

import csv
import statistics
from collections import defaultdict
from pathlib import Path


def load(p, ops):
    d = defaultdict(dict)
    with open(p, newline="") as f:
        for r in csv.DictReader(f):
            if r["op"] in ops:
                key = (r["op"], r["dtype"], int(r["rows"]), int(r["hidden"]))
                d[key][r["impl"]] = float(r["us"])
    return d


R = str(Path(__file__).resolve().parents[1]) + "/"
for op, r1 in (
    ("silu_and_mul", R + "2026-11-28-h200-v35-sweep-silu-fwd-16byte-run1.csv"),
    ("silu_and_mul_backward", R + "2026-11-28-h200-v35-sweep-silu-8fcccda-run1.csv"),
):
    a = load(r1, {op})
    b = load(R + "2026-11-29-h200-v36-sweep-silu-cb9e3a8-run2.csv", {op})
    assert set(a) == set(b), (len(a), len(b))
    impls = sorted({i for s in a for i in a[s]})
    print(op, len(a), "shapes")
    for i in impls:
        ds = [100 * (b[s][i] / a[s][i] - 1) for s in a if i in a[s] and i in b[s]]
        print(
            f"  {i:9s} run2 vs run1: median {statistics.median(ds):+.2f}%  |median| {statistics.median(map(abs, ds)):.2f}%  max |{max(map(abs, ds)):.2f}|%"
        )

    def gaps(t):
        out = {}
        for s, v in t.items():
            rivals = {k: x for k, x in v.items() if k not in ("fusedops", "copy", "eager")}
            k = min(rivals, key=rivals.get)
            out[s] = (100 * (v["fusedops"] / rivals[k] - 1), k)
        return out

    g1, g2 = gaps(a), gaps(b)
    best = {s: {i: min(a[s][i], b[s][i]) for i in a[s] if i in b[s]} for s in a}
    gb = gaps(best)
    m1 = {s for s in a if g1[s][0] > 1}
    m2 = {s for s in b if g2[s][0] > 1}
    mb = {s for s in best if gb[s][0] > 1}
    print(
        f"  behind >1%: run1 {len(m1)}, run2 {len(m2)}, both runs {len(m1 & m2)}, fastest-of-two each {len(mb)}"
    )
    for s in sorted(m1 & m2, key=lambda s: (s[1], s[2], s[3])):
        print(
            f"    {s[1]:8s} {s[2]:6d}x{s[3]:<6d} run1 {g1[s][0]:+.1f}% ({g1[s][1]}) run2 {g2[s][0]:+.1f}% ({g2[s][1]}) best {gb[s][0]:+.1f}% ({gb[s][1]})"
        )
    print(
        "  from 1024 rows, behind in either run:",
        sorted(
            (s[1], s[2], s[3], round(g1[s][0], 1), round(g2[s][0], 1))
            for s in (m1 | m2)
            if s[2] >= 1024
        ),
    )
