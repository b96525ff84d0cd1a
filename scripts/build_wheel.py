"""Build, repair and verify the wheel of one matrix cell: what `nox -s build/wheel` run.

    python scripts/build_wheel.py [--cuda X.Y|cpu] [--torch A.B.C] [--python 3.N]
                                  [--abi stable|classic] [--out wheelhouse] [--check-reproducible]

With no cell arguments it builds this machine's cell: the stable wheel for the
system CUDA toolkit (or cpu without one). Steps, each logged with its time:
1. the cell from scripts/matrix.json (a clear error lists close cells),
2. its toolchain (scripts/toolchain.py: CUDA_HOME, a cached torch environment,
   ccache), 3. `pip wheel --no-build-isolation` in that environment,
4. auditwheel repair (scripts/repair_wheel.py), 5. the verification gate with a
CPU smoke test in the torch environment (scripts/verify_wheel.py).
`--check-reproducible` builds a second time from a clean tree and fails unless
the repaired wheels are byte-identical.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "scripts"))

import matrix  # noqa: E402
import toolchain  # noqa: E402

from build_support.cuda_toolkit import find_toolkit  # noqa: E402


class BuildError(RuntimeError):
    pass


def log(message: str) -> None:
    print(f"[build_wheel] {message}", file=sys.stderr, flush=True)


def local_cell() -> dict:
    """The stable cell of this machine's CUDA toolkit (cpu without one)."""
    toolkit = find_toolkit()
    cuda = toolkit.version if toolkit else "cpu"
    cells = matrix.select(matrix.expand(), abi="stable", cuda=cuda, platform=matrix.this_platform())
    if len(cells) != 1:
        raise BuildError(
            f"no stable cell in scripts/matrix.json for CUDA {cuda} on {matrix.this_platform()}; "
            "use `nox -s wheel -- --cuda ... --torch ... --python ...`"
        )
    log(f"this machine: CUDA toolkit {cuda} ({toolkit.source if toolkit else 'none found'})")
    return cells[0].to_dict()


def requested_cell(cuda: str, torch: str, python: str, abi: str | None) -> dict:
    """The matrix cell for the request, built against exactly the torch/python asked for.

    A stable cell covers many torch/python versions; building it against another
    one it covers gives the same wheel name, so the request wins.
    """
    try:
        cell = matrix.find_cell(cuda, torch, python, abi).to_dict()
    except LookupError as err:
        raise BuildError(str(err)) from None
    return {**cell, "torch": torch, "python": python}


@contextlib.contextmanager
def timed(step: str) -> Iterator[None]:
    """Logs the step's start and, when it succeeds, how long it took."""
    start = time.monotonic()
    log(f"{step} ...")
    yield
    log(f"{step}: done in {time.monotonic() - start:.1f}s")


def run(cmd: list[str], env: dict[str, str] | None = None) -> str:
    log("$ " + " ".join(cmd))
    proc = subprocess.run(cmd, env=env, cwd=REPO, text=True, check=False, stdout=subprocess.PIPE)
    if proc.returncode != 0:
        print(proc.stdout, flush=True)  # e.g. the gate's table with its FAIL rows
        raise BuildError(f"command failed ({proc.returncode}): {' '.join(cmd)}")
    return proc.stdout


def clean_tree() -> None:
    # setuptools reuses build/ across configurations: a stale _C.*.so of another
    # ABI would end up in the wheel. ccache makes the rebuild cheap.
    shutil.rmtree(REPO / "build", ignore_errors=True)
    for so in (REPO / "src" / "fusedops").glob("_C*.so"):
        so.unlink()


def build_once(cell: dict, python: Path, env: dict[str, str], out_dir: Path) -> Path:
    clean_tree()
    with tempfile.TemporaryDirectory(prefix="fusedops-dist-") as dist:
        with timed(f"compile {cell['id']} (torch {cell['torch']}, Python {cell['python']})"):
            # pip -v streams setup.py's and ninja's progress ([n/m] lines).
            subprocess_env = {**os.environ, **env}
            cmd = [
                str(python),
                "-m",
                "pip",
                "wheel",
                "-v",
                "--no-build-isolation",
                "--no-deps",
                "-w",
                dist,
                ".",
            ]
            log("$ " + " ".join(cmd))
            proc = subprocess.run(cmd, env=subprocess_env, cwd=REPO, check=False)
            if proc.returncode != 0:
                raise BuildError(f"the build failed (exit {proc.returncode}); its log is above")
        built = sorted(Path(dist).glob("fusedops-*.whl"))
        if len(built) != 1:
            raise BuildError(f"expected one wheel, pip produced {[b.name for b in built]}")
        torch_lib = run(
            [str(python), "-c", "import torch, os; print(os.path.dirname(torch.__file__))"]
        )
        out_dir.mkdir(parents=True, exist_ok=True)
        with timed("auditwheel repair"):
            repaired = run(
                [
                    sys.executable,
                    "scripts/repair_wheel.py",
                    str(built[0]),
                    "-w",
                    str(out_dir),
                    "--torch-lib",
                    str(Path(torch_lib.strip()) / "lib"),
                ],
                env={**os.environ, **{k: v for k, v in env.items() if k == "SOURCE_DATE_EPOCH"}},
            )
    return Path(repaired.strip().splitlines()[-1])


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def build_cell(cell: dict, out_dir: Path, *, check_reproducible: bool = False) -> Path:
    log(f"cell {cell['id']}: {json.dumps(cell)}")
    with timed("toolchain"):
        python = toolchain.torch_env(
            cell["torch"], cell["python"], variant=cell["variant"], log=log
        )
        env = toolchain.build_env(cell, log=log)
    start = time.monotonic()
    wheel = build_once(cell, python, env, out_dir)
    seconds = time.monotonic() - start

    if check_reproducible:
        with tempfile.TemporaryDirectory(prefix="fusedops-repro-") as second_dir:
            second = build_once(cell, python, env, Path(second_dir))
            first_hash, second_hash = sha256(wheel), sha256(second)
            if first_hash != second_hash:
                raise BuildError(
                    f"not reproducible: two builds of {cell['id']} differ "
                    f"({first_hash[:12]} vs {second_hash[:12]})"
                )
            log(f"reproducible: both builds are {first_hash}")

    with timed("verification gate"):
        report = run(
            [
                sys.executable,
                "scripts/verify_wheel.py",
                str(wheel),
                "--cell-json",
                json.dumps(cell),
                "--smoke-python",
                str(python),
            ]
        )
        print(report, flush=True)
    size_mb = wheel.stat().st_size / 1e6
    print(f"{wheel}  ({size_mb:.2f} MB, built in {seconds:.0f}s, sha256 {sha256(wheel)[:16]}...)")
    return wheel


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cuda", help="X.Y, cuXYZ or cpu (default: this machine's toolkit)")
    parser.add_argument("--torch", help="torch version to build against, e.g. 2.14.1")
    parser.add_argument("--python", help="Python version, e.g. 3.11")
    parser.add_argument("--abi", choices=["stable", "classic"])
    parser.add_argument("--out", type=Path, default=REPO / "wheelhouse")
    parser.add_argument(
        "--check-reproducible",
        action="store_true",
        help="build twice and require byte-identical wheels",
    )
    args = parser.parse_args(argv)
    given = [args.cuda, args.torch, args.python]
    if any(given) and not all(given):
        parser.error("give all of --cuda, --torch and --python (or none, for this machine's cell)")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        cell = (
            requested_cell(args.cuda, args.torch, args.python, args.abi)
            if args.cuda
            else local_cell()
        )
        build_cell(cell, args.out.resolve(), check_reproducible=args.check_reproducible)
    except (BuildError, toolchain.ToolchainError) as err:
        print(f"build_wheel: error: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
