"""The release's own steps, as functions: what release.yml runs and what a rehearsal runs.

    python -m pipeline release collect DIST --cells ID [ID ...] [--tag vX.Y.Z]
        one wheel per cell and one public sdist, nothing else; writes each wheel's
        .metadata (PEP 658) and DIST/SHA256SUMS
    python -m pipeline release rehearse [--out dist/release] [--cells ID ...]
        the release on this machine: sdist (and a wheel built from it), every
        buildable cell through the gate, the per-variant indexes, the PyPI
        directory (gate + twine check --strict) and SHA256SUMS

release.yml runs `collect` in its collect job; `nox -s release_dry_run` runs
`rehearse`, which calls the same functions as the workflow's steps (sdist,
build, index, PyPI wheel, collect). GitHub itself (draft release, upload,
Pages, PyPI upload) is the only part a rehearsal cannot run.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from packaging.utils import (
    InvalidSdistFilename,
    InvalidWheelFilename,
    parse_sdist_filename,
    parse_wheel_filename,
)
from packaging.version import Version

from . import build, gate, index, matrix, pypi_wheel
from .cell import PROJECT, Cell
from .rules import REPO, Variant, base_version
from .toolchain import ToolchainError
from .toolchain.python_env import build_python, given_torch_python


class ReleaseError(RuntimeError):
    pass


def log(message: str) -> None:
    print(f"[pipeline release] {message}", file=sys.stderr, flush=True)


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def write_sums(dist: Path) -> Path:
    """DIST/SHA256SUMS over every wheel and sdist, in `sha256sum --check` format."""
    files = sorted([*dist.glob("*.whl"), *dist.glob("*.tar.gz")])
    out = dist / "SHA256SUMS"
    out.write_text("".join(f"{sha256(f)}  {f.name}\n" for f in files))
    return out


def collection_problems(dist: Path, cells: Sequence[Cell], version: str) -> list[str]:
    """What is wrong with a release directory: every cell's wheel once, one public sdist, nothing else."""
    problems = []
    wheels = sorted(dist.glob("*.whl"))
    sdists = sorted(dist.glob("*.tar.gz"))
    want = {c.wheel_prefix(version): c.id for c in cells}
    seen: dict[str, str] = {}
    for wheel in wheels:
        try:
            name, ver, _, _ = parse_wheel_filename(wheel.name)
        except InvalidWheelFilename as err:
            problems.append(f"{wheel.name}: not a wheel name ({err})")
            continue
        if name != PROJECT or ver.public != version:
            problems.append(f"{wheel.name}: not {PROJECT} {version}")
            continue
        owners = [
            cid
            for prefix, cid in want.items()
            if wheel.name.startswith(prefix) and "manylinux" in wheel.name
        ]
        if not owners:
            problems.append(
                f"{wheel.name}: belongs to no cell of this release (or is not manylinux)"
            )
        for cid in owners:
            if cid in seen:
                problems.append(f"cell {cid} has two wheels: {seen[cid]} and {wheel.name}")
            seen[cid] = wheel.name
    problems += [f"cell {cid}: no wheel in {dist}" for cid in want.values() if cid not in seen]
    if len(sdists) != 1:
        problems.append(f"expected one sdist, found {[s.name for s in sdists]}")
    for sdist in sdists:
        try:
            name, ver = parse_sdist_filename(sdist.name)
        except InvalidSdistFilename as err:
            problems.append(f"{sdist.name}: not an sdist name ({err})")
            continue
        if ver.local or str(ver) != version:
            problems.append(
                f"{sdist.name}: an sdist must carry the public version {version} (PyPI refuses local versions)"
            )
    return problems


def collect(dist: Path, cells: Sequence[Cell], version: str) -> Path:
    """Check a release directory, write each wheel's PEP 658 `.metadata` file (uploaded
    beside it, so the Pages index can serve metadata) and SHA256SUMS.

    ReleaseError lists every problem before anything is written.
    """
    if problems := collection_problems(dist, cells, version):
        raise ReleaseError("the release files are not right:\n  " + "\n  ".join(problems))
    index.write_metadata_files(dist)
    return write_sums(dist)


def build_sdist(out: Path) -> Path:
    """`python -m build --sdist` of the checkout: no torch, no toolkit, the public version."""
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="fusedops-sdist-") as tmp:
        cmd = [sys.executable, "-m", "build", "--sdist", "--outdir", tmp, str(REPO)]
        log("$ " + " ".join(cmd))
        if subprocess.run(cmd, check=False, stdout=sys.stderr).returncode != 0:
            raise ReleaseError("python -m build --sdist failed (log above)")
        (made,) = Path(tmp).glob("*.tar.gz")
        target = out / made.name
        shutil.move(str(made), target)
    return target


def wheel_from_sdist(sdist: Path, python: Path, out: Path) -> Path:
    """Build a CPU wheel from the sdist against `python`'s torch, as a user would."""
    cmd = [
        str(python),
        "-m",
        "pip",
        "wheel",
        "--no-build-isolation",
        "--no-deps",
        "-w",
        str(out),
        str(sdist),
    ]
    log("$ FUSEDOPS_CUDA=0 " + " ".join(cmd))
    env = {**os.environ, "FUSEDOPS_CUDA": "0"}
    env.pop("FUSEDOPS_CELL", None)
    if subprocess.run(cmd, env=env, check=False, stdout=sys.stderr).returncode != 0:
        raise ReleaseError(f"the sdist {sdist.name} does not build into a wheel (log above)")
    (wheel,) = out.glob("fusedops-*.whl")
    return wheel


def twine_check(files: Sequence[Path]) -> None:
    cmd = [sys.executable, "-m", "twine", "check", "--strict", *map(str, files)]
    log("$ " + " ".join(cmd))
    if subprocess.run(cmd, check=False, stdout=sys.stderr).returncode != 0:
        raise ReleaseError("twine check --strict failed (log above)")


@dataclass(frozen=True)
class Rehearsal:
    dist: Path  # wheels + sdist + SHA256SUMS, as the GitHub release would hold them
    index: Path
    pypi: Path
    cells: tuple[Cell, ...]


def rehearse(
    out: Path, cells: Sequence[Cell], *, torch_python: Path | str | None = None
) -> Rehearsal:
    """The release's steps on this machine, for `cells` (all must be buildable here).

    `torch_python` is the interpreter every build uses instead of the cached torch
    envs (see `build.build_cell`).
    """
    version = base_version()
    # A user's source build: the stable CPU cell's torch env builds a wheel from the sdist.
    stable_cpu = matrix.select(
        matrix.expand(), abi="stable", variant=Variant(None), platform=cells[0].platform.name
    )
    cpu = stable_cpu[0] if stable_cpu else None
    if torch_python is not None:  # a wrong one fails before anything is removed or built
        needs = {(str(c.torch), c.python, c.variant) for c in (cpu, *cells) if c is not None}
        for torch, python, variant in sorted(needs, key=str):
            torch_python = given_torch_python(
                torch_python, torch, python, variant=variant, log=lambda m: None
            )
    if out.exists():
        shutil.rmtree(out)
    dist, idx, pypi = out / "dist", out / "index", out / "pypi"
    sdist = build_sdist(dist)
    if cpu is not None:
        python = build_python(
            str(cpu.torch), cpu.python, variant=cpu.variant, given=torch_python, log=log
        )
        with tempfile.TemporaryDirectory(prefix="fusedops-from-sdist-") as tmp:
            made = wheel_from_sdist(sdist, python, Path(tmp))
            if Version(parse_wheel_filename(made.name)[1].public) != Version(version):
                raise ReleaseError(f"the sdist built {made.name}, not version {version}")
            log(f"the sdist builds: {made.name}")
    for cell in cells:
        build.build_cell(cell, dist, torch_python=torch_python, log=log)
    sums = collect(dist, cells, version)
    log(f"collected: {sums}")
    index.build_index(dist, idx)
    parts = [c for c in cells if c.pypi_part]
    if parts:
        # The PyPI wheel from the parts built here (the release adds CUDA 12's).
        wheels = [
            dist / next(p.name for p in dist.glob(f"fusedops-{c.version(version)}-*.whl"))
            for c in parts
        ]
        wheel = pypi_wheel.assemble(wheels, pypi)
        report = gate.verify(wheel, smoke=False, log=log)
        print(report.table(), flush=True)
        if not report.ok:
            raise ReleaseError(f"the PyPI wheel {wheel.name} failed the gate")
        shutil.copy2(sdist, pypi / sdist.name)
        twine_check(sorted(pypi.iterdir()))
    return Rehearsal(dist, idx, pypi, tuple(cells))


def _cells(ids: Sequence[str] | None, buildable_only: bool) -> list[Cell]:
    if ids:
        return [matrix.by_id(i) for i in ids]
    cells = matrix.select(
        matrix.expand(),
        abi="stable",
        platform=matrix.this_platform(),
        buildable_here=buildable_only,
    )
    local = build.local_cell().variant  # finding the toolkit runs nvcc: once
    return [c for c in cells if c.variant.is_cpu or c.variant == local]


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="pipeline release", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="step", required=True)
    c = sub.add_parser("collect", help="check a release directory, write SHA256SUMS")
    c.add_argument("dist", type=Path)
    c.add_argument("--cells", nargs="+", required=True, help="the cell ids the release built")
    c.add_argument(
        "--tag", help="vX.Y.Z: the files must carry this version (default: the source's)"
    )
    r = sub.add_parser("rehearse", help="the release on this machine")
    r.add_argument("--out", type=Path, default=REPO / "dist" / "release")
    r.add_argument("--cells", nargs="+", help="cell ids (default: this machine's stable cells)")
    r.add_argument(
        "--torch-python",  # kept as typed (see `pipeline build`)
        help="build with this interpreter instead of cached torch envs (see `pipeline build`)",
    )
    args = p.parse_args(argv)
    try:
        if args.step == "collect":
            if not args.dist.is_dir():
                raise ReleaseError(f"{args.dist} is not a directory")
            version = args.tag.removeprefix("v") if args.tag else base_version()
            print(collect(args.dist, [matrix.by_id(i) for i in args.cells], version))
        else:
            out = build.check_out_dir(args.out)
            result = rehearse(
                out, _cells(args.cells, buildable_only=True), torch_python=args.torch_python
            )
            print(
                f"rehearsal done: {result.dist} ({len(result.cells)} cells), {result.index}, {result.pypi}"
            )
    except (ReleaseError, build.BuildError, ToolchainError, LookupError, matrix.MatrixError) as err:
        print(f"pipeline release {args.step}: error: {err}", file=sys.stderr)
        return 1
    return 0
