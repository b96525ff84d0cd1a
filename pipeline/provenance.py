"""Which commit a build came from, as BUILD_INFO's git_sha records it.

A wheel built from a tree with uncommitted changes to tracked files is not the
commit HEAD names: its git_sha is "<sha>-dirty", so a wheel carried elsewhere
(an A/B on a GPU machine, a benchmark's CSV) cannot pass for that commit.
Untracked and ignored files (build outputs, the generated _build_info.py) do
not count. No git, no repository of its own (an sdist, even one unpacked inside
another checkout), or git refusing the checkout: None.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

DIRTY = "-dirty"


def _git(root: Path, *args: str) -> subprocess.CompletedProcess[str] | None:
    try:
        return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=False)
    except OSError:  # no git on this machine
        return None


def git_commit(root: Path) -> str | None:
    """HEAD's full sha, with DIRTY appended when tracked files differ from it.

    Only a repository whose top level is `root` counts: an sdist unpacked inside
    another project's checkout must not record that project's commit."""
    top = _git(root, "rev-parse", "--show-toplevel")
    if top is None or top.returncode != 0:
        return None
    if Path(top.stdout.strip()).resolve() != Path(root).resolve():
        return None
    head = _git(root, "rev-parse", "HEAD")
    if head is None or head.returncode != 0 or not head.stdout.strip():
        return None
    sha = head.stdout.strip()
    # exit 0: no change to tracked files (staged or not); 1: changes; else unknown
    diff = _git(root, "diff", "--quiet", "HEAD", "--")
    if diff is None or diff.returncode not in (0, 1):
        return None
    return sha + DIRTY if diff.returncode == 1 else sha


def short_commit(sha: object, digits: int = 12) -> str:
    """The first `digits` hex digits, keeping the dirty mark: "69d6f9ea9602-dirty"."""
    text = str(sha)
    dirty = text.endswith(DIRTY)
    if dirty:
        text = text[: -len(DIRTY)]
    return text[:digits] + (DIRTY if dirty else "")
