"""scripts/gpu_test.py: a GPU job can fail, it cannot pass by skipping."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "gpu_test.py"
WORKLOAD = REPO / "tests" / "ops" / "sanitizer_workload.py"


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args], capture_output=True, text=True, check=False, cwd=REPO
    )


def test_rejects_a_file_that_is_not_a_wheel(tmp_path: Path) -> None:
    bogus = tmp_path / "fusedops.tar.gz"
    bogus.write_text("")
    result = run(str(bogus))
    assert result.returncode == 2 and "not a wheel file" in result.stderr


def stable_wheel_on_a_machine_without_gpu() -> str:
    """The built stable wheel, for tests of what gpu_test.py does where there is no GPU."""
    wheel = os.environ.get("FUSEDOPS_STABLE_WHEEL")
    if not wheel:
        pytest.skip("set FUSEDOPS_STABLE_WHEEL (nox -s tests does)")
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU: the point is what happens without one")
    return wheel


@pytest.mark.slow
def test_without_a_gpu_the_gpu_tests_fail() -> None:
    wheel = stable_wheel_on_a_machine_without_gpu()
    result = run(wheel, "-k", "test_zero_size", "--no-sanitizer")
    assert result.returncode == 1, result.stdout[-2000:]
    assert "FUSEDOPS_REQUIRE_GPU=1 but torch.cuda.is_available() is False" in result.stdout
    assert "FAIL  " in result.stdout and "pytest (GPU required)" in result.stdout


def _gpu_test_module():
    import importlib.util

    spec = importlib.util.spec_from_file_location("gpu_test_script", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look themselves up there
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    ("tool", "output", "clean"),
    [
        ("memcheck", "========= ERROR SUMMARY: 0 errors", True),
        ("memcheck", "========= ERROR SUMMARY: 10 errors", False),
        ("memcheck", "========= ERROR SUMMARY: 1 error", False),
        ("memcheck", "no summary at all", False),
        (
            "racecheck",
            "========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)",
            True,
        ),
        # ends with "0 errors, 0 warnings)" like a clean run, and is not one
        (
            "racecheck",
            "========= RACECHECK SUMMARY: 10 hazards displayed (10 errors, 0 warnings)",
            False,
        ),
        (
            "racecheck",
            "========= RACECHECK SUMMARY: 2 hazards displayed (0 errors, 2 warnings)",
            False,
        ),
    ],
)
def test_sanitizer_summaries_are_parsed_exactly(tool: str, output: str, clean: bool) -> None:
    assert _gpu_test_module().sanitizer_summary_clean(tool, "log line\n" + output + "\n") is clean


def peak_gib_of(detail: str) -> float:
    return float(detail.split("peak RSS of ")[1].split(" GiB")[0])


# Touches 256 MiB, says so, then dies of SIGKILL (as the OOM killer would end it).
DIES_OF_SIGKILL_AFTER_256_MIB = (
    "import os, signal\n"
    "block = bytearray(256 * 1024 * 1024)\n"
    "print('touched', len(block), flush=True)\n"
    "os.kill(os.getpid(), signal.SIGKILL)\n"
)


def test_a_step_killed_by_sigkill_says_so_with_its_peak_memory(tmp_path: Path) -> None:
    """A real process that dies of SIGKILL after touching 256 MiB: the step fails, and its
    detail names the signal and a peak RSS of at least what it touched."""
    g = _gpu_test_module()
    step, output = g.run_step_output(
        "killed", [sys.executable, "-c", DIES_OF_SIGKILL_AFTER_256_MIB], dict(os.environ), tmp_path
    )
    assert not step.ok and "touched" in output
    assert "killed (exit -9, SIGKILL)" in step.detail
    assert peak_gib_of(step.detail) >= 0.2


def test_a_parent_that_exits_9_for_its_killed_child_counts_the_childs_memory(
    tmp_path: Path,
) -> None:
    """compute-sanitizer's case: the process the step runs waits for a child that dies of
    SIGKILL after touching 256 MiB, then exits 9 itself; the step's peak is the child's."""
    g = _gpu_test_module()
    parent = (
        "import subprocess, sys\n"
        f"p = subprocess.run([sys.executable, '-c', {DIES_OF_SIGKILL_AFTER_256_MIB!r}])\n"
        "print('child returned', p.returncode, flush=True)\n"
        "raise SystemExit(9 if p.returncode == -9 else 1)\n"
    )
    step, output = g.run_step_output(
        "sanitizer-like", [sys.executable, "-c", parent], dict(os.environ), tmp_path
    )
    assert "child returned -9" in output
    assert not step.ok and "killed (exit 9, SIGKILL)" in step.detail
    assert peak_gib_of(step.detail) >= 0.2


def test_stray_bytes_in_a_steps_output_do_not_end_it(tmp_path: Path) -> None:
    g = _gpu_test_module()
    script = "import sys; sys.stdout.buffer.write(b'bad \\xff\\xfe bytes\\nlast\\n')"
    step, output = g.run_step_output(
        "bytes", [sys.executable, "-c", script], dict(os.environ), tmp_path
    )
    assert step.ok and step.detail == "last" and "bad \ufffd\ufffd bytes" in output


def test_a_step_that_exits_normally_keeps_its_last_line(tmp_path: Path) -> None:
    g = _gpu_test_module()
    step, _ = g.run_step_output(
        "fails",
        [sys.executable, "-c", "print('last words'); raise SystemExit(3)"],
        dict(os.environ),
        tmp_path,
    )
    assert not step.ok and step.detail == "last words"


@pytest.mark.parametrize(
    ("returncode", "peak", "expected"),
    [
        # compute-sanitizer's exit when its target was killed, near the machine's memory
        (9, 120, "likely the OOM killer: shrink the workload"),
        (-9, 120, "likely the OOM killer"),
        (9, 10, "a signal from outside"),
        (1, 120, None),
        (0, 120, None),
        (137, 120, None),
    ],
)
def test_killed_detail_names_the_oom_killer_only_near_the_machines_memory(
    returncode: int, peak: int, expected: str | None
) -> None:
    gib = 1024**3
    detail = _gpu_test_module().killed_detail(returncode, peak * gib, 128 * gib)
    if expected is None:
        assert detail is None
    else:
        assert detail is not None and expected in detail and f"{peak:.1f} GiB" in detail


def test_a_failed_steps_detail_is_rendered_longer() -> None:
    g = _gpu_test_module()
    killed = "killed " + "x" * 200
    flood = "collect " + "z" * 3000
    result = g.WheelResult(
        Path("w.whl"),
        [
            g.Step("compute-sanitizer racecheck bfloat16", False, 1.0, killed),
            g.Step("collect the suite", False, 1.0, flood),
            g.Step("ok", True, 1.0, "y" * 200),
        ],
    )
    text = g.render([result])
    assert killed in text and flood[:500] in text and flood[:501] not in text
    assert "y" * 90 in text and "y" * 91 not in text
    assert "compute-sanitizer racecheck bfloat16  " in text  # the name column holds it


def workload_constant(name: str) -> object:
    """A constant of the sanitizer workload, read without importing it (it needs CUDA)."""
    tree = ast.parse(WORKLOAD.read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and [t.id for t in node.targets] == [name]:
            return ast.literal_eval(node.value)
    raise AssertionError(f"{name} not found in {WORKLOAD}")


def test_racecheck_runs_the_workload_once_a_dtype_memcheck_once() -> None:
    g = _gpu_test_module()
    assert workload_constant("DTYPES") == g.WORKLOAD_DTYPES
    runs = g.sanitizer_runs("/x/compute-sanitizer", "/x/python")
    memcheck = [cmd for tool, _, cmd in runs if tool == "memcheck"]
    racecheck = [cmd for tool, _, cmd in runs if tool == "racecheck"]
    assert memcheck == [
        [
            "/x/compute-sanitizer",
            "--tool",
            "memcheck",
            "--error-exitcode",
            "99",
            "/x/python",
            str(WORKLOAD),
        ]
    ]
    assert [cmd[-2:] for cmd in racecheck] == [["--dtype", d] for d in workload_constant("DTYPES")]
    assert all(cmd[:7] == [*memcheck[0][:2], "racecheck", *memcheck[0][3:]] for cmd in racecheck)
    names = [name for _, name, _ in runs]
    assert len(set(names)) == len(names) and "compute-sanitizer racecheck bfloat16" in names


def names_in(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def launch_names(functions: dict[str, ast.FunctionDef]) -> set[str]:
    """`fusedops` and the workload's functions that launch an op: those that name
    fusedops, or a function that does (to a fixed point)."""
    launching = {"fusedops"}
    while True:
        more = {name for name, f in functions.items() if names_in(f) & launching}
        if more <= launching:
            return launching
        launching |= more


def test_every_op_launch_of_the_workload_belongs_to_one_dtypes_part() -> None:
    """racecheck runs the workload once a dtype to keep each process's host memory down
    (one process for all peaked at 120.5 of 126 GiB): a launch outside main's dtype loop
    and outside ONE_DTYPE_PARTS would run in every dtype's process."""
    tree = ast.parse(WORKLOAD.read_text())
    # Every launch goes through the name `fusedops`, so the names below see it.
    assert not any(
        isinstance(n, ast.ImportFrom) and (n.module or "").startswith("fusedops")
        for n in ast.walk(tree)
    )
    assert not any(isinstance(n, ast.Attribute) and n.attr == "fusedops" for n in ast.walk(tree))
    functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    main = functions.pop("main")
    launching = launch_names(functions)
    # The parts: dtypes of the workload to launching functions named nowhere else.
    (parts_node,) = [
        n
        for n in tree.body
        if isinstance(n, ast.AnnAssign) and getattr(n.target, "id", "") == "ONE_DTYPE_PARTS"
    ]
    parts = parts_node.value
    assert isinstance(parts, ast.Dict)
    # Module level: nothing but the functions and that table names a launch.
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef) and node is not parts_node:
            assert not names_in(node) & launching, ast.unparse(node)
    keys = [ast.literal_eval(k) for k in parts.keys if k is not None]
    assert keys and set(keys) <= set(workload_constant("DTYPES")), keys
    part_refs = [n for v in parts.values for n in ast.walk(v) if isinstance(n, ast.Name)]
    part_names = {n.id for n in part_refs}
    assert part_names and part_names <= launching, part_names - launching
    everywhere = [n for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id in part_names]
    assert len(everywhere) == len(part_refs), "a part is named outside ONE_DTYPE_PARTS"
    # main: launches only inside its dtype loop; the parts only as
    # ONE_DTYPE_PARTS.get(name, ...) for a name of a loop over dtype_names.
    (dtype_loop,) = [
        n for n in main.body if isinstance(n, ast.For) and getattr(n.target, "id", "") == "dtype"
    ]
    for stmt in main.body:
        if stmt is not dtype_loop:
            assert not names_in(stmt) & launching, ast.unparse(stmt)
    refs = [n for n in ast.walk(main) if isinstance(n, ast.Name) and n.id == "ONE_DTYPE_PARTS"]
    name_loops = [
        n
        for n in ast.walk(main)
        if isinstance(n, ast.For) and getattr(n.iter, "id", "") == "dtype_names"
    ]
    gets = [
        call
        for loop in name_loops
        for call in ast.walk(loop)
        if isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr == "get"
        and call.func.value in refs
        and getattr(call.args[0], "id", None) == getattr(loop.target, "id", "")
    ]
    assert refs and len(gets) == len(refs), [ast.unparse(r) for r in refs]


def test_the_workloads_dtype_flag_takes_its_dtypes_only() -> None:
    """Its argument errors, before it touches CUDA: a dtype it lacks is a usage error."""
    bad = subprocess.run(
        [sys.executable, str(WORKLOAD), "--dtype", "int8"],
        capture_output=True,
        text=True,
        check=False,
        cwd=REPO,
    )
    if "ModuleNotFoundError" in bad.stderr:
        pytest.skip("the workload imports torch and fusedops, not installed here")
    assert bad.returncode == 2 and "invalid choice: 'int8'" in bad.stderr


def test_the_workloads_dtypes_default_to_all_and_repeat_once() -> None:
    probe = (
        "import sys; sys.path.insert(0, 'tests/ops'); import sanitizer_workload as w; "
        "print(w.parse_dtypes([])); "
        "print(w.parse_dtypes(['--dtype', 'float64', '--dtype', 'float16', '--dtype', 'float64']))"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=False, cwd=REPO
    )
    if "ModuleNotFoundError" in result.stderr:
        pytest.skip("the workload imports torch and fusedops, not installed here")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        repr(tuple(workload_constant("DTYPES"))),
        "('float64', 'float16')",
    ]


def test_each_racechecked_dtype_is_its_own_step_and_one_failure_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """run_sanitizers with a stand-in for compute-sanitizer (the tool needs a GPU): a
    script on PATH that prints the tool's summary line, with findings for one dtype."""
    stand_in = tmp_path / "bin" / "compute-sanitizer"
    stand_in.parent.mkdir()
    stand_in.write_text(
        "#!/bin/sh\n"
        'case "$*" in\n'
        '  *memcheck*) echo "========= ERROR SUMMARY: 0 errors" ;;\n'
        '  *"--dtype float64"*) echo "========= RACECHECK SUMMARY: 1 hazard displayed'
        ' (1 error, 0 warnings)"; exit 99 ;;\n'
        '  *) echo "========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)" ;;\n'
        "esac\n"
    )
    stand_in.chmod(0o755)
    monkeypatch.setenv("PATH", f"{stand_in.parent}{os.pathsep}{os.environ['PATH']}")
    g = _gpu_test_module()
    args = g.argparse.Namespace(no_sanitizer=False, sanitizer_only=True, k=None)
    steps = g.run_sanitizers(args, tmp_path, dict(os.environ))
    assert [(s.name, s.ok) for s in steps] == [
        ("compute-sanitizer memcheck", True),
        ("compute-sanitizer racecheck float32", True),
        ("compute-sanitizer racecheck float16", True),
        ("compute-sanitizer racecheck bfloat16", True),
        ("compute-sanitizer racecheck float64", False),
    ]
    assert not g.WheelResult(Path("w.whl"), steps).ok


def test_a_required_gpu_test_that_did_not_pass_is_reported() -> None:
    g = _gpu_test_module()
    xml = """<testsuites><testsuite>
      <testcase classname="tests.ops.test_rms_norm" name="test_a[cuda]"/>
      <testcase classname="tests.ops.test_rms_norm" name="test_b[cuda]"><skipped message="no GPU"/></testcase>
      <testcase classname="tests.ops.test_rms_norm" name="test_c[cuda]"><failure message="x"/></testcase>
    </testsuite></testsuites>"""
    outcomes = g.junit_outcomes(xml)
    assert outcomes["tests/ops/test_rms_norm.py::test_a[cuda]"] == "passed"
    required = [f"tests/ops/test_rms_norm.py::test_{n}[cuda]" for n in "abcd"]
    assert g.missing_gpu_tests(required, outcomes) == [
        "tests/ops/test_rms_norm.py::test_b[cuda] (skipped)",
        "tests/ops/test_rms_norm.py::test_c[cuda] (failed)",
        "tests/ops/test_rms_norm.py::test_d[cuda] (not run)",
    ]


def test_multi_gpu_tests_are_required_only_on_a_machine_with_two_gpus() -> None:
    """A one-GPU runner must not fail for a test that needs two, nor drop any other."""
    g = _gpu_test_module()
    collected = {}
    for gpus in (1, 2):
        proc = subprocess.run(
            [
                sys.executable,
                *("-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"),
                *("-m", g.gpu_marker_expression(gpus), "tests/ops/test_cuda_runtime.py"),
            ],
            cwd=g.REPO,
            capture_output=True,
            text=True,
            check=False,
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr
        collected[gpus] = {line for line in proc.stdout.splitlines() if "::" in line}
    two_gpu_test = "tests/ops/test_cuda_runtime.py::test_second_gpu_runs_on_its_own_device"
    assert collected[2] - collected[1] == {two_gpu_test}
    assert len(collected[1]) > 5
    assert g.gpu_marker_expression(0) == g.gpu_marker_expression(1) == "gpu and not multi_gpu"


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--sanitizer-only", "--no-sanitizer"], "not allowed with argument"),
        (["--sanitizer-only", "-k", "zero"], "-k and --part narrow pytest"),
        (["--sanitizer-only", "--part", "1/2"], "-k and --part narrow pytest"),
        (["--part", "0/2"], "expected K/N with 1 <= K <= N"),
        (["--part", "3/2"], "expected K/N with 1 <= K <= N"),
        (["--part", "half"], "expected K/N with 1 <= K <= N"),
    ],
)
def test_contradicting_or_malformed_flags_are_usage_errors(
    tmp_path: Path, flags: list[str], message: str
) -> None:
    wheel = tmp_path / "fusedops-0.1.0-cp310-abi3-linux_x86_64.whl"
    wheel.write_bytes(b"")
    result = run(str(wheel), *flags)
    assert result.returncode == 2 and message in result.stderr, result.stderr


def test_sanitizer_only_fails_without_compute_sanitizer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With --sanitizer-only the sanitizers are the job: a missing tool fails it."""
    module = _gpu_test_module()
    monkeypatch.setattr(module.shutil, "which", lambda name: None)
    args = module.argparse.Namespace(no_sanitizer=False, sanitizer_only=True, k=None)
    steps = module.run_sanitizers(args, tmp_path, dict(os.environ))
    assert [(s.name, s.ok) for s in steps] == [("compute-sanitizer", False)]
    # Without --sanitizer-only a missing tool is skipped (the suite is the job).
    args.sanitizer_only = False
    assert module.run_sanitizers(args, tmp_path, dict(os.environ)) == []


@pytest.mark.slow
def test_sanitizer_only_runs_no_pytest_and_fails_without_a_gpu() -> None:
    wheel = stable_wheel_on_a_machine_without_gpu()
    result = run(wheel, "--sanitizer-only")
    assert result.returncode == 1, result.stdout[-2000:]
    verdicts = result.stdout[result.stdout.index("gpu_test verdicts:") :]
    assert "pytest" not in verdicts and "FAIL  " in verdicts
    assert "compute-sanitizer" in verdicts


@pytest.mark.parametrize("n", [1, 2, 3, 7, 40])
def test_the_parts_are_the_suite_each_test_once_in_order(n: int) -> None:
    module = _gpu_test_module()
    nodes = [f"tests/ops/test_{i // 10}.py::test_{i}" for i in range(25)]
    parts = [module.split_part(nodes, (k, n)) for k in range(1, n + 1)]
    assert [node for part in parts for node in part] == nodes
    assert max(map(len, parts)) - min(map(len, parts)) <= 1


def test_a_part_that_holds_no_test_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """More parts than tests leave a part empty: that part fails rather than running
    pytest with no test named (which would collect the whole repository)."""
    module = _gpu_test_module()
    monkeypatch.setattr(module, "collect_tests", lambda env, *args: ["tests/ops/test_a.py::t"])
    monkeypatch.setattr(module, "collect_gpu_tests", lambda env: [])
    args = module.argparse.Namespace(k=None, part=(1, 2))
    wheel = tmp_path / "fusedops-0.1.0-cp310-abi3-linux_x86_64.whl"
    (step,) = module.run_suite(wheel, args, tmp_path, dict(os.environ))
    assert (step.name, step.ok, step.detail) == (
        "pytest (GPU required)",
        False,
        "part 1/2 holds no test",
    )


NODES = [f"tests/ops/test_errors.py::t{i}" for i in range(4)]


def _suite_with_fake_pytest(module, monkeypatch: pytest.MonkeyPatch, gpu_nodes: list[str]):
    """run_suite's collections stubbed (NODES, of which gpu_nodes are gpu-marked) and
    pytest replaced by a junit report in which every test it was given passed; returns
    the list the pytest command lines are appended to."""
    commands: list[list[str]] = []
    monkeypatch.setattr(module, "collect_tests", lambda env, *args: list(NODES))
    monkeypatch.setattr(module, "collect_gpu_tests", lambda env: list(gpu_nodes))

    def fake_pytest(name, cmd, env, cwd):
        commands.append(cmd)
        junit = Path(next(a for a in cmd if a.startswith("--junitxml=")).split("=", 1)[1])
        cases = "".join(
            f'<testcase classname="tests.ops.test_errors" name="{n.split("::")[1]}"/>'
            for n in cmd
            if n in NODES
        )
        junit.write_text(f"<testsuites><testsuite>{cases}</testsuite></testsuites>")
        return module.Step(name, True, 0.0)

    monkeypatch.setattr(module, "run_step", fake_pytest)
    return commands


@pytest.mark.parametrize(
    ("part", "selected", "detail"),
    [((1, 2), NODES[:2], "1/1 gpu tests passed"), ((2, 2), NODES[2:], "1/1 gpu tests passed")],
)
def test_a_part_runs_its_slice_and_requires_its_own_gpu_tests(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, part, selected, detail
) -> None:
    module = _gpu_test_module()
    commands = _suite_with_fake_pytest(module, monkeypatch, gpu_nodes=[NODES[0], NODES[3]])
    args = module.argparse.Namespace(k=None, part=part)
    wheel = tmp_path / "fusedops-0.1.0-cp310-abi3-linux_x86_64.whl"
    steps = module.run_suite(wheel, args, tmp_path, dict(os.environ))
    (command,) = commands
    assert [a for a in command if a.startswith("tests/")] == selected
    assert [(s.name, s.ok, s.detail) for s in steps][-1] == ("every GPU test passed", True, detail)


def test_a_slice_without_gpu_tests_passes_but_the_whole_suite_must_have_some(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    module = _gpu_test_module()
    _suite_with_fake_pytest(module, monkeypatch, gpu_nodes=[])
    wheel = tmp_path / "fusedops-0.1.0-cp310-abi3-linux_x86_64.whl"
    for part, ok in (((1, 2), True), (None, False)):
        args = module.argparse.Namespace(k=None, part=part)
        last = module.run_suite(wheel, args, tmp_path, dict(os.environ))[-1]
        assert (last.name, last.ok) == ("every GPU test passed", ok), last.detail


def test_a_suite_that_fails_to_collect_is_a_failed_step(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An import error at collection must not read as an empty suite or slice."""
    module = _gpu_test_module()
    broken = subprocess.CompletedProcess([], 2, stdout="", stderr="ImportError: no fusedops")
    monkeypatch.setattr(module.subprocess, "run", lambda *a, **k: broken)
    monkeypatch.setattr(module, "gpu_count", lambda env: 1)
    args = module.argparse.Namespace(k=None, part=(1, 2))
    wheel = tmp_path / "fusedops-0.1.0-cp310-abi3-linux_x86_64.whl"
    (step,) = module.run_suite(wheel, args, tmp_path, dict(os.environ))
    assert (step.name, step.ok) == ("collect the suite", False)
    assert "ImportError: no fusedops" in step.detail
