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


def test_closed_new_and_kept_shapes_are_named_with_both_sides_percents(
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = run(capsys, "--old", str(V42_BF16_ADD), "--new", str(V44_BF16_ADD))
    assert out[0] == "rivals: compile,compile-static,liger; behind by more than 1%"
    assert out[1] == "fused_add_rms_norm bfloat16: 7 -> 5"
    assert out[2] == (
        "  closed: 128x8192 (liger +1.4% -> liger -3.7%), 1024x16384 (liger +1.6% -> liger +0.7%)"
    )
    assert out[3].startswith("  kept: 256x8192 (compile-static +8.1% -> compile-static +1.2%), ")
    assert out[3].count("x") == 5
    assert len(out) == 4  # nothing new, every shape on both sides


def test_rivals_default_to_those_both_sides_timed_and_other_shapes_are_not_compared(
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = run(capsys, "--old", str(V42_BF16_ADD), "--new", str(V44_BF16_ADD_16384))
    assert out[0] == "rivals: compile-static,liger; behind by more than 1%"
    # At hidden 16384 v42 trailed Liger at 256 and 1024 rows; v44 at 256 only.
    assert out[1] == "fused_add_rms_norm bfloat16: 2 -> 1"
    assert out[2] == "  closed: 1024x16384 (liger +1.6% -> liger -0.0%)"
    assert out[3] == "  kept: 256x16384 (liger +3.7% -> liger +3.3%)"
    one_side = out[4].removeprefix("  one side: ").split(", ")
    assert len(one_side) == 33 and all(s.endswith(" old") for s in one_side)  # 3 hiddens x 11


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--rivals", "compile"], "--rivals compile: compile not timed by both sides"),
        (["--rivals", "copy"], "--rivals copy: copy not timed by both sides"),
        (["--margin", "-1"], "--margin must be at least 0, not -1"),
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
    with pytest.raises(SystemExit):
        miss_changes.main(["--old", str(tmp_path / "none.csv"), "--new", str(V44_BF16_ADD)])
    assert "none.csv is not a file" in capsys.readouterr().err


def test_sides_without_a_common_rival_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A side that timed only ours and the copy (v43's ours-only sweep) has no rival to
    share."""
    ours_only = (
        RAW / "2026-11-29-h200-v44-late-add-weight-16384/call3-sweep-old-bfloat16-rotating.csv"
    )
    with pytest.raises(SystemExit):
        miss_changes.main(["--old", str(ours_only), "--new", str(V44_BF16_ADD_16384)])
    assert "the two sides timed no rival in common" in capsys.readouterr().err
