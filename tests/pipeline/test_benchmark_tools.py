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
    # The default three: the third run (the second shape's ours) is not Liger's.
    with pytest.raises(SystemExit, match=r"run 2 is fusedops .* not liger"):
        ncu_miss_table.profiled(path, shapes)
    # More runs than the shapes and implementations hold.
    with pytest.raises(SystemExit, match="4 runs of kernels for 1 shapes x 2 implementations"):
        ncu_miss_table.profiled(path, shapes[:1], STATIC)
    # Two, but in the wrong order: the first run is ours, not inductor's.
    with pytest.raises(SystemExit, match=r"run 0 is fusedops .* not compile-static"):
        ncu_miss_table.profiled(path, shapes, ("compile-static", "fusedops"))


def test_the_table_sets_ours_against_compile_static_where_it_leads() -> None:
    missed = ncu_miss_table.misses(ncu_miss_table.sweep_times([V38_SWEEP]), 1.0)
    text = ncu_miss_table.table(missed, [(V38, STATIC)])
    line = next(x for x in text.splitlines() if "| 16384 x 16384 |" in x)
    # The ncu gap: 531.01 / 501.15 - 1.
    assert "| compile-static | +6.0% | 531.01 / 501.15 |" in line
    assert "| 55 / 32 |" in line
    # Liger's misses at this width were not profiled against Liger.
    assert "| 128 x 16384 | 4.1% | liger | not profiled |" in text


@pytest.mark.parametrize(
    "impls",
    [
        "fusedops,banana",
        "compile,liger",
        "fusedops,fusedops",
        "fusedops,compile,compile-static",
        # side by side from one shape's last run to the next shape's first
        "compile,fusedops,compile-static",
    ],
)
def test_bad_impls_are_refused_by_name(
    impls: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["table", str(V38_SWEEP), "--ncu", str(tmp_path), "--impls", impls]
    with pytest.raises(SystemExit):
        ncu_miss_table.main(argv)
    assert f"--impls {impls}: each of" in capsys.readouterr().err


# Session 58's exports (v42's wheel, an H200). Each implementation twice, in the order
# fusedops, compile, Liger, compile-static: inductor's two builds told apart by the Liger
# run between them. callB's three-implementation profiles cover the largest rotating misses,
# callE's and callF's the rest; callF's silu profile stopped (a timeout) within 16 x 4096.
S58 = REPO / "benchmarks/raw/2026-11-29-h200-v42-same-sweep-ncu"
FOUR = ("fusedops", "compile", "liger", "compile-static")
ROTATING_SWEEPS = sorted(
    (REPO / "benchmarks/raw/2026-11-29-h200-v42-consumer-split").glob("call[EF]-sweep-*.csv")
)


def test_compile_and_compile_static_are_told_apart_by_a_run_between_them() -> None:
    path = S58 / "callE-ncu-same/fused_add_rms_norm-float32.csv"
    prof = ncu_miss_table.profiled(path, ncu_miss_table.profiled_shapes(path, []), FOUR)
    # 512 x 8192: the dynamic-rows compile and the per-shape one are both inductor's.
    assert prof[(512, 8192, "compile")]["kernels"] == 1
    assert prof[(512, 8192, "compile-static")]["kernels"] == 1
    assert prof[(512, 8192, "fusedops")]["launch__block_size"] == 1024


def test_a_profile_stopped_within_a_shape_reads_the_shapes_before_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = S58 / "callF-ncu-rot/silu_and_mul-bfloat16.csv"
    shapes = ncu_miss_table.profiled_shapes(path, [])
    prof = ncu_miss_table.profiled(path, shapes, FOUR)
    assert {(r, h) for r, h, _ in prof} == {(1, 4096), (1, 8192), (16, 2048)}
    assert "stopped early; (16, 4096), the last shape it reached (3 of 4" in capsys.readouterr().err
    # Read under other implementations, the runs it has still have to match them.
    with pytest.raises(SystemExit, match=r"run 1 is compile .* not liger"):
        ncu_miss_table.profiled(path, shapes, ("fusedops", "liger", "compile"))


def test_the_table_takes_each_miss_from_the_first_source_that_profiled_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["table", *map(str, ROTATING_SWEEPS)]
    for source, impls in (("callE-ncu-rot", FOUR), ("callB-ncu-rot", (*STATIC, "liger"))):
        argv += ["--ncu", str(S58 / source), "--impls", ",".join(impls)]
    assert ncu_miss_table.main(argv) == 0
    lines = capsys.readouterr().out.splitlines()
    row = {tuple(c.strip() for c in x.split("|")[1:4]): x for x in lines if x.startswith("| f")}
    # bf16 256 x 8192 is callB's alone; bf16 128 x 8192 callE's.
    assert (
        "| compile-static | +12.1% | 6.53 / 5.82 |"
        in row[("fused_add_rms_norm", "bfloat16", "256 x 8192")]
    )
    assert (
        "| liger | +2.1% | 4.64 / 4.54 |" in row[("fused_add_rms_norm", "bfloat16", "128 x 8192")]
    )
    assert lines[-1].startswith("ncu gap (our kernel's time against the rival's, each alone): of ")


def test_impls_are_one_for_all_sources_or_one_each(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["table", *map(str, ROTATING_SWEEPS), "--ncu", str(S58 / "callE-ncu-rot")]
    argv += ["--ncu", str(S58 / "callB-ncu-rot"), "--ncu", str(S58 / "callF-ncu-rot")]
    with pytest.raises(SystemExit):
        ncu_miss_table.main([*argv, "--impls", ",".join(FOUR), "--impls", ",".join(FOUR)])
    assert "2 --impls for 3 --ncu: give one, or one each" in capsys.readouterr().err


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


def test_spread_is_each_kernels_move_between_its_two_calls(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Four shapes x three implementations, each called twice after an L2 flush.
    path = S58 / "callB-ncu-rot/fused_add_rms_norm-bfloat16.csv"
    assert ncu_miss_table.main(["spread", str(path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("12 runs: call-to-call change median ")
    median = float(out.split("median ")[1].split("%")[0])
    assert 0 < median < 20


def test_the_noise_sets_what_counts_as_level(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["table", *map(str, ROTATING_SWEEPS), "--ncu", str(S58 / "callB-ncu-rot")]
    argv += ["--impls", "fusedops,compile-static,liger"]
    counts = {}
    for noise in ("1", "5.3"):
        assert ncu_miss_table.main([*argv, "--noise", noise]) == 0
        last = capsys.readouterr().out.splitlines()[-1]
        assert f"ours slower by more than {noise}% at " in last
        counts[noise] = int(last.split(f"slower by more than {noise}% at ")[1].split(",")[0])
    # bf16 256 x 8192 (+12.1%) is slower at either; others fall within 5.3%.
    assert counts["1"] > counts["5.3"] >= 1
    with pytest.raises(SystemExit):
        ncu_miss_table.main([*argv, "--noise", "-1"])
    assert "--noise must be at least 0, not -1" in capsys.readouterr().err


def copy_profile(source: Path, to: Path, drop_rows: int = 0, log_error: bool = False) -> Path:
    """A copy of a profile (its .shapes too) with its last `drop_rows` kernel rows cut,
    as a timeout leaves one; `log_error` writes a log with ncu's error line beside it."""
    to.mkdir(parents=True, exist_ok=True)
    lines = source.read_text().splitlines(keepends=True)
    (to / source.name).write_text("".join(lines[: len(lines) - drop_rows]))
    shutil.copy(source.with_suffix(".shapes"), to)
    if log_error:
        (to / source.name).with_suffix(".log").write_text("==ERROR== An error occurred\n")
    return to / source.name


@pytest.mark.parametrize(
    ("source", "drop_rows", "log_error", "reached"),
    [
        # the last run (Liger's) cut to one kernel of two
        ("callB-ncu-rot/fused_add_rms_norm-bfloat16.csv", 1, False, (256, 16384)),
        # the last run (compile-static's, 3 kernels a call) cut whole: one run short
        ("callE-ncu-same/rms_norm-float16.csv", 6, False, (128, 16384)),
        # cut to 4 kernels of 6: every run there, and even; the log's error tells
        ("callE-ncu-same/rms_norm-float16.csv", 2, True, (128, 16384)),
    ],
)
def test_the_last_shape_a_stopped_profile_reached_is_not_profiled(
    source: str,
    drop_rows: int,
    log_error: bool,
    reached: tuple[int, int],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    impls = (*STATIC, "liger") if source.startswith("callB") else FOUR
    path = copy_profile(S58 / source, tmp_path, drop_rows, log_error)
    shapes = ncu_miss_table.profiled_shapes(path, [])
    whole = ncu_miss_table.profiled(S58 / source, shapes, impls)
    assert (*reached, "fusedops") in whole  # the uncut profile has it
    capsys.readouterr()
    prof = ncu_miss_table.profiled(path, shapes, impls)
    assert not any((r, h) == reached for r, h, _ in prof)
    assert prof == {k: v for k, v in whole.items() if k[:2] != reached}
    assert f"stopped early; {reached}, the last shape it reached" in capsys.readouterr().err


def test_spread_without_a_run_of_two_calls_says_so(tmp_path: Path) -> None:
    source = S58 / "callB-ncu-rot/rms_norm-bfloat16.csv"
    path = tmp_path / source.name
    path.write_text("".join(source.read_text().splitlines(keepends=True)[:3]))  # one kernel
    with pytest.raises(SystemExit, match="no runs of two calls in"):
        ncu_miss_table.main(["spread", str(path)])


def test_the_first_source_wins_where_two_profiled_a_miss(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A copy of callB's profile whose .shapes lists its shapes in reverse: read first,
    # its 256 x 8192 row holds the kernels of callB's last shape, 256 x 16384.
    first = copy_profile(S58 / "callB-ncu-rot/fused_add_rms_norm-bfloat16.csv", tmp_path / "a")
    first.with_suffix(".shapes").write_text("256x16384,512x8192,512x4096,256x8192")
    argv = ["table", *map(str, ROTATING_SWEEPS), "--impls", "fusedops,compile-static,liger"]
    argv += ["--ncu", str(first.parent), "--ncu", str(S58 / "callB-ncu-rot")]
    assert ncu_miss_table.main(argv) == 0
    row = next(x for x in capsys.readouterr().out.splitlines() if "| 256 x 8192 |" in x)
    assert "| compile-static | +12.1% | 6.53 / 5.82 |" not in row
    assert "| 10.18 / " in row  # ours at 256 x 16384


def test_several_sources_need_shapes_files(tmp_path: Path) -> None:
    source = S58 / "callB-ncu-rot/fused_add_rms_norm-bfloat16.csv"
    bare = copy_profile(source, tmp_path / "bare")
    bare.with_suffix(".shapes").unlink()
    argv = ["table", *map(str, ROTATING_SWEEPS), "--impls", "fusedops,compile-static,liger"]
    argv += ["--ncu", str(bare.parent), "--ncu", str(S58 / "callB-ncu-rot")]
    with pytest.raises(SystemExit, match="with several --ncu folders each profile needs its"):
        ncu_miss_table.main(argv)


def test_a_missing_profile_names_every_folder_looked_in(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    argv = ["table", *map(str, ROTATING_SWEEPS), "--ncu", str(tmp_path / "a")]
    assert ncu_miss_table.main([*argv, "--ncu", str(tmp_path / "b")]) == 0
    out = capsys.readouterr().out
    both = f"{tmp_path / 'a'}/rms_norm-float16.csv, {tmp_path / 'b'}/rms_norm-float16.csv"
    assert f"| rms_norm | float16 | (4 shapes: no {both}) |" in out
    assert "of 0 misses profiled with both times" in out


def test_ncu_must_be_a_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["table", *map(str, ROTATING_SWEEPS), "--ncu", str(tmp_path / "absent")]
    with pytest.raises(SystemExit):
        ncu_miss_table.main(argv)
    assert "table needs --ncu DIR, each a directory" in capsys.readouterr().err
