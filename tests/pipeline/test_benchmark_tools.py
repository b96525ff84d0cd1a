"""benchmarks/tools/ncu_miss_table.py: a profile is read under the shapes it ran.

The ncu CSV is a real export (v32, an H100: the fp16 fused add profiled at 256 x 4096
and 2048 x 4096, each implementation twice); the tool is stdlib-only, so this runs here.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks" / "tools"))
import ncu_miss_table  # noqa: E402

PROFILE = (
    REPO
    / "benchmarks/raw/2026-11-28-h100-v32-sweep-sanitizers-ncu/ncu/fused_add_rms_norm-float16.csv"
)


@pytest.fixture
def profile(tmp_path: Path) -> Path:
    path = tmp_path / PROFILE.name
    shutil.copy(PROFILE, path)
    return path


def test_a_profile_of_some_shapes_is_read_under_its_own_shapes(profile: Path) -> None:
    profile.with_suffix(".shapes").write_text("256x4096,2048x4096\n")
    # The misses' list has other shapes first: without the file, 128 x 4096 would get
    # the first profiled shape's kernels.
    missed = [(128, 4096), (256, 4096), (2048, 4096)]
    shapes = ncu_miss_table.profiled_shapes(profile, missed)
    assert shapes == [(256, 4096), (2048, 4096)]
    prof = ncu_miss_table.profiled(profile, shapes)
    assert (128, 4096, "fusedops") not in prof
    # One block a row: the grid names the rows each profiled call ran.
    assert prof[(256, 4096, "fusedops")]["launch__grid_size"] == 256
    assert prof[(2048, 4096, "fusedops")]["launch__grid_size"] == 2048


def test_without_a_shapes_file_the_misses_order_is_used(profile: Path) -> None:
    missed = [(256, 4096), (2048, 4096)]
    assert ncu_miss_table.profiled_shapes(profile, missed) == missed


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("256x4096,banana", "'banana' is not ROWSxHIDDEN"),
        ("0x4096", "'0x4096' is not ROWSxHIDDEN"),
        ("-1x8", "'-1x8' is not ROWSxHIDDEN"),
        ("256x4096\n256x4096", "listed twice"),
        (" \n", "no shapes"),
    ],
)
def test_a_bad_shapes_file_is_refused_by_name(profile: Path, text: str, says: str) -> None:
    listed = profile.with_suffix(".shapes")
    listed.write_text(text)
    with pytest.raises(SystemExit, match=f"{listed.name}.*{says}"):
        ncu_miss_table.profiled_shapes(profile, [])


def test_a_profile_that_does_not_match_its_shapes_names_the_file(profile: Path) -> None:
    profile.with_suffix(".shapes").write_text("256x4096")  # it holds two shapes
    shapes = ncu_miss_table.profiled_shapes(profile, [])
    with pytest.raises(SystemExit, match=r"6 runs of kernels for 1 shapes.*\.shapes"):
        ncu_miss_table.profiled(profile, shapes)
