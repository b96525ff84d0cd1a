"""pipeline.provenance: a wheel built from uncommitted changes says so in its git_sha."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from pipeline.gate import checks
from pipeline.provenance import DIRTY, git_commit, short_commit


def git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=root, capture_output=True, text=True, check=True
    ).stdout.strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    git(tmp_path, "init", "-q")
    git(tmp_path, "config", "user.email", "test@example.com")
    git(tmp_path, "config", "user.name", "test")
    (tmp_path / "kernel.cu").write_text("// v1\n")
    git(tmp_path, "add", "kernel.cu")
    git(tmp_path, "commit", "-q", "-m", "v1")
    return tmp_path


def test_clean_tree_is_head(repo: Path) -> None:
    assert git_commit(repo) == git(repo, "rev-parse", "HEAD")


def test_untracked_files_do_not_make_it_dirty(repo: Path) -> None:
    (repo / "build").mkdir()
    (repo / "build" / "kernel.o").write_bytes(b"\0")
    assert git_commit(repo) == git(repo, "rev-parse", "HEAD")


@pytest.mark.parametrize("staged", [False, True])
def test_changed_tracked_file_is_dirty(repo: Path, staged: bool) -> None:
    (repo / "kernel.cu").write_text("// v2, not committed\n")
    if staged:
        git(repo, "add", "kernel.cu")
    assert git_commit(repo) == git(repo, "rev-parse", "HEAD") + DIRTY


def test_no_repository_or_no_git_is_none(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # an sdist: no .git of its own (nor above: git would stop at the ceiling)
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))
    assert git_commit(tmp_path) is None
    monkeypatch.setenv("PATH", str(tmp_path))  # no git executable at all
    assert git_commit(tmp_path) is None


def test_a_tree_inside_another_checkout_is_not_that_checkout(repo: Path) -> None:
    """An sdist unpacked inside some project's repository: not that project's commit."""
    unpacked = repo / "fusedops-0.1.0"
    unpacked.mkdir()
    (unpacked / "setup.py").write_text("")
    assert git_commit(unpacked) is None


@pytest.mark.parametrize(
    ("sha", "digits", "short"),
    [
        ("0123456789abcdef0123456789abcdef01234567", 12, "0123456789ab"),
        ("0123456789abcdef0123456789abcdef01234567-dirty", 12, "0123456789ab-dirty"),
        ("0123456789abcdef0123456789abcdef01234567-dirty", 7, "0123456-dirty"),
        (None, 12, "None"),
    ],
)
def test_short_commit_keeps_the_dirty_mark(sha: object, digits: int, short: str) -> None:
    assert short_commit(sha, digits) == short


def test_gate_summary_shows_a_dirty_build() -> None:
    info = {
        "version": "0.1.0+cpu",
        "torch": "2.14.1",
        "cuda": None,
        "variant": "cpu",
        "abi": "stable",
        "arch_list": [],
        "git_sha": "0123456789abcdef0123456789abcdef01234567-dirty",
    }
    assert "git 0123456789ab-dirty" in checks.check_build_info(info, None, None).message
