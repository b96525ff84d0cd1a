"""Which commit a benchmark measured, for the CSVs of cpu_bench.py and gpu_sweep.py.

The answer is the installed wheel's, not the checkout's: a wheel carried to the
GPU machine is measured from a copy of the tree whose git (if any) may name
another commit, and a wheel built before a commit records the commit before.
Order: FUSEDOPS_COMMIT (set it when neither tells the truth), the wheel's
BUILD_INFO git_sha, `git rev-parse` of this checkout, else "".
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path


def measured_commit() -> str:
    """Seven hex digits, "-dirty" after them for a wheel built from uncommitted
    changes (or what FUSEDOPS_COMMIT says), "" when nothing knows."""
    if os.environ.get("FUSEDOPS_COMMIT"):
        return os.environ["FUSEDOPS_COMMIT"]
    try:
        from fusedops._build_info import BUILD_INFO

        if BUILD_INFO.get("git_sha"):
            # "<sha>-dirty": built from a tree with uncommitted changes (setup.py)
            sha = str(BUILD_INFO["git_sha"])
            return sha[:7] + ("-dirty" if sha.endswith("-dirty") else "")
    except ImportError:  # a source tree without a build: the checkout's commit
        pass
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=Path(__file__).resolve().parent,
            capture_output=True,
            text=True,
            check=False,
        )
    except FileNotFoundError:  # no git on this machine
        return ""
    return out.stdout.strip() if out.returncode == 0 else ""
