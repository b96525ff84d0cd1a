"""benchmarks/gpu_sweep.py's rivals, on the CPU: torch.compile with rows dynamic (one graph
per op, dtype and hidden) and the opt-in compile-static (one graph per shape), and
ncu_miss_table.py counting every rival in a sweep.

gpu_sweep.py times only on a GPU; what it calls to build each implementation does not
need one, so the real torch.compile (inductor's CPU code) runs here.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))
sys.path.insert(0, str(REPO / "benchmarks" / "tools"))
import gpu_sweep  # noqa: E402
import ncu_miss_table  # noqa: E402
from references import manual_rms_norm  # noqa: E402


def cpu_inputs(rows: int, hidden: int = 64) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(rows)
    return torch.randn(rows, hidden, generator=g), torch.randn(hidden, generator=g)


def graphs() -> int:
    from torch._dynamo.utils import counters

    return counters["stats"]["unique_graphs"]


def test_compile_static_compiles_each_row_count_where_compile_shares_one() -> None:
    torch._dynamo.reset()
    before = graphs()
    for rows in (16, 48):
        inputs = cpu_inputs(rows)
        fn = gpu_sweep.implementation("rms_norm", "compile", inputs, None)
        torch.testing.assert_close(fn(), manual_rms_norm(*inputs))
    shared = graphs() - before  # rows marked dynamic: one graph for both
    for rows in (16, 48):
        inputs = cpu_inputs(rows)
        torch._dynamo.mark_dynamic(inputs[0], 0)  # as "compile" leaves a shared input
        fn = gpu_sweep.implementation("rms_norm", "compile-static", inputs, None)
        torch.testing.assert_close(fn(), manual_rms_norm(*inputs))
    assert (shared, graphs() - before - shared) == (1, 2)


def test_compile_static_is_opt_in_and_unknown_impls_are_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert "compile-static" not in gpu_sweep.IMPLS
    with pytest.raises(SystemExit) as e:
        gpu_sweep.main(["--csv", str(tmp_path / "x.csv"), "--impls", "fusedops,compile-stat"])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "unknown --impls compile-stat" in err and "compile-static" in err


def test_a_miss_names_the_fastest_rival_whatever_its_name() -> None:
    key = ("rms_norm", "float32", 65536, 16384)
    times = {key: {"fusedops": 106.0, "compile": 200.0, "compile-static": 100.0, "copy": 90.0}}
    assert ncu_miss_table.misses(times, 1.0) == {
        ("rms_norm", "float32"): [(65536, 16384, "compile-static", pytest.approx(6.0))]
    }
    # The copy is the ceiling, not a rival: level with the other rivals is no miss.
    times[key]["compile-static"] = 106.0
    assert ncu_miss_table.misses(times, 1.0) == {}


def test_the_probes_take_compile_static_and_refuse_unknown_impls(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The one-shape probes (graph_dram_probe.py, output_offset_probe.py) and
    graph_neighbor_probe.py take the sweep's opt-in implementations too, so a miss
    against compile-static can be probed; a misspelt one is a usage error naming the
    known ones."""
    import argparse

    import graph_neighbor_probe
    import shape_probe_args

    parser = argparse.ArgumentParser()
    shape_probe_args.add_shape_probe_args(parser)
    args = parser.parse_args(["--shape", "1024x8192", "--impls", "fusedops,compile-static"])
    rows, hidden, dtype, impls = shape_probe_args.shape_probe_args(parser, args)
    assert (rows, hidden, dtype, impls) == (
        1024,
        8192,
        torch.bfloat16,
        ["fusedops", "compile-static"],
    )
    args = parser.parse_args(["--impls", "fusedops,compile-statc"])
    with pytest.raises(SystemExit) as e:
        shape_probe_args.shape_probe_args(parser, args)
    assert e.value.code == 2
    assert "unknown --impls compile-statc" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        graph_neighbor_probe.main(["--impls", "liger,compile-statc"])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "unknown --impls compile-statc" in err and "compile-static" in err


def test_the_placement_probe_takes_compile_static(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """placement_probe.py times the sweep's opt-in implementations too (the rotating
    pattern's disputed rival at bf16 fused add 256 x 8192 is compile-static): with one, it
    gets as far as asking for a GPU; a misspelt one is a usage error naming the known ones."""
    import placement_probe

    out = tmp_path / "out.csv"
    args = ["--csv", str(out), "--op", "fused_add_rms_norm", "--pattern", "rotating"]
    if not torch.cuda.is_available():
        assert placement_probe.main([*args, "--impls", "fusedops,compile-static"]) == 2
        assert "needs a CUDA GPU" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        placement_probe.main([*args, "--impls", "fusedops,compile-statc"])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "unknown --impls compile-statc" in err and "compile-static" in err


@pytest.mark.parametrize("probe", ["graph_neighbor_probe", "graph_timeline_probe"])
def test_the_graph_probes_take_cases_and_refuse_bad_ones(
    probe: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The graph probes read --cases OP:DTYPE:ROWSxHIDDEN,... (shape_probe_args.parse_cases)
    and --impls against the sweep's known implementations; a malformed case, a dtype the
    sweep does not time or a misspelt implementation is a usage error before any GPU
    work."""
    import importlib

    import shape_probe_args

    module = importlib.import_module(probe)
    assert shape_probe_args.parse_cases(
        "fused_add_rms_norm:bfloat16:1024x8192,rms_norm:float32:16x4096"
    ) == [("fused_add_rms_norm", torch.bfloat16, 1024, 8192), ("rms_norm", torch.float32, 16, 4096)]
    for bad, named in (
        (["--cases", "rms_norm:bfloat16"], "is not OP:DTYPE:ROWSxHIDDEN"),
        (["--cases", "rms_norm:float64:16x4096"], "is not OP:DTYPE:ROWSxHIDDEN"),
        (["--cases", "layer_norm:float32:16x4096"], "is not OP:DTYPE:ROWSxHIDDEN"),
        (["--impls", "fusedops,compile-statc"], "unknown --impls compile-statc"),
    ):
        with pytest.raises(SystemExit) as e:
            module.main(bad)
        assert e.value.code == 2
        assert named in capsys.readouterr().err
