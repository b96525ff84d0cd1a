"""Every environment variable one cell's build needs, from the Cell alone."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Mapping
from pathlib import Path

from ..cell import Cell
from ..rules import REPO
from . import Log
from .compiler_cache import compiler_cache_env
from .cuda import cuda_home, toolset_compilers
from .jobs import default_max_jobs


def source_date_epoch(repo_root: Path = REPO) -> str | None:
    """The last commit's time (reproducible wheel timestamps), or None outside git."""
    try:
        out = subprocess.run(
            ["git", "log", "-1", "--format=%ct"],
            cwd=repo_root,
            capture_output=True,
            text=True,
            check=False,
        )
    except OSError:
        return None
    value = out.stdout.strip()
    return value if out.returncode == 0 and value.isdigit() else None


def build_env(
    cell: Cell,
    *,
    cache_dir: Path | None = None,
    log: Log = print,
    repo_root: Path = REPO,
    env: Mapping[str, str] | None = None,
    compiler_cache: bool = True,
    cuda_home_fn: Callable[..., Path] = cuda_home,
) -> dict[str, str]:
    """The variables (set on top of `env`) that build `cell` with setup.py.

    FUSEDOPS_CELL carries the cell into setup.py, which looks it up again in
    matrix.json: ABI, CUDA, arch list and host compiler all follow from it.
    """
    env = os.environ if env is None else env
    out: dict[str, str] = {"FUSEDOPS_CELL": cell.id}
    path = env.get("PATH", os.defpath)
    nvcc = "nvcc"
    if not cell.variant.is_cpu:
        home = Path(cuda_home_fn(cell.cuda, cache_dir=cache_dir, log=log))
        nvcc = str(home / "bin" / "nvcc")
        out["CUDA_HOME"] = str(home)
        if path.split(os.pathsep)[0] != str(home / "bin"):
            path = os.pathsep.join([str(home / "bin"), path])
        if not env.get("CXX"):
            out |= toolset_compilers(cell.gcc)
    out["MAX_JOBS"] = env.get("MAX_JOBS") or str(default_max_jobs())
    epoch = env.get("SOURCE_DATE_EPOCH") or source_date_epoch(repo_root)
    if epoch:
        out["SOURCE_DATE_EPOCH"] = epoch
    else:
        log("SOURCE_DATE_EPOCH: not a git checkout; wheel timestamps will vary")
    if compiler_cache:
        cc_env = {**env, **{k: v for k, v in out.items() if k in ("CXX",)}}
        out |= compiler_cache_env(
            log, cache_dir=cache_dir, nvcc=nvcc, repo_root=repo_root, env=cc_env
        )
    out["PATH"] = path
    return dict(sorted(out.items()))
