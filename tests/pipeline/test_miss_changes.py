"""benchmarks/tools/miss_changes.py on real sweeps: v42's rotating bf16 fused add (session 57)
against v44's (session 60), and v44's hidden-16384 sweep, which timed fewer rivals and shapes.
The tool is stdlib-only, so this runs here."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks" / "tools"))
import miss_changes  # noqa: E402

RAW = REPO / "benchmarks" / "raw"
V42_BF16_ADD = (
    RAW / "2026-11-29-h200-v42-consumer-split/callE-sweep-fused_add_rms_norm-bfloat16-rotating.csv"
)
V44_BF16_ADD = (
    RAW
    / "2026-11-29-h200-v44-late-add-weight-16384/call5-sweep-fused_add_rms_norm-bfloat16-rotating.csv"
)
# compile-static, Liger and the copy only; hidden 16384 only.
V44_BF16_ADD_16384 = (
    RAW / "2026-11-29-h200-v44-late-add-weight-16384/call3-sweep-new-bfloat16-rotating.csv"
)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> list[str]:
    assert miss_changes.main(list(argv)) == 0
    return capsys.readouterr().out.splitlines()


def test_closed_and_still_behind_shapes_are_named_with_both_sides_percents(
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = run(capsys, "--old", str(V42_BF16_ADD), "--new", str(V44_BF16_ADD))
    assert out[0] == "rivals: at each shape, those both sides timed; behind by more than 1%"
    assert out[1] == "fused_add_rms_norm bfloat16: 7 -> 5"
    assert out[2] == (
        "  closed: 128x8192 (liger +1.43% -> liger -3.67%), "
        "1024x16384 (liger +1.55% -> liger +0.71%)"
    )
    behind = out[3].removeprefix("  still behind: ").split("), ")
    assert [b.split(" ")[0] for b in behind] == [
        "256x8192",
        "256x16384",
        "512x4096",
        "512x8192",
        "1024x2048",
    ]
    assert behind[0] == "256x8192 (compile-static +8.14% -> compile-static +1.20%"
    assert len(out) == 4  # none came in, every shape timed by both


def test_rivals_default_to_those_both_sides_timed_and_other_shapes_are_not_compared(
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = run(capsys, "--old", str(V42_BF16_ADD), "--new", str(V44_BF16_ADD_16384))
    # At hidden 16384 v42 trailed Liger at 256 and 1024 rows; v44 at 256 only. v44's
    # sweep timed compile-static and Liger there, v42's compile too: not a rival here.
    assert out[1] == "fused_add_rms_norm bfloat16: 2 -> 1"
    assert out[2] == "  closed: 1024x16384 (liger +1.55% -> liger -0.01%)"
    assert out[3] == "  still behind: 256x16384 (liger +3.75% -> liger +3.33%)"
    only_old = out[4].removeprefix("  only old: ").split("), ")
    assert len(only_old) == 33  # the other 3 hidden sizes x 11 row counts
    assert only_old[0] == "1x2048 (liger -2.35%"
    assert len(out) == 5


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--rivals", "inductor"], "--rivals inductor: inductor timed by neither side"),
        (["--rivals", "copy"], "--rivals copy: copy is never a rival"),
        (["--rivals", "liger,fusedops"], "--rivals liger,fusedops: fusedops is never a rival"),
        (["--rivals", ","], "--rivals names no implementation"),
        (["--margin", "-1"], "--margin must be a number of at least 0, not -1"),
        (["--margin", "nan"], "--margin must be a number of at least 0, not nan"),
    ],
)
def test_bad_arguments_are_usage_errors(
    capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    argv = ["--old", str(V42_BF16_ADD), "--new", str(V44_BF16_ADD_16384), *extra]
    with pytest.raises(SystemExit) as e:
        miss_changes.main(argv)
    assert e.value.code == 2
    assert message in capsys.readouterr().err


def test_a_missing_sweep_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as e:
        miss_changes.main(["--old", str(tmp_path / "none.csv"), "--new", str(V44_BF16_ADD)])
    assert e.value.code == 2
    assert "none.csv is not a file" in capsys.readouterr().err


def test_a_side_without_rivals_leaves_every_shape_not_judged(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """v43's ours-only sweep of call 3 against v44's with rivals: no shape has a rival
    both sides timed, so none is judged and none counted."""
    ours_only = (
        RAW / "2026-11-29-h200-v44-late-add-weight-16384/call3-sweep-old-bfloat16-rotating.csv"
    )
    out = run(capsys, "--old", str(ours_only), "--new", str(V44_BF16_ADD_16384))
    assert out[1] == "fused_add_rms_norm bfloat16: none compared"
    judged = out[2].removeprefix("  not judged: ").split("), ")
    assert len(judged) == 11
    assert judged[0] == "1x16384 (old timed fusedops; new compile-static,fusedops,liger"


FIELDS = "op,dtype,rows,hidden,pattern,impl,us"


def sweep(path: Path, rows: list[str], pattern: str = "rotating") -> Path:
    """A gpu_sweep.py-shaped CSV of `rows` ("op dtype ROWSxHIDDEN impl us")."""
    lines = [FIELDS]
    for row in rows:
        op, dtype, shape, impl, us = row.split()
        r, h = shape.split("x")
        lines.append(f"{op},{dtype},{r},{h},{pattern},{impl},{us}")
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_shape_that_falls_behind_came_in_and_one_side_ops_are_not_compared(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = sweep(
        tmp_path / "old.csv",
        ["rms_norm bfloat16 1x4096 fusedops 1.00", "rms_norm bfloat16 1x4096 liger 1.00"],
    )
    new = sweep(
        tmp_path / "new.csv",
        [
            "rms_norm bfloat16 1x4096 fusedops 1.05",
            "rms_norm bfloat16 1x4096 liger 1.00",
            "rms_norm float16 1x4096 fusedops 2.00",
            "rms_norm float16 1x4096 liger 1.00",
        ],
    )
    out = run(capsys, "--old", str(old), "--new", str(new))
    assert out[1:] == [
        "rms_norm bfloat16: 0 -> 1",
        "  came in: 1x4096 (liger +0.00% -> liger +5.00%)",
        "rms_norm float16: none compared",
        "  only new: 1x4096 (liger +100.00%)",
    ]


def test_each_shape_is_judged_against_the_rivals_both_sides_timed_there(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """compile-static is in both sides' files, but at 1 x 4096 only the old side timed it
    (there it is twice as fast as ours): Liger alone, which both timed, judges that shape."""
    old = sweep(
        tmp_path / "old.csv",
        [
            "rms_norm bfloat16 1x4096 fusedops 1.00",
            "rms_norm bfloat16 1x4096 compile-static 0.50",
            "rms_norm bfloat16 1x4096 liger 1.00",
            "rms_norm bfloat16 16x4096 fusedops 1.00",
            "rms_norm bfloat16 16x4096 compile-static 1.00",
        ],
    )
    new = sweep(
        tmp_path / "new.csv",
        [
            "rms_norm bfloat16 1x4096 fusedops 1.00",
            "rms_norm bfloat16 1x4096 liger 1.00",
            "rms_norm bfloat16 16x4096 fusedops 1.00",
            "rms_norm bfloat16 16x4096 compile-static 1.00",
        ],
    )
    out = run(capsys, "--old", str(old), "--new", str(new))
    assert out[1:] == ["rms_norm bfloat16: 0 -> 0"]
    out = run(capsys, "--old", str(old), "--new", str(new), "--rivals", "compile-static")
    assert out[0] == "rivals: compile-static, where both sides timed; behind by more than 1%"
    assert out[1:] == [
        "rms_norm bfloat16: 0 -> 0",
        "  not judged: 1x4096 (old timed compile-static,fusedops,liger; new fusedops,liger)",
    ]


def test_two_call_patterns_are_refused_across_the_sides(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = ["rms_norm bfloat16 1x4096 fusedops 1.00", "rms_norm bfloat16 1x4096 liger 1.00"]
    old = sweep(tmp_path / "old.csv", rows, pattern="same")
    new = sweep(tmp_path / "new.csv", rows, pattern="rotating")
    with pytest.raises(SystemExit) as e:
        miss_changes.main(["--old", str(old), "--new", str(new)])
    assert "of the same pattern" in str(e.value) and "of the rotating pattern" in str(e.value)
