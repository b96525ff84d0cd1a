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


# v38's real export: float32 rms_norm at 16384 x 16384 and 4096 x 16384 (its .shapes file),
# each profiled twice as fusedops and then compile-static (inductor's kernels, like compile's).
V38 = REPO / "benchmarks/raw/2026-11-29-h200-v38-add-evict-last/callE-ncu"
V38_SWEEP = REPO / "benchmarks/raw/2026-11-29-h200-v38-sweep-rms-4754e19-run1.csv"
STATIC = ("fusedops", "compile-static")


def test_a_profile_against_compile_static_is_read_with_its_impls() -> None:
    path = V38 / "rms_norm-float32.csv"
    shapes = ncu_miss_table.profiled_shapes(path, [])
    assert shapes == [(16384, 16384), (4096, 16384)]
    prof = ncu_miss_table.profiled(path, shapes, STATIC)
    assert prof[(16384, 16384, "fusedops")]["launch__registers_per_thread"] == 55
    assert prof[(16384, 16384, "compile-static")]["launch__registers_per_thread"] == 32
    assert prof[(4096, 16384, "compile-static")]["launch__grid_size"] == 4096


def test_a_profile_read_with_other_impls_is_refused() -> None:
    path = V38 / "rms_norm-float32.csv"
    shapes = ncu_miss_table.profiled_shapes(path, [])
    # The default three: 4 runs do not divide into them.
    with pytest.raises(SystemExit, match="4 runs of kernels for 2 shapes x 3 implementations"):
        ncu_miss_table.profiled(path, shapes)
    # Two, but in the wrong order: the first run is ours, not inductor's.
    with pytest.raises(SystemExit, match=r"run 0 is fusedops .* not compile-static"):
        ncu_miss_table.profiled(path, shapes, ("compile-static", "fusedops"))


def test_the_table_sets_ours_against_compile_static_where_it_leads() -> None:
    missed = ncu_miss_table.misses(ncu_miss_table.sweep_times([V38_SWEEP]), 1.0)
    text = ncu_miss_table.table(missed, V38, STATIC)
    line = next(x for x in text.splitlines() if "| 16384 x 16384 |" in x)
    assert "| compile-static | 531.01 / 501.15 |" in line
    assert "| 55 / 32 |" in line
    # Liger's misses at this width were not profiled against Liger.
    assert "| 128 x 16384 | 4.1% | liger | not profiled |" in text


@pytest.mark.parametrize(
    "impls",
    ["fusedops,banana", "compile,liger", "fusedops,fusedops", "fusedops,compile,compile-static"],
)
def test_bad_impls_are_refused_by_name(
    impls: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["table", str(V38_SWEEP), "--ncu", str(tmp_path), "--impls", impls]
    with pytest.raises(SystemExit):
        ncu_miss_table.main(argv)
    assert f"--impls {impls}: each of" in capsys.readouterr().err


V38_ADD = [
    REPO / f"benchmarks/raw/2026-11-29-h200-v38-sweep-add-4754e19-run{n}.csv" for n in (1, 2)
]


@pytest.mark.parametrize(
    ("rivals", "behind"),
    [([], 20), (["--rivals", "compile,liger"], 16), (["--rivals", "liger"], 10)],
)
def test_misses_are_counted_against_the_rivals_asked_for(
    rivals: list[str], behind: int, capsys: pytest.CaptureFixture[str]
) -> None:
    # v38's two fused add runs, each shape at its fastest: RESULTS.md v38's counts.
    argv = ["misses", *map(str, V38_ADD), "--count", *rivals]
    assert ncu_miss_table.main(argv) == 0
    out = capsys.readouterr().out
    assert out == f"fused_add_rms_norm: {behind} of 132 shapes behind by more than 1%\n"


@pytest.mark.parametrize(
    ("rivals", "absent"),
    [("compile-static", "compile-static"), ("copy", "copy"), ("liger,banana", "banana")],
)
def test_a_rival_the_sweep_lacks_is_refused_by_name(
    rivals: str, absent: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # v37's rms_norm sweep ran before compile-static existed.
    sweep = REPO / "benchmarks/raw/2026-11-29-h200-v37-sweep-rms-2ed24bd-run1.csv"
    with pytest.raises(SystemExit):
        ncu_miss_table.main(["misses", str(sweep), "--rivals", rivals])
    assert f"--rivals {rivals}: {absent} not a rival" in capsys.readouterr().err


def test_count_is_refused_for_the_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        ncu_miss_table.main(["table", str(V38_SWEEP), "--ncu", str(tmp_path), "--count"])
    assert "--count is for misses" in capsys.readouterr().err


def test_sweeps_of_two_call_patterns_are_refused_together(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A consumer-pattern sweep (gpu_sweep.py --pattern) times each call with the next
    op's read: its times are no run of a same-tensor sweep's, so the two are not merged.
    A CSV without the column is the same-tensor pattern."""
    import csv

    consumer = tmp_path / "consumer.csv"
    with V38_SWEEP.open(newline="") as f:
        rows = list(csv.DictReader(f))
    with consumer.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=[*rows[0], "pattern"])
        writer.writeheader()
        writer.writerows({**r, "pattern": "consumer"} for r in rows)
    assert ncu_miss_table.main(["misses", str(consumer), "--count"]) == 0
    capsys.readouterr()
    with pytest.raises(SystemExit) as e:
        ncu_miss_table.main(["misses", str(V38_SWEEP), str(consumer)])
    assert "of the same pattern" in str(e.value) and "of the consumer pattern" in str(e.value)


def test_a_plot_draws_each_call_pattern_as_its_own_line() -> None:
    sys.path.insert(0, str(REPO / "benchmarks"))
    import plot_sweep

    row = {"impl": "fusedops", "label": "v41"}
    assert plot_sweep.series(row) == ("fusedops v41", "same")
    assert plot_sweep.series({**row, "pattern": "consumer"}) == ("fusedops v41", "consumer")
    assert plot_sweep.series({"impl": "liger", "label": "", "pattern": ""}) == ("liger", "same")
