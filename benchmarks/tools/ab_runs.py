"""Time two wheels on the same shapes in one device call, taking turns, then compare them.

    python benchmarks/tools/ab_runs.py --base BASE.whl --new NEW.whl --out DIR
        [--order base,new,new,base] [--timeout 120] [--margin 1]
        -- GPU_SWEEP_ARGS...

How every kernel change in benchmarks/NOTES.md is judged, as one command instead of
a shell loop per session. Each wheel is installed once with `pip install --no-deps
--no-index --target` into a fresh directory of its own (beside torch, which the machine
already has; the tool checks that fusedops is imported from there), and gpu_sweep.py
runs once per entry of --order with that directory first on PYTHONPATH:
DIR/ab-1-base.csv, DIR/ab-2-new.csv, ... with the log of each run beside it. The
sweep's arguments after `--` are required (its defaults are every implementation and
shape, far past any timeout); --csv and --label are the tool's. The builds take turns
within one call because machines differ between calls by more than runs differ within
one. At the end sweep_ab.py compares the two builds (each build's fastest run per
shape), and its summary is printed and written to DIR/ab.txt. A run that fails or times out stops the tool with its log's tail: an A/B
with a missing run would compare other shapes. Rivals the sweep times (Liger) are not
installed here: they import through the PYTHONPATH the tool is started with (after the
wheel's directory), so install them into a directory of their own first, or the sweep
skips them without a word (v33's Liger control had no rows). A script, not a test.

Example (the band of the wave-and-tail split, v28):

    python benchmarks/tools/ab_runs.py --base .device/old/*.whl --new .device/head/*.whl \\
        --out $OUT/ab -- --impls fusedops --placements 1 --ops fused_add_rms_norm \\
        --dtypes bfloat16,float16 --rows 133,200,264 --hidden 18432,24576
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TOOLS = Path(__file__).resolve().parent
GPU_SWEEP = TOOLS.parent / "gpu_sweep.py"
SWEEP_AB = TOOLS / "sweep_ab.py"
LABELS = ("base", "new")
OWN_SWEEP_OPTIONS = ("--csv", "--label")  # set per run by this tool


def parse_order(text: str) -> list[str]:
    """The run order: labels base and new, each at least twice (the noise needs two runs)."""
    order = [label.strip() for label in text.split(",") if label.strip()]
    unknown = sorted(set(order) - set(LABELS))
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown labels {unknown}: use {', '.join(LABELS)}")
    for label in LABELS:
        if order.count(label) < 2:
            raise argparse.ArgumentTypeError(f"{label} runs {order.count(label)} times: at least 2")
    return order


def wheel(text: str) -> Path:
    path = Path(text)
    if path.suffix != ".whl" or not path.is_file():
        raise argparse.ArgumentTypeError(f"{text}: not a wheel file")
    return path


def run_paths(out: Path, order: list[str]) -> list[tuple[str, Path]]:
    """(label, CSV path) of each run, numbered from 1 in run order: ab-1-base.csv, ..."""
    return [(label, out / f"ab-{n}-{label}.csv") for n, label in enumerate(order, start=1)]


def site_env(site: Path) -> dict[str, str]:
    """The environment with `site` first on PYTHONPATH."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(site), env.get("PYTHONPATH")]))
    return env


def install(whl: Path, target: Path) -> None:
    """`whl` alone in a fresh `target` (pip --target leaves an existing package in
    place with only a warning), and fusedops importable from there."""
    shutil.rmtree(target, ignore_errors=True)
    cmd = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index"]
    cmd += ["--target", str(target), str(whl)]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"installing {whl} failed:\n{done.stderr.strip()}")
    probe = [sys.executable, "-c", "import fusedops; print(fusedops.__file__)"]
    found = subprocess.run(probe, capture_output=True, text=True, env=site_env(target), check=False)
    if found.returncode != 0 or not found.stdout.strip().startswith(str(target.resolve())):
        where = found.stdout.strip() or found.stderr.strip()
        raise SystemExit(f"fusedops from {whl} is not what imports with {target} first: {where}")


def own_option(arg: str) -> str | None:
    """Which of OWN_SWEEP_OPTIONS `arg` sets, as argparse reads it (--csv=x, --lab x)."""
    name = arg.split("=", 1)[0]
    if len(name) < 3 or not name.startswith("--"):
        return None
    return next((o for o in OWN_SWEEP_OPTIONS if o.startswith(name)), None)


def tail(path: Path, lines: int = 15) -> str:
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])


def sweep(csv: Path, label: str, site: Path, args: list[str], timeout: float) -> None:
    """One gpu_sweep.py run of the build installed in `site`; its output goes to CSV.log."""
    env = site_env(site)
    cmd = [sys.executable, str(GPU_SWEEP), "--csv", str(csv), "--label", label, *args]
    log = csv.with_suffix(".log")
    start = time.monotonic()
    with log.open("w") as out:
        try:
            code = subprocess.run(
                cmd, stdout=out, stderr=subprocess.STDOUT, env=env, timeout=timeout
            )
        except subprocess.TimeoutExpired:
            raise SystemExit(f"{csv.name}: timed out after {timeout:.0f} s\n{tail(log)}") from None
    if code.returncode != 0:
        raise SystemExit(f"{csv.name}: gpu_sweep.py exited {code.returncode}\n{tail(log)}")
    print(f"{csv.name}: {time.monotonic() - start:.0f} s", flush=True)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    split = argv.index("--") if "--" in argv else len(argv)
    ours, sweep_args = argv[:split], argv[split + 1 :]
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", type=wheel, required=True, help="the base build's wheel")
    parser.add_argument("--new", type=wheel, required=True, help="the changed build's wheel")
    parser.add_argument("--out", type=Path, required=True, help="directory for the CSVs and logs")
    parser.add_argument("--order", type=parse_order, default="base,new,new,base")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per sweep run")
    parser.add_argument("--margin", type=float, default=1.0, help="sweep_ab.py's --margin, percent")
    args = parser.parse_args(ours)
    if not sweep_args:
        parser.error("give gpu_sweep.py's arguments after --, e.g. -- --impls fusedops --rows 128")
    taken = sorted({o for a in sweep_args if (o := own_option(a))})
    if taken:
        parser.error(
            f"this tool sets {' and '.join(taken)} per run: leave it out of the sweep's arguments"
        )
    args.out.mkdir(parents=True, exist_ok=True)
    runs = run_paths(args.out, args.order)
    with tempfile.TemporaryDirectory(prefix="ab-runs-") as tmp:
        sites = {label: Path(tmp) / label for label in LABELS}
        for label in LABELS:
            install(getattr(args, label), sites[label])
        for label, csv in runs:
            sweep(csv, label, sites[label], sweep_args, args.timeout)
    compare = [sys.executable, str(SWEEP_AB), "--margin", str(args.margin), "--list"]
    compare += ["--base", *(str(c) for lab, c in runs if lab == "base")]
    compare += ["--new", *(str(c) for lab, c in runs if lab == "new")]
    result = subprocess.run(compare, capture_output=True, text=True, check=False)
    summary = result.stdout + result.stderr
    (args.out / "ab.txt").write_text(summary)
    print(summary, end="")
    return result.returncode


if __name__ == "__main__":
    raise SystemExit(main())
