"""The three call patterns on the CPU (gpu_sweep.patterns, used by gpu_sweep.py --pattern
and benchmarks/tools/call_patterns.py): the order in which they call the op and read its
outputs, how many input sets they take, and both scripts' command lines (the timing
itself needs a GPU)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))
sys.path.insert(0, str(REPO / "benchmarks" / "tools"))
import call_patterns  # noqa: E402
import gpu_sweep  # noqa: E402


def test_settings_are_read_with_their_switches() -> None:
    text = "plain=FUSEDOPS_EXP_A=1;new=FUSEDOPS_EXP_A=1,FUSEDOPS_EXP_B=0;base="
    assert call_patterns.parse_settings(text) == {
        "plain": {"FUSEDOPS_EXP_A": "1"},
        "new": {"FUSEDOPS_EXP_A": "1", "FUSEDOPS_EXP_B": "0"},
        "base": {},
    }


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--settings", "plain"], "is not NAME=VAR=VALUE"),
        (["--settings", "=A=1"], "is not NAME=VAR=VALUE"),
        (["--settings", "a=A=1;a=B=1"], "setting 'a' is given twice"),
        (["--settings", "a=A"], "'A' in setting 'a' is not VAR=VALUE"),
        (["--cases", "rms_norm:bfloat16"], "is not OP:DTYPE:ROWSxHIDDEN"),
        (["--impls", "compile-statc"], "unknown --impls compile-statc"),
        (["--sets", "1"], "--sets must be at least 2"),
        (["--rounds", "0"], "--rounds must be at least 1"),
        (["--warm-up", "-1"], "--warm-up must be 0 or more, not -1"),
        (["--settings", "base=;compile-static=A=1"], "compile-static is an implementation's"),
    ],
)
def test_a_bad_command_line_is_a_usage_error_before_any_gpu_work(
    argv: list[str], says: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out.csv"
    with pytest.raises(SystemExit) as e:
        call_patterns.main([str(out), *argv])
    assert e.value.code == 2
    assert says in capsys.readouterr().err
    assert not out.exists()


class Output:
    """An op's output that records when the consumer reads it."""

    def __init__(self, name: str, log: list[str]) -> None:
        self.name, self.log = name, log

    def sum(self) -> None:
        self.log.append(f"sum {self.name}")


def test_rotating_takes_the_sets_in_turn_and_the_consumer_reads_each_output() -> None:
    log: list[str] = []
    made: dict[int, list[Output]] = {0: [], 1: [], 2: []}

    def call(k: int):
        def run() -> tuple[Output, Output]:
            log.append(f"call {k}")
            out = Output(f"{k}.{len(made[k])}", log)
            made[k].append(out)
            return out, Output("residual", log)

        return run

    steps = gpu_sweep.patterns([call(0), call(1), call(2)])
    for _ in range(4):
        steps["rotating"]()
    assert log == ["call 0", "call 1", "call 2", "call 0"]
    log.clear()
    for _ in range(3):
        steps["consumer"]()
    # The consumer goes on from where rotating left off and sums the output just made.
    assert log == ["call 1", "sum 1.1", "call 2", "sum 2.1", "call 0", "sum 0.2"]
    log.clear()
    steps["same"]()
    steps["same"]()
    assert log == ["call 0", "call 0"]


def test_patterns_need_a_call() -> None:
    with pytest.raises(ValueError, match="no calls"):
        gpu_sweep.patterns([])


def test_liger_asked_for_but_missing_is_a_usage_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(gpu_sweep, "liger_ops", lambda: None)
    out = tmp_path / "out.csv"
    with pytest.raises(SystemExit) as e:
        call_patterns.main([str(out), "--impls", "compile-static,liger"])
    assert e.value.code == 2
    assert "Liger is not installed here" in capsys.readouterr().err
    assert not out.exists()


def test_the_sweeps_copy_runs_in_every_pattern_on_real_tensors() -> None:
    """gpu_sweep's own implementation of the copy, over three CPU input sets: rotating
    writes each set's own output, and the consumer's sum reads a tensor."""
    sets = [(torch.full((4, 8), float(k)), torch.ones(8)) for k in range(3)]
    fns = [gpu_sweep.implementation("rms_norm", "copy", inputs, None) for inputs in sets]
    steps = gpu_sweep.patterns(fns)
    for _ in range(3):
        steps["consumer"]()
    outs = [fn() for fn in fns]
    assert [float(o[0, 0]) for o in outs] == [0.0, 1.0, 2.0]


def test_rotating_takes_four_sets_and_two_past_a_gib_moved() -> None:
    assert gpu_sweep.input_sets("same", 1 << 20) == 1
    assert gpu_sweep.input_sets("rotating", gpu_sweep.ROTATING_SETS_MAX_BYTES) == 4
    assert gpu_sweep.input_sets("consumer", gpu_sweep.ROTATING_SETS_MAX_BYTES + 1) == 2
    # A shape's sets: the bytes its call moves (rms_norm bf16 65536 x 8192 moves 2 GiB).
    assert gpu_sweep.shape_input_sets("same", "rms_norm", 65536, 8192, torch.bfloat16) == 1
    assert gpu_sweep.shape_input_sets("rotating", "rms_norm", 65536, 8192, torch.bfloat16) == 2
    assert gpu_sweep.shape_input_sets("consumer", "rms_norm", 16, 4096, torch.bfloat16) == 4


def test_an_impl_step_takes_the_sets_in_turn_or_is_none_where_unavailable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """gpu_sweep.impl_step, what the sweep and the probes time: one implementation() per
    input set, taken in turn in the rotating pattern, the first alone on the same tensors;
    the real copy runs on CPU tensors; Liger without its package gives no step."""
    sets = [(torch.full((4, 8), float(k)), torch.ones(8)) for k in range(3)]
    same = gpu_sweep.impl_step("rms_norm", "copy", "same", sets, None)
    assert same is not None and float(same()[0, 0]) == 0.0
    assert gpu_sweep.impl_step("rms_norm", "liger", "consumer", sets, None) is None
    sentinel = lambda: None  # noqa: E731
    monkeypatch.setattr(gpu_sweep, "implementation", lambda op, impl, inputs, lg: sentinel)
    assert gpu_sweep.impl_step("rms_norm", "copy", "same", sets, None) is sentinel

    ran: list[float] = []

    def implementation(op, impl, inputs, lg):
        return lambda: ran.append(float(inputs[0][0, 0]))

    monkeypatch.setattr(gpu_sweep, "implementation", implementation)
    step = gpu_sweep.impl_step("rms_norm", "copy", "rotating", sets, None)
    assert step is not None
    for _ in range(4):
        step()
    assert ran == [0.0, 1.0, 2.0, 0.0]


def test_the_sweep_refuses_an_unknown_pattern(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        gpu_sweep.main(["--csv", "unused.csv", "--pattern", "rotate"])
    assert e.value.code == 2
    assert "invalid choice: 'rotate'" in capsys.readouterr().err


def test_a_rotating_sweep_shape_times_every_set_in_turn(monkeypatch: pytest.MonkeyPatch) -> None:
    """gpu_sweep.time_shape with --pattern rotating, its GPU parts replaced: each impl's
    captured calls (a multiple of the sets) cycle over all the input sets, and the
    same-tensor pattern calls one set only."""
    import random

    made: list[torch.Tensor] = []

    def cpu_inputs(op: str, rows: int, hidden: int, dtype: torch.dtype):
        x = torch.full((rows, hidden), float(len(made)))
        made.append(x)
        return x, torch.ones(hidden)

    def run_calls(step, calls: int) -> float:  # graph_us without the graph: captured()'s
        for _ in range(1 + calls):  # call outside the graph, then the captured ones
            step()
        return float(calls)

    monkeypatch.setattr(gpu_sweep, "make_inputs", cpu_inputs)
    monkeypatch.setattr(gpu_sweep, "graph_us", run_calls)
    sums: list[float] = []  # the set each copy call read, by its fill value
    real_implementation = gpu_sweep.implementation

    def recording(op, impl, inputs, lg):
        fn = real_implementation(op, impl, inputs, lg)

        def call() -> torch.Tensor:
            out = fn()
            sums.append(float(out[0, 0]))
            return out

        return call

    monkeypatch.setattr(gpu_sweep, "implementation", recording)
    times, last = gpu_sweep.time_shape(
        "rms_norm", 4, 8, torch.float32, ["copy"], None, 1, random.Random(0), 0, "rotating"
    )
    assert len(made) == gpu_sweep.ROTATING_SETS
    calls = times["copy"]
    assert calls % gpu_sweep.ROTATING_SETS == 0
    # The warm-up call takes set 0; the captured calls go round from set 1.
    assert sums[: 1 + gpu_sweep.ROTATING_SETS] == [0.0, 1.0, 2.0, 3.0, 0.0]
    assert sums[1:].count(0.0) == calls // gpu_sweep.ROTATING_SETS
    assert last[0] is made[0]
    made.clear()
    sums.clear()
    gpu_sweep.time_shape(
        "rms_norm", 4, 8, torch.float32, ["copy"], None, 1, random.Random(0), 0, "same"
    )
    assert len(made) == 1 and set(sums) == {0.0}


def test_the_consumer_reads_every_half_of_a_split_gradient() -> None:
    """silu_and_mul_backward: Liger returns the gradient of x as two halves, the others
    as one tensor; the consumer sums all of it. Elsewhere it sums the first output."""
    log: list[str] = []
    halves = (Output("gate", log), Output("up", log))
    steps = gpu_sweep.patterns([lambda: halves], gpu_sweep.consumed("silu_and_mul_backward"))
    steps["consumer"]()
    assert log == ["sum gate", "sum up"]
    log.clear()
    steps = gpu_sweep.patterns([lambda: halves], gpu_sweep.consumed("fused_add_rms_norm"))
    steps["consumer"]()
    assert log == ["sum gate"]


def test_whole_rounds_takes_every_set_equally_often() -> None:
    assert [gpu_sweep.whole_rounds(calls, 4) for calls in (1, 3, 4, 7, 8, 64)] == [
        4,
        4,
        4,
        4,
        8,
        64,
    ]
    assert gpu_sweep.whole_rounds(5, 1) == 5


def test_the_timeline_probe_splits_a_consumer_call_by_kernel() -> None:
    """graph_timeline_probe.by_kernel on trace records shaped like the profiler's: two
    replays of 2 calls, each the op's kernel and the sum's. Each name's median duration
    and its count per replay; the name with the larger total first; by_kernel_text gives
    the count per call."""
    import graph_timeline_probe as probe

    def replay(op_us: list[float], sum_us: list[float]) -> list[dict]:
        ks = []
        for a, b in zip(op_us, sum_us, strict=True):
            ks += [{"name": "rms_norm_fwd", "dur": a}, {"name": "reduce_kernel", "dur": b}]
        return ks

    found = probe.by_kernel([replay([36.0, 37.0], [15.0, 14.0]), replay([38.0, 36.5], [16, 15])])
    assert found == [("rms_norm_fwd", 36.75, 2.0), ("reduce_kernel", 15.0, 2.0)]
    text = probe.by_kernel_text(found, calls=2)
    assert text == "rms_norm_fwd=36.750 x1.00/call; reduce_kernel=15.000 x1.00/call"


@pytest.mark.parametrize(
    ("name", "needs_csv"),
    [("graph_timeline_probe", False), ("graph_dram_probe", False), ("placement_probe", True)],
)
def test_the_probes_refuse_an_unknown_pattern(
    name: str, needs_csv: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The probes that time or count a sweep shape take gpu_sweep.py's patterns; a
    misspelt one is a usage error before any GPU work."""
    import importlib

    probe = importlib.import_module(name)
    csv_args = ["--csv", str(tmp_path / "out.csv")] if needs_csv else []
    with pytest.raises(SystemExit) as e:
        probe.main([*csv_args, "--pattern", "rotate"])
    assert e.value.code == 2
    assert "invalid choice: 'rotate'" in capsys.readouterr().err


def test_a_pattern_step_is_the_call_itself_only_on_the_same_tensors() -> None:
    """gpu_sweep.pattern_step, which the sweep and the timeline probe time: `same` is
    the first set's call itself; `consumer` takes the sets in turn and sums what the op's
    result offers the next op (silu_and_mul_backward: every output)."""
    calls: list[int] = []
    summed: list[torch.Tensor] = []

    class Seen(torch.Tensor):
        def sum(self, *args, **kwargs):  # type: ignore[override]
            summed.append(self)
            return super().sum(*args, **kwargs)

    def call(k: int):
        def run() -> tuple[torch.Tensor, torch.Tensor]:
            calls.append(k)
            return torch.ones(2).as_subclass(Seen), torch.zeros(2).as_subclass(Seen)

        return run

    fns = [call(0), call(1)]
    assert gpu_sweep.pattern_step("rms_norm", "same", fns) is fns[0]
    step = gpu_sweep.pattern_step("fused_add_rms_norm", "consumer", fns)
    for _ in range(3):
        step()
    assert calls == [0, 1, 0] and len(summed) == 3  # the first output of each result
    step = gpu_sweep.pattern_step("silu_and_mul_backward", "consumer", fns)
    step()
    assert len(summed) == 5  # both halves


@pytest.mark.parametrize("pattern", ["same", "rotating"])
def test_the_placement_probe_times_each_placement_in_the_pattern(
    pattern: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """placement_probe.py's loop on the CPU (the GPU parts stubbed): each placement makes
    the pattern's input sets, its graph holds whole rounds of them, and the timed step takes
    them in turn (`same`: the first set's call alone, the calls of one set)."""
    import placement_probe

    made: list[tuple[torch.Tensor, torch.Tensor]] = []

    def make_inputs(op, rows, hidden, dtype):
        made.append((torch.full((rows, hidden), float(len(made))), torch.ones(hidden)))
        return made[-1]

    ran: list[float] = []
    monkeypatch.setattr(
        gpu_sweep,
        "implementation",
        lambda op, impl, inputs, lg: lambda: ran.append(float(inputs[0][0, 0])),
    )
    timed: list[int] = []

    def graph_us(step, calls: int) -> float:
        timed.append(calls)
        for _ in range(calls):
            step()
        return 1.0

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(placement_probe, "make_inputs", make_inputs)
    monkeypatch.setattr(placement_probe, "spacers", lambda rng: [])
    monkeypatch.setattr(placement_probe, "graph_us", graph_us)
    out = tmp_path / "p.csv"
    argv = ["--csv", str(out), "--op", "rms_norm", "--shapes", "16x4096", "--impls", "copy"]
    assert placement_probe.main([*argv, "--placements", "2", "--pattern", pattern]) == 0
    sets = gpu_sweep.shape_input_sets(pattern, "rms_norm", 16, 4096, torch.bfloat16)
    calls = gpu_sweep.calls_per_graph("rms_norm", 16, 4096, torch.bfloat16, sets)
    assert (sets, len(made)) == ((1, 2) if pattern == "same" else (4, 8))
    assert timed == [calls, calls] and calls % sets == 0
    # Each placement's graph takes its own sets in turn, every set equally often.
    rounds = calls // sets
    assert ran == [
        float(k) for p in (0, 1) for _ in range(rounds) for k in range(p * sets, (p + 1) * sets)
    ]
    rows = out.read_text().splitlines()
    assert len(rows) == 3 and rows[0].split(",")[4] == "pattern"
    assert all(r.split(",")[4] == pattern for r in rows[1:])


@pytest.mark.parametrize(
    ("flag", "value", "message"),
    [
        ("--warm-up", "-1", "--warm-up must be 0 or more, not -1"),
        ("--placements", "0", "--placements must be at least 1, not 0"),
    ],
)
def test_sweep_counts_below_their_floor_are_usage_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flag: str, value: str, message: str
) -> None:
    out = tmp_path / "out.csv"
    with pytest.raises(SystemExit) as e:
        gpu_sweep.main(["--csv", str(out), flag, value])
    assert e.value.code == 2
    assert message in capsys.readouterr().err
    assert not out.exists()


def test_a_sweep_warms_up_once_before_its_first_shape(monkeypatch: pytest.MonkeyPatch) -> None:
    """sweep() drops --warm-up graphs before the first shape is timed, and never again
    (the timing itself needs a GPU: warm_up and time_shape are stood in for)."""
    import argparse

    log: list[str] = []
    monkeypatch.setattr(gpu_sweep, "warm_up", lambda graphs: log.append(f"warm-up {graphs}"))

    def time_shape(op, rows, hidden, dtype, impls, lg, placements, rng, first, pattern):
        log.append(f"{op} {rows}x{hidden}")
        return {"fusedops": 1.0}, (torch.zeros(rows, hidden, dtype=dtype),)

    monkeypatch.setattr(gpu_sweep, "time_shape", time_shape)
    args = argparse.Namespace(
        impls=["fusedops"],
        warm_up=3,
        rows=(1, 16),
        hidden=(4096,),
        quick=False,
        dtypes=["bfloat16"],
        ops=["rms_norm", "fused_add_rms_norm"],
        placements=1,
        pattern="rotating",
    )
    rows: list[dict[str, object]] = []

    class Writer:
        writerow = rows.append

    gpu_sweep.sweep(args, {}, Writer())
    assert log == [
        "warm-up 3",
        "rms_norm 1x4096",
        "rms_norm 16x4096",
        "fused_add_rms_norm 1x4096",
        "fused_add_rms_norm 16x4096",
    ]
    assert len(rows) == 4


def test_both_scripts_drop_three_graphs_first_unless_told(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Without --warm-up both scripts drop 3 graphs before timing anything, and 0 when
    told: with 0 the first shape of an H200 sweep ran fast (NOTES.md v44), with 3 it did
    not (v45). The GPU work is stood in for; for gpu_sweep.py this checks the command
    line reaches sweep(), whose own order test_a_sweep_warms_up_once_before_its_first_shape
    checks."""
    log: list[str] = []
    monkeypatch.setattr(gpu_sweep, "warm_up", lambda graphs: log.append(f"warm-up {graphs}"))
    monkeypatch.setattr(call_patterns, "time_case", lambda writer, case, *a: log.append("case"))
    cases = "rms_norm:bfloat16:1x4096,rms_norm:bfloat16:16x4096"
    assert call_patterns.main([str(tmp_path / "a.csv"), "--cases", cases]) == 0
    assert call_patterns.main([str(tmp_path / "b.csv"), "--cases", cases, "--warm-up", "0"]) == 0
    assert log == ["warm-up 3", "case", "case", "warm-up 0", "case", "case"]

    log.clear()
    monkeypatch.setattr(gpu_sweep, "sweep", lambda args, *a: log.append(f"warm-up {args.warm_up}"))
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda: "a stand-in GPU")
    assert gpu_sweep.main(["--csv", str(tmp_path / "c.csv")]) == 0
    assert gpu_sweep.main(["--csv", str(tmp_path / "d.csv"), "--warm-up", "0"]) == 0
    assert log == ["warm-up 3", "warm-up 0"]
