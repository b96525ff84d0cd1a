"""Plots cpu_bench.py CSVs: achieved bandwidth per shape, one figure per op.

    python benchmarks/plot_cpu.py OUT_DIR CSV [--prefix NAME]

One figure per op (rms_norm, fused_add_rms_norm, silu_and_mul), a row of panels
per direction and a column per dtype; the x axis is the benchmarked shape, the y axis GB/s over
the fewest bytes that must move (the CSV's own byte count); one line per
implementation (fusedops, eager, torch.compile) and the copy of as many bytes,
timed in the same turns, as the dashed ceiling; dotted, the same copy into an
output allocated on every call (the ceiling of an out-of-place op, cpu_bench.py). cpu_bench.py calls `plot` on
the CSV it has just written; this entry point redraws an old one.
"""

from __future__ import annotations

import argparse
import csv
import sys
from collections import defaultdict
from itertools import product
from pathlib import Path

OPS = ("rms_norm", "fused_add_rms_norm", "silu_and_mul")
IMPLS = {  # CSV column -> legend and style
    "fusedops_ms": ("fusedops", dict(color="tab:blue", marker="o")),
    "compile_ms": ("torch.compile", dict(color="tab:orange", marker="s")),
    "eager_ms": ("eager", dict(color="tab:green", marker="^")),
    "copy_ms": ("copy (ceiling)", dict(color="black", linestyle="--", marker="_")),
    # Older CSVs have no fresh copy: its line is left out there.
    "fresh_copy_ms": ("copy to a fresh output", dict(color="gray", linestyle=":", marker="_")),
}


def load(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


def plot(rows: list[dict[str, str]], out_dir: Path, prefix: str) -> list[Path]:
    """Writes OUT_DIR/<prefix><op>.png for each op in rows; returns the paths."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for op in OPS:
        panels: dict[tuple[str, str], list[dict[str, str]]] = defaultdict(list)
        for r in rows:
            if r["op"] == op:
                panels[(r["direction"], r["dtype"])].append(r)
        if not panels:
            continue
        directions = sorted({d for d, _ in panels}, key=("fwd", "bwd").index)
        dtypes = sorted({t for _, t in panels})
        fig, axes = plt.subplots(
            len(directions),
            len(dtypes),
            figsize=(4.2 * len(dtypes), 3.4 * len(directions)),
            squeeze=False,
        )
        for (i, direction), (j, dtype) in product(enumerate(directions), enumerate(dtypes)):
            ax, panel = axes[i][j], panels.get((direction, dtype), [])
            ax.set_title(f"{op} {direction} {dtype}", fontsize=9)
            if not panel:
                ax.set_axis_off()
                continue
            shapes = [r["shape"] for r in panel]
            # The CSV's GB/s is fusedops's: bytes = GB/s * ms * 1e6, the same for every impl.
            nbytes = [float(r["gbps"]) * float(r["fusedops_ms"]) * 1e6 for r in panel]
            for column, (name, style) in IMPLS.items():
                if column not in panel[0]:
                    continue
                gbps = [b / float(r[column]) / 1e6 for b, r in zip(nbytes, panel, strict=True)]
                ax.plot(range(len(panel)), gbps, label=name, **style)
            ax.set_xticks(range(len(panel)), shapes, rotation=30, ha="right", fontsize=7)
            ax.set_xlim(-0.5, len(panel) - 0.5)
            ax.set_ylabel("GB/s")
            ax.set_ylim(bottom=0)
            ax.grid(alpha=0.3)
        axes[0][0].legend(fontsize=7)
        first = rows[0]
        fig.suptitle(f"CPU, {first['threads']} threads, git {first['git']}, {first['date_utc']}")
        fig.tight_layout()
        path = out_dir / f"{prefix}{op}.png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        written.append(path)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("csv", type=Path)
    parser.add_argument("--prefix", default="cpu-", help="file name prefix (default: cpu-)")
    args = parser.parse_args(argv)
    if not args.csv.is_file():
        parser.error(f"no such CSV: {args.csv}")
    rows = load(args.csv)
    if not rows:
        parser.error(f"{args.csv}: no rows")
    for path in plot(rows, args.out_dir, args.prefix):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
