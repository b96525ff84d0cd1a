"""pipeline.release: the release's own steps (collect, the rehearsal) and their refusals."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
import wheelkit as wk

from pipeline import matrix, release
from pipeline.rules import base_version
from pipeline.toolchain import ToolchainError
from pipeline.toolchain.python_env import given_torch_python

VERSION = base_version()
CPU = matrix.by_id("stable-cpu-x86_64")
CU130 = matrix.by_id("stable-cu130-x86_64")
PLAT = "manylinux_2_28_x86_64"


def wheel_of(cell, dist: Path, version: str = VERSION, plat: str = PLAT) -> Path:
    local = f"{version}+{cell.local_version}"
    files = {
        "fusedops/__init__.py": b"",
        "fusedops/_build_info.py": wk.build_info_source(version=local),
    }
    return wk.write_wheel(dist, local, f"{cell.wheel_tag}-{plat}", files)


def sdist_of(dist: Path, version: str = VERSION) -> Path:
    path = dist / f"fusedops-{version}.tar.gz"
    with tarfile.open(path, "w:gz") as tf:
        info = tarfile.TarInfo(f"fusedops-{version}/PKG-INFO")
        data = f"Name: fusedops\nVersion: {version}\n".encode()
        info.size = len(data)
        import io

        tf.addfile(info, io.BytesIO(data))
    return path


@pytest.fixture
def dist(tmp_path: Path) -> Path:
    d = tmp_path / "dist"
    d.mkdir()
    wheel_of(CPU, d)
    wheel_of(CU130, d)
    sdist_of(d)
    return d


def test_collect_writes_sums_and_metadata(dist: Path) -> None:
    sums = release.collect(dist, [CPU, CU130], VERSION)
    lines = sums.read_text().splitlines()
    files = sorted(p.name for p in [*dist.glob("*.whl"), *dist.glob("*.tar.gz")])
    assert [line.split("  ")[1] for line in lines] == files
    for line in lines:
        digest, name = line.split("  ")
        assert hashlib.sha256((dist / name).read_bytes()).hexdigest() == digest
    # PEP 658: each wheel's METADATA beside it, uploaded with the release assets
    assert sorted(p.name for p in dist.glob("*.whl.metadata")) == sorted(
        p.name + ".metadata" for p in dist.glob("*.whl")
    )
    done = subprocess.run(["sha256sum", "--check", "--strict", "SHA256SUMS"], cwd=dist, check=False)
    assert done.returncode == 0


@pytest.mark.parametrize(
    ("change", "fragment"),
    [
        (lambda d: next(d.glob("*+cpu-*.whl")).unlink(), "cell stable-cpu-x86_64: no wheel in"),
        (lambda d: wheel_of(CPU, d, plat="manylinux_2_34_x86_64"), "cell stable-cpu-x86_64 has two wheels"),
        (lambda d: wheel_of(CPU, d, plat="linux_x86_64") and next(d.glob("*+cpu-*manylinux*")).unlink(), "belongs to no cell of this release (or is not manylinux)"),
        (lambda d: next(d.glob("*.tar.gz")).rename(d / f"fusedops-{VERSION}+cu130.tar.gz"), "an sdist must carry the public version"),
        (lambda d: sdist_of(d, "0.0.1"), "expected one sdist"),
        (lambda d: wheel_of(matrix.by_id("stable-cu132-x86_64"), d), "belongs to no cell of this release"),
        (lambda d: (d / "fusedops-latest.whl").write_bytes(b""), "not a wheel name"),
    ],
)  # fmt: skip
def test_collect_refuses_a_wrong_release_directory(dist: Path, change, fragment: str) -> None:
    change(dist)
    with pytest.raises(release.ReleaseError) as info:
        release.collect(dist, [CPU, CU130], VERSION)
    assert fragment in str(info.value)
    assert not (dist / "SHA256SUMS").exists(), "nothing is written when the files are wrong"


def test_collect_checks_the_tag(dist: Path) -> None:
    problems = release.collection_problems(dist, [CPU, CU130], "9.9.9")
    assert any("not fusedops 9.9.9" in p for p in problems), problems


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pipeline", "release", *args],
        capture_output=True, text=True, check=False, cwd=Path(__file__).resolve().parents[2],
    )  # fmt: skip


def test_cli_collect_and_its_errors(dist: Path, tmp_path: Path) -> None:
    ok = cli("collect", str(dist), "--cells", CPU.id, CU130.id, "--tag", f"v{VERSION}")
    assert ok.returncode == 0 and ok.stdout.strip().endswith("SHA256SUMS"), ok.stderr
    bad = cli("collect", str(dist), "--cells", CPU.id, "--tag", f"v{VERSION}")
    assert bad.returncode == 1 and "belongs to no cell of this release" in bad.stderr
    assert "Traceback" not in bad.stderr
    missing = cli("collect", str(tmp_path / "nope"), "--cells", CPU.id)
    assert missing.returncode == 1 and "is not a directory" in missing.stderr
    unknown = cli("collect", str(dist), "--cells", "no-such-cell")
    assert unknown.returncode == 1 and "no cell 'no-such-cell'" in unknown.stderr
    (tmp_path / "r" / "dist").mkdir(parents=True)
    (tmp_path / "r" / "dist" / "last-rehearsal").write_text("")
    given = cli("rehearse", "--out", str(tmp_path / "r"), "--torch-python", str(tmp_path / "nope"))
    assert given.returncode == 1 and given.stderr.endswith(
        f"pipeline release rehearse: error: --torch-python {tmp_path / 'nope'}: not an executable file\n"
    )
    # refused before the last rehearsal is removed or the sdist is built
    assert [p.name for p in (tmp_path / "r" / "dist").iterdir()] == ["last-rehearsal"]
    out = cli("rehearse", "--out", "/proc/no-such-dir")
    assert (
        out.returncode == 1 and "cannot write there" in out.stderr and "Traceback" not in out.stderr
    )


def test_rehearse_checks_the_given_interpreter_for_every_cell_first(tmp_path: Path) -> None:
    """An interpreter that suits the CPU cell but not the CUDA one is refused before
    the last rehearsal is removed or anything is built."""
    cpu_torch = json.dumps([str(CPU.torch), None])  # a CPU-only build of the cells' torch
    assert CU130.torch == CPU.torch and CU130.python == CPU.python
    fake = wk.build_python_stand_in(tmp_path / "bin" / "python", f"echo '{cpu_torch}'", CPU.python)
    last = tmp_path / "r" / "dist" / "last-rehearsal"
    last.parent.mkdir(parents=True)
    last.write_text("")
    out = cli("rehearse", "--out", str(tmp_path / "r"), "--cells", CPU.id, CU130.id, "--torch-python", str(fake))  # fmt: skip
    assert out.returncode == 1 and out.stderr.endswith(
        f"pipeline release rehearse: error: --torch-python {fake}: torch {CPU.torch} is a "
        "CPU-only build; variant cu130 needs CUDA 13.x\n"
    ), out.stderr
    assert [p.name for p in last.parent.iterdir()] == [last.name]


def this_interpreter_builds(cell: matrix.Cell) -> bool:
    """Whether this interpreter passes `--torch-python`'s checks for `cell`. Under
    `nox -s tests` (which sets FUSEDOPS_STABLE_WHEEL) it must: the session holds the
    cell's torch, and a second copy in the cache is ~5 GB that CI machines lack."""
    try:
        given_torch_python(
            Path(sys.executable), str(cell.torch), cell.python, variant=cell.variant, log=print
        )
    except ToolchainError as err:
        if os.environ.get("FUSEDOPS_STABLE_WHEEL"):
            pytest.fail(f"nox -s tests' own interpreter cannot build {cell.id}: {err}")
        return False
    return True


@pytest.mark.slow
def test_rehearsal_of_the_cpu_cell(tmp_path: Path) -> None:
    """The release's steps for the CPU cell, as `nox -s release_dry_run` runs them:
    a torch-free public sdist (and a wheel built from it), the cell through the
    gate, SHA256SUMS and metadata, the indexes, and the PyPI wheel (gated and
    twine-checked). The CUDA 13 cell is rehearsed by `nox -s release_dry_run`."""
    for tool in ("build", "twine", "auditwheel"):
        if subprocess.run([sys.executable, "-c", f"import {tool}"], check=False).returncode:
            pytest.skip(f"{tool} is not installed here (nox -s tests installs it)")
    out = tmp_path / "release"
    cmd = [
        sys.executable,
        "-m",
        "pipeline",
        "release",
        "rehearse",
        "--out",
        str(out),
        "--cells",
        CPU.id,
    ]
    given = this_interpreter_builds(CPU)
    if given:
        cmd += ["--torch-python", sys.executable]
    done = subprocess.run(
        cmd,
        capture_output=True, text=True, check=False, cwd=Path(__file__).resolve().parents[2],
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-4000:]
    names = sorted(p.name for p in (out / "dist").iterdir())
    assert f"fusedops-{VERSION}.tar.gz" in names and "SHA256SUMS" in names
    assert any(n.startswith(f"fusedops-{VERSION}+cpu-cp310-abi3-manylinux") for n in names), names
    assert (out / "index" / "cpu" / "fusedops" / "index.html").is_file()
    pypi = sorted(p.name for p in (out / "pypi").iterdir())
    assert pypi == [
        f"fusedops-{VERSION}-cp310-abi3-{next(n.split('-', 4)[4] for n in names if n.endswith('.whl') and '+cpu' in n)}",
        f"fusedops-{VERSION}.tar.gz",
    ], pypi
    assert "the sdist builds: fusedops-" in done.stderr and "twine check --strict" in done.stderr
    if given:
        assert f"building with {Path(sys.executable).absolute()}: torch " in done.stderr
        assert "torch env " not in done.stderr  # no cached env was made or used
    shutil.rmtree(out)
