"""Plots gpu_sweep.py CSVs: achieved bandwidth against rows, one figure per op.

    python benchmarks/plot_sweep.py OUT_DIR CSV [CSV ...] [--labels final,v6] [--prefix NAME]

One figure per op in the CSVs (rms_norm, fused_add_rms_norm, silu_and_mul and
its backward: their hidden is the output's width, x being twice as wide), one
panel per (dtype, hidden), rows on the x axis (log), TB/s over the fewest bytes
that must move on the y axis; one line per implementation (fusedops once per
--labels entry), and the device-to-device copy of the same tensor as a dashed
line. Runs on any machine with matplotlib: only the CSV comes from the GPU.
"""

from __future__ import annotations

import argparse
import csv
import sys
from collections import defaultdict
from pathlib import Path

OPS = ("rms_norm", "fused_add_rms_norm", "silu_and_mul", "silu_and_mul_backward")
DTYPES = ("bfloat16", "float16", "float32")
STYLE = {
    "compile": dict(color="tab:orange", marker="s"),
    "compile-static": dict(color="tab:brown", marker="D", linestyle=":"),
    "liger": dict(color="tab:green", marker="^"),
    "copy": dict(color="black", linestyle="--", marker=""),
}
FUSEDOPS_COLORS = ("tab:blue", "tab:gray", "tab:purple", "tab:red")


def load(paths: list[str]) -> list[dict[str, str]]:
    rows: list[dict[str, str]] = []
    for path in paths:
        with open(path, newline="") as f:
            rows += list(csv.DictReader(f))
    return rows


def series(row: dict[str, str]) -> tuple[str, str]:
    """The line a row belongs to: its implementation's name and its call pattern
    (gpu_sweep.py --pattern; a CSV without the column is `same`). Each pattern other
    than the sweep's own is a line of its own, dash-dotted."""
    name = f"fusedops {row['label']}" if row["impl"] == "fusedops" else row["impl"]
    return name, row.get("pattern") or "same"


def plot(rows: list[dict[str, str]], labels: list[str], out_dir: Path, prefix: str) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    keep = [r for r in rows if r["impl"] != "fusedops" or r["label"] in labels]
    gpu = keep[0]["gpu"] if keep else "?"
    written = []
    for op in OPS:
        data: dict[tuple[str, int], dict[str, list[tuple[int, float]]]] = defaultdict(
            lambda: defaultdict(list)
        )
        for r in keep:
            if r["op"] == op:
                key = (r["dtype"], int(r["hidden"]))
                data[key][series(r)].append((int(r["rows"]), float(r["tbps"])))
        if not data:
            continue
        hiddens = sorted({h for _, h in data})
        dtypes = [d for d in DTYPES if any(k[0] == d for k in data)]
        fig, axes = plt.subplots(
            len(dtypes),
            len(hiddens),
            figsize=(4 * len(hiddens), 3.2 * len(dtypes)),
            sharex=True,
            squeeze=False,
        )
        for i, dtype in enumerate(dtypes):
            for j, hidden in enumerate(hiddens):
                ax = axes[i][j]
                for (name, pattern), points in sorted(data[(dtype, hidden)].items()):
                    points.sort()
                    if name.startswith("fusedops"):
                        k = labels.index(name.split(" ", 1)[1])
                        style = dict(
                            color=FUSEDOPS_COLORS[k % 4],
                            marker="o",
                            linewidth=max(0.75, 2 - 0.5 * k),
                        )
                    else:
                        style = dict(STYLE.get(name, {}))
                    if pattern != "same":
                        style["linestyle"] = "-."
                        name = f"{name} ({pattern})"
                    ax.plot(*zip(*points, strict=True), label=name, markersize=3, **style)
                ax.set_xscale("log", base=2)
                ax.set_title(f"{dtype}, hidden {hidden}", fontsize=9)
                ax.grid(True, alpha=0.3)
                if j == 0:
                    ax.set_ylabel("TB/s (fewest bytes)")
                if i == len(dtypes) - 1:
                    ax.set_xlabel("rows")
        handles, names = axes[0][0].get_legend_handles_labels()
        title = op if op.endswith("_backward") else f"{op} forward"
        fig.suptitle(f"{title}, {gpu}: kernel time in a CUDA graph", y=0.995, fontsize=10)
        fig.legend(
            handles,
            names,
            loc="upper center",
            bbox_to_anchor=(0.5, 0.97),
            ncol=len(names),
            fontsize=9,
        )
        fig.tight_layout(rect=(0, 0, 1, 0.93))
        path = out_dir / f"{prefix}{op}.png"
        fig.savefig(path, dpi=80)
        plt.close(fig)
        written.append(path)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("csv", nargs="+")
    parser.add_argument("--labels", default="", help="fusedops runs to draw, by CSV label")
    parser.add_argument("--prefix", default="", help="file name prefix for the figures")
    args = parser.parse_args(argv)
    rows = load(args.csv)
    in_csv = {r["label"] for r in rows if r["impl"] == "fusedops"}
    labels = [x for x in args.labels.split(",") if x] or sorted(in_csv)
    if not in_csv:
        parser.error("the CSVs have no fusedops rows to draw")
    missing = [x for x in labels if x not in in_csv]
    if missing:
        # Otherwise the figures silently lose their fusedops lines.
        parser.error(
            f"--labels {','.join(missing)} not in the CSVs' fusedops rows "
            f"(they have: {','.join(sorted(in_csv)) or 'none'})"
        )
    args.out_dir.mkdir(parents=True, exist_ok=True)
    for path in plot(rows, labels, args.out_dir, args.prefix):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
