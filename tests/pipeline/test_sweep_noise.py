"""benchmarks/tools/sweep_noise.py on real sweeps: two rotating runs of the bf16 fused add on
the same kernels (v44's in session 60, v45's, which left them as they were, in session 62);
and on small CSVs written here for the cases those runs do not reach. The tool is
stdlib-only, so this runs here."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks" / "tools"))
import sweep_noise  # noqa: E402

RAW = REPO / "benchmarks" / "raw"
FIRST = (
    RAW
    / "2026-11-29-h200-v44-late-add-weight-16384/call5-sweep-fused_add_rms_norm-bfloat16-rotating.csv"
)
SECOND = (
    RAW
    / "2026-11-30-h200-v45-same-sweeps-exp78/callE-sweep-fused_add_rms_norm-bfloat16-rotating.csv"
)
SAME_PATTERN = (
    RAW / "2026-11-30-h200-v45-same-sweeps-exp78/callB-sweep-fused_add_rms_norm-bfloat16-same.csv"
)
SAME_PATTERN_EARLIER = (
    RAW
    / "2026-11-30-h200-v45-late-norm-weight-16384/call5-sweep-fused_add_rms_norm-bfloat16-same.csv"
)
OTHER_OP = RAW / "2026-11-30-h200-v45-same-sweeps-exp78/callF-sweep-rms_norm-float16-rotating.csv"
HEADER = "label,gpu,torch,commit,date,dtype,op,impl,rows,hidden,placements,pattern,us,bytes,tbps"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> list[str]:
    assert sweep_noise.main(list(argv)) == 0
    return capsys.readouterr().out.splitlines()


def sweep(path: Path, rows: list[tuple[str, int, float]], pattern: str = "rotating") -> Path:
    """A gpu_sweep.py CSV of bf16 rms_norm rows (impl, rows, µs) at hidden 4096."""
    lines = [HEADER] + [
        f"t,H200,2.11,abc,2026-11-30,bfloat16,rms_norm,{impl},{n},4096,1,{pattern},{us},1,1"
        for impl, n, us in rows
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def misses_of(out: list[str]) -> list[str]:
    start = next(i for i, line in enumerate(out) if "misses over" in line)
    return [line.strip() for line in out[start:]]


def test_each_implementation_gets_its_run_to_run_change(
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = run(capsys, "--pair", str(FIRST), str(SECOND), "--top", "1")
    assert out[0] == "run-to-run change, rotating pattern, second run against the first:"
    by_impl = {line.strip().split(":")[0]: line.strip() for line in out[1:6]}
    assert sorted(by_impl) == ["compile", "compile-static", "copy", "fusedops", "liger"]
    assert by_impl["fusedops"] == (
        "fusedops: 44 shapes, |change| median 0.27%, 90th percentile 0.79%, max 1.16%; "
        "largest: fused_add_rms_norm bfloat16 2048x4096 -1.16%"
    )
    # compile-static's time at one shape moved by 35.6% between the two runs.
    assert by_impl["compile-static"].endswith(
        "max 35.59%; largest: fused_add_rms_norm bfloat16 16x8192 -35.59%"
    )
    assert out[6] == f"{FIRST} (v44 43868be-dirty) -> {SECOND} (v45 f3ae084), rotating"


def test_misses_of_both_runs_are_told_from_those_of_one(
    capsys: pytest.CaptureFixture[str],
) -> None:
    misses = misses_of(run(capsys, "--pair", str(FIRST), str(SECOND)))
    assert misses[0] == "misses over 44 shapes both runs timed: first run 5, second 4, both 4"
    assert [m.split(" (")[0] for m in misses[1:5]] == [
        f"in both: fused_add_rms_norm bfloat16 {s}"
        for s in ("256x8192", "256x16384", "512x4096", "1024x2048")
    ]
    assert misses[1].endswith("(compile-static +1.20% / compile-static +2.18%)")
    assert (
        misses[5] == "first run only: fused_add_rms_norm bfloat16 512x8192 (compile-static +4.05%)"
    )
    assert len(misses) == 6
    # The same pair the other way round: that miss is the second run's alone.
    swapped = misses_of(run(capsys, "--pair", str(SECOND), str(FIRST)))
    assert swapped[0] == "misses over 44 shapes both runs timed: first run 4, second 5, both 4"
    assert swapped[5] == (
        "second run only: fused_add_rms_norm bfloat16 512x8192 (compile-static +4.05%)"
    )


def test_a_wider_margin_drops_the_smaller_misses(capsys: pytest.CaptureFixture[str]) -> None:
    out = run(capsys, "--pair", str(FIRST), str(SECOND), "--margin", "3")
    assert misses_of(out)[0] == (
        "misses over 44 shapes both runs timed: first run 3, second 2, both 2"
    )


def test_pairs_of_one_pattern_pool_their_changes(capsys: pytest.CaptureFixture[str]) -> None:
    out = run(capsys, "--pair", str(FIRST), str(SECOND), "--pair", str(SECOND), str(FIRST))
    fusedops = next(line.strip() for line in out if line.strip().startswith("fusedops:"))
    # 44 shapes a pair; the swapped pair's changes are the first's inverses, so the
    # largest is the inverse of -1.16%: +1.17%.
    assert fusedops.startswith("fusedops: 88 shapes, |change| median 0.27%")
    assert fusedops.endswith(
        "largest: fused_add_rms_norm bfloat16 2048x4096 +1.17%, "
        "fused_add_rms_norm bfloat16 2048x4096 -1.16%, "
        "fused_add_rms_norm bfloat16 128x4096 +1.15%"
    )


def test_pairs_of_two_patterns_are_kept_apart(capsys: pytest.CaptureFixture[str]) -> None:
    out = run(
        capsys,
        "--pair",
        str(FIRST),
        str(SECOND),
        "--pair",
        str(SAME_PATTERN_EARLIER),
        str(SAME_PATTERN),
    )
    rotating = out.index("run-to-run change, rotating pattern, second run against the first:")
    same = out.index("run-to-run change, same pattern, second run against the first:")
    assert same == rotating + 6  # each pattern's five implementations under its own heading
    assert out[same - 2].strip().startswith("fusedops: 44 shapes, |change| median 0.27%")
    assert out[same + 4].strip().startswith("fusedops: 44 shapes")
    assert out[same + 4].strip() != out[same - 2].strip()


def test_each_file_keeps_its_fastest_row(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = sweep(
        tmp_path / "a.csv",
        [("fusedops", 1, 10.0), ("fusedops", 1, 9.0), ("liger", 1, 8.9), ("liger", 1, 9.5)],
    )
    second = sweep(tmp_path / "b.csv", [("fusedops", 1, 9.9), ("liger", 1, 9.0)])
    out = run(capsys, "--pair", str(first), str(second), "--top", "0")
    # fusedops 9.0 -> 9.9 (+10%), liger 8.9 -> 9.0; --top 0 lists none.
    assert out[1].strip() == (
        "fusedops: 1 shapes, |change| median 10.00%, 90th percentile 10.00%, max 10.00%"
    )
    # First run: 9.0 against 8.9 is 1.12% behind; second: 9.9 against 9.0, 10%.
    assert (
        misses_of(out)[0] == "misses over 1 shapes both runs timed: first run 1, second 1, both 1"
    )


def test_a_miss_must_exceed_the_margin(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    first = sweep(tmp_path / "a.csv", [("fusedops", 1, 12.5), ("liger", 1, 10.0)])
    second = sweep(tmp_path / "b.csv", [("fusedops", 1, 13.0), ("liger", 1, 10.0)])
    # Exactly 25% behind, then 30%: at --margin 25 the first is not a miss, the second is.
    misses = misses_of(run(capsys, "--pair", str(first), str(second), "--margin", "25"))
    assert misses[0] == "misses over 1 shapes both runs timed: first run 0, second 1, both 0"
    assert misses[1] == "second run only: rms_norm bfloat16 1x4096 (liger +30.00%)"


def test_a_rival_one_run_lacks_is_left_out_of_the_misses(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = sweep(
        tmp_path / "a.csv", [("fusedops", 1, 10.0), ("liger", 1, 10.0), ("compile", 1, 5.0)]
    )
    second = sweep(
        tmp_path / "b.csv", [("fusedops", 1, 10.0), ("liger", 1, 10.0), ("fusedops", 2, 1.0)]
    )
    out = run(capsys, "--pair", str(first), str(second))
    assert "  1 shapes only the second run timed (not compared)" in out
    assert "  timed by one run only at some shape (left out there): compile" in out
    # compile, twice as fast in the first run, would have made a miss there.
    assert (
        misses_of(out)[0] == "misses over 1 shapes both runs timed: first run 0, second 0, both 0"
    )


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--pair", str(FIRST), str(SAME_PATTERN)], "is of the rotating pattern and"),
        (["--pair", str(FIRST), str(OTHER_OP)], "share no shape"),
        (["--pair", str(FIRST), str(RAW / "no-such.csv")], "No such file"),
        (["--pair", str(FIRST), str(FIRST)], "is given as both runs of a pair"),
        (["--pair", str(FIRST), str(SECOND), "--margin", "-1"], "--margin must be a percent"),
        (["--pair", str(FIRST), str(SECOND), "--margin", "nan"], "--margin must be a percent"),
        (["--pair", str(FIRST), str(SECOND), "--top", "-1"], "--top must not be negative"),
        ([], "the following arguments are required: --pair"),
    ],
)
def test_bad_arguments_are_refused_with_the_reason(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        sweep_noise.main(argv)
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "is not a gpu_sweep.py CSV (no op, dtype, rows, hidden, impl, us column)"),
        (HEADER + "\n", "has no rows"),
        ("op,dtype,rows\nrms_norm,bfloat16,1\n", "(no hidden, impl, us column)"),
        (
            HEADER + "\nt,H200,2.11,abc,d,bfloat16,rms_norm,fusedops,1,4096,1,rotating,fast,1,1\n",
            "line 2: could not convert string to float: 'fast'",
        ),
        (
            HEADER
            + "\nt,H200,2.11,abc,d,bfloat16,rms_norm,fusedops,1,4096,1,rotating,1.0,1,1"
            + "\nt,H200,2.11,abc,d,bfloat16,rms_norm,fusedops,2,4096,1,same,1.0,1,1\n",
            "mixes call patterns: rotating, same",
        ),
        (
            HEADER + "\nt,H200,2.11,abc,d,bfloat16,rms_norm,fusedops,1,4096,1,rotating,0,1,1\n",
            "line 2: a time of 0 µs",
        ),
        (
            HEADER + "\nt,H200,2.11,abc,d,bfloat16,rms_norm,fusedops,1,4096,1,rotating,nan,1,1\n",
            "line 2: a time of nan µs",
        ),
    ],
)
def test_a_file_that_is_no_sweep_is_refused_with_the_reason(
    text: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text(text)
    with pytest.raises(SystemExit) as exit_info:
        sweep_noise.main(["--pair", str(FIRST), str(bad)])
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


def test_percentile_is_the_nearest_rank() -> None:
    values = [float(v) for v in range(1, 11)]
    assert sweep_noise.percentile(values, 0.9) == 9.0
    assert sweep_noise.percentile(values, 0.0) == 1.0
    assert sweep_noise.percentile([5.0], 0.9) == 5.0
