"""benchmarks/tools/sweep_noise.py on real sweeps: two rotating runs of the bf16 fused add on
the same kernels (v44's in session 60, v45's, which left them as they were, in session 62).
The tool is stdlib-only, so this runs here."""

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
OTHER_OP = RAW / "2026-11-30-h200-v45-same-sweeps-exp78/callF-sweep-rms_norm-float16-rotating.csv"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> list[str]:
    assert sweep_noise.main(list(argv)) == 0
    return capsys.readouterr().out.splitlines()


def test_each_implementation_gets_its_run_to_run_change(
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = run(capsys, "--pair", str(FIRST), str(SECOND), "--top", "1")
    assert out[0] == "run-to-run change, second run against the first:"
    by_impl = {line.split(":")[0]: line for line in out[1:6]}
    assert sorted(by_impl) == ["compile", "compile-static", "copy", "fusedops", "liger"]
    assert by_impl["fusedops"] == (
        "fusedops: 44 shapes, |change| median 0.27%, 90th percentile 0.79%, max 1.16%; "
        "largest: fused_add_rms_norm bfloat16 2048x4096 -1.16%"
    )
    # compile-static autotunes in each process: one shape ran 35.6% faster the second time.
    assert by_impl["compile-static"].endswith(
        "max 35.59%; largest: fused_add_rms_norm bfloat16 16x8192 -35.59%"
    )


def test_misses_of_both_runs_are_told_from_those_of_one(
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = run(capsys, "--pair", str(FIRST), str(SECOND))
    start = out.index(f"{FIRST.name} -> {SECOND.name}")
    misses = out[start + 1 :]
    assert misses[0] == "misses over 44 shapes both runs timed: first run 5, second 4, both 4"
    assert [m.split(" (")[0] for m in misses[1:5]] == [
        f"  in both: fused_add_rms_norm bfloat16 {s}"
        for s in ("256x8192", "256x16384", "512x4096", "1024x2048")
    ]
    assert misses[1].endswith("(compile-static +1.20% / compile-static +2.18%)")
    assert misses[5] == (
        "  first run only: fused_add_rms_norm bfloat16 512x8192 (compile-static +4.05%)"
    )
    assert len(misses) == 6


def test_a_wider_margin_drops_the_smaller_misses(capsys: pytest.CaptureFixture[str]) -> None:
    out = run(capsys, "--pair", str(FIRST), str(SECOND), "--margin", "3")
    line = next(m for m in out if m.startswith("misses over"))
    assert line == "misses over 44 shapes both runs timed: first run 3, second 2, both 2"


def test_pairs_pool_their_changes(capsys: pytest.CaptureFixture[str]) -> None:
    out = run(capsys, "--pair", str(FIRST), str(SECOND), "--pair", str(SECOND), str(FIRST))
    assert out[4].startswith("fusedops: 88 shapes, |change| median 0.27%")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--pair", str(FIRST), str(SAME_PATTERN)], "are of different call patterns"),
        (["--pair", str(FIRST), str(OTHER_OP)], "share no shape"),
        (["--pair", str(FIRST), str(RAW / "no-such.csv")], "no such sweep CSV"),
        (["--pair", str(FIRST), str(SECOND), "--margin", "-1"], "--margin must not be negative"),
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


def test_percentile_is_the_nearest_rank() -> None:
    values = [float(v) for v in range(1, 11)]
    assert sweep_noise.percentile(values, 0.9) == 9.0
    assert sweep_noise.percentile(values, 0.0) == 1.0
    assert sweep_noise.percentile([5.0], 0.9) == 5.0
