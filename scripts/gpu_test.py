"""Test built wheels on this machine's GPU, with GPU tests required.

    python scripts/gpu_test.py WHEEL [WHEEL ...] [--no-sanitizer | --sanitizer-only]
        [-k EXPR] [--part K/N]

For each wheel: install it into a private directory against the machine's own
torch (`pip install --no-deps --target`, so torch is never touched), run the
test suite with FUSEDOPS_REQUIRE_GPU=1 (a missing GPU fails instead of
skipping), then run the CUDA workload under `compute-sanitizer` memcheck
(once) and racecheck (once a dtype, to bound its host memory) where the tool
exists. Prints a verdict per wheel and exits non-zero if any step of any wheel
failed. Needs only pip and pytest: this is
what a bare GPU runner has.

A job with a time limit per command can split the run: `--no-sanitizer` (the
suite), then `--sanitizer-only` (install, import and the sanitizer runs,
where a missing compute-sanitizer is a failure, not a skip). `--part K/N` runs
the K-th of N contiguous slices of the suite, each with its own check that its
GPU tests passed: `--no-sanitizer --part 1/2`, `--no-sanitizer --part 2/2` and
`--sanitizer-only` are the whole run, each test once (on an H100 the suite took
11 minutes, 6 and 5 in its two halves; the sanitizers about 3, racecheck 155-168 s
of it when it ran the workload whole).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# The op and package tests run against the installed wheel; pipeline and build
# tests exercise build tooling a GPU runner does not have.
SUITE = [
    "tests/ops",
    "tests/package",
    "tests/faults",
    # the pipeline's own faults need the build tooling a GPU runner does not have
    "--ignore=tests/faults/test_pipeline_input.py",
]
WORKLOAD = REPO / "tests" / "ops" / "sanitizer_workload.py"
SANITIZER_TOOLS = ("memcheck", "racecheck")
# The workload's parts (its DTYPES; a test keeps the two equal). racecheck runs it a
# process a dtype: its host memory grows with a process's launches, and the whole
# workload peaked at 120.5 of an H100 runner's 126 GiB (one shape more: exit 9 at
# 124.7 GiB, most likely the OOM killer). memcheck's peak was 1.2 GiB, so it runs
# the workload whole.
WORKLOAD_DTYPES = ("float32", "float16", "bfloat16", "float64")
SPLIT_BY_DTYPE = {"racecheck"}


@dataclass
class Step:
    name: str
    ok: bool
    seconds: float
    detail: str = ""


@dataclass
class WheelResult:
    wheel: Path
    steps: list[Step] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return bool(self.steps) and all(s.ok for s in self.steps)


def log(message: str) -> None:
    print(f"[gpu_test] {message}", flush=True)


def machine_memory_bytes() -> int:
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def killed_detail(returncode: int, peak_rss_bytes: int, memory_bytes: int) -> str | None:
    """Why a step's process died, where its exit says it was killed with SIGKILL.

    A process killed by a signal returns -9 to Popen; compute-sanitizer returns 9
    when its target was (seen on an H100 runner: racecheck of a larger workload
    grew to 124.7 of the machine's 125.9 GiB and exited 9 with 0 hazards and no
    error of its own). A peak near the machine's memory names the OOM killer.
    Any step's own exit 9 reads the same way (pip, pytest and compute-sanitizer
    have none of their own), so the detail says "likely".
    """
    if returncode not in (signal.SIGKILL, -signal.SIGKILL):
        return None
    gib = 1024**3
    share = peak_rss_bytes / memory_bytes if memory_bytes else 0.0
    cause = (
        "the OOM killer: shrink the workload"
        if share >= 0.9
        else "a signal from outside (a runner's time or memory limit?)"
    )
    return (
        f"killed (exit {returncode}, SIGKILL) at a peak RSS of {peak_rss_bytes / gib:.1f} GiB"
        f" of the machine's {memory_bytes / gib:.1f} GiB: likely {cause}"
    )


def run_step_output(name: str, cmd: list[str], env: dict[str, str], cwd: Path) -> tuple[Step, str]:
    """Run a step, streaming its output (a job killed at its time limit still shows
    how far it got) and keeping it for the summary parsers. Logs the step's peak
    resident memory (its process tree's largest), which a killed step's detail
    reads."""
    log(f"{name}: {' '.join(cmd)}")
    start = time.monotonic()
    lines: list[str] = []
    proc = subprocess.Popen(
        cmd,
        env=env,
        cwd=cwd,
        text=True,
        errors="replace",  # a tool's stray bytes must not end the step's reading
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    assert proc.stdout is not None
    try:
        with proc.stdout:
            for line in proc.stdout:
                print(line, end="", flush=True)
                lines.append(line)
    except BaseException:  # e.g. Ctrl-C: leave no child running
        proc.kill()
        proc.wait()
        raise
    # wait4, not Popen.wait: it returns this child's resource usage, whose
    # ru_maxrss (KiB on Linux) covers the descendants it waited for.
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    seconds = time.monotonic() - start
    peak_rss = usage.ru_maxrss * 1024
    log(f"{name}: exit {proc.returncode}, peak RSS {peak_rss / 1024**3:.1f} GiB, {seconds:.0f} s")
    output = "".join(lines).rstrip()
    last = output.splitlines()[-1] if output else ""
    killed = killed_detail(proc.returncode, peak_rss, machine_memory_bytes())
    return Step(name, proc.returncode == 0, seconds, killed or last), output


def run_step(name: str, cmd: list[str], env: dict[str, str], cwd: Path) -> Step:
    return run_step_output(name, cmd, env, cwd)[0]


# compute-sanitizer's last line: "========= ERROR SUMMARY: 0 errors" (memcheck) or
# "========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)".
_SUMMARY = {
    "memcheck": re.compile(r"^=+ ERROR SUMMARY: (\d+) errors?$"),
    "racecheck": re.compile(
        r"^=+ RACECHECK SUMMARY: (\d+) hazards? displayed \((\d+) errors?, (\d+) warnings?\)$"
    ),
}


def sanitizer_summary_clean(tool: str, output: str) -> bool:
    """True only when the tool's summary line is present and every count in it is 0."""
    pattern = _SUMMARY[tool]
    for line in reversed(output.strip().splitlines()):
        if m := pattern.match(line.strip()):
            return all(int(n) == 0 for n in m.groups())
    return False


def sanitizer_clean(step: Step, tool: str, output: str) -> Step:
    """compute-sanitizer can exit 0 with findings: its summary must say 0 as well."""
    return Step(
        step.name, step.ok and sanitizer_summary_clean(tool, output), step.seconds, step.detail
    )


def junit_node(classname: str, name: str) -> str:
    """pytest's junit (classname, name) as a node id: tests.ops.test_x.TestY -> tests/ops/test_x.py::TestY::name."""
    parts = classname.split(".")
    for i in range(len(parts), 0, -1):
        if (REPO / Path(*parts[:i])).with_suffix(".py").is_file():
            return "::".join(["/".join(parts[:i]) + ".py", *parts[i:], name])
    return f"{classname}::{name}"


def junit_outcomes(xml_text: str) -> dict[str, str]:
    """node id -> passed | failed | skipped, from pytest's --junitxml report."""
    outcomes = {}
    for case in ET.fromstring(xml_text).iter("testcase"):
        node = junit_node(case.get("classname", ""), case.get("name", ""))
        tags = {child.tag for child in case}
        outcomes[node] = (
            "failed"
            if tags & {"failure", "error"}
            else "skipped"
            if "skipped" in tags
            else "passed"
        )
    return outcomes


def missing_gpu_tests(required: list[str], outcomes: dict[str, str]) -> list[str]:
    """Required GPU tests that did not pass: deselected, not collected, skipped or failed."""
    return [
        f"{node} ({outcomes.get(node, 'not run')})"
        for node in required
        if outcomes.get(node) != "passed"
    ]


def gpu_marker_expression(gpu_count: int) -> str:
    """The tests this machine must pass: every gpu-marked one, but those marked
    multi_gpu only where there are two GPUs or more (they skip on one GPU)."""
    return "gpu" if gpu_count >= 2 else "gpu and not multi_gpu"


def gpu_count(env: dict[str, str]) -> int:
    """torch.cuda.device_count() as the suite's interpreter sees it (0 if torch fails)."""
    proc = subprocess.run(
        [sys.executable, "-c", "import torch; print(torch.cuda.device_count())"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    lines = proc.stdout.strip().splitlines()
    return int(lines[-1]) if proc.returncode == 0 and lines and lines[-1].isdigit() else 0


class CollectionError(RuntimeError):
    """pytest could not collect the suite (an import error in a test module, say)."""


def collect_tests(env: dict[str, str], *pytest_args: str) -> list[str]:
    """The node ids of the suite's tests (narrowed by `pytest_args`), in pytest's order.

    Raises CollectionError if pytest fails to collect: an empty list then would read
    as a suite with no tests. Exit code 5 is pytest's "no tests collected".
    """
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "--collect-only",
            "-q",
            "-p",
            "no:cacheprovider",
            *pytest_args,
            *SUITE,
        ],
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode not in (0, 5):
        raise CollectionError(
            f"pytest --collect-only failed:\n{(proc.stdout + proc.stderr)[-2000:]}"
        )
    return [line.strip() for line in proc.stdout.splitlines() if "::" in line]


def collect_gpu_tests(env: dict[str, str]) -> list[str]:
    """The node ids of every gpu-marked test this machine must pass."""
    return collect_tests(env, "-m", gpu_marker_expression(gpu_count(env)))


def part_of(text: str) -> tuple[int, int]:
    """--part K/N (1 <= K <= N)."""
    match = re.fullmatch(r"(\d+)/(\d+)", text)
    if not match or not 1 <= int(match[1]) <= int(match[2]):
        raise argparse.ArgumentTypeError(f"{text!r}: expected K/N with 1 <= K <= N, e.g. 1/2")
    return int(match[1]), int(match[2])


def split_part(nodes: list[str], part: tuple[int, int]) -> list[str]:
    """Slice K of N of `nodes`, in their order. Contiguous, so that a module's fixtures
    are set up in one part (in two where a boundary cuts it); the N slices together
    are `nodes`, each once."""
    k, n = part
    return nodes[(k - 1) * len(nodes) // n : k * len(nodes) // n]


def test_wheel(wheel: Path, args: argparse.Namespace, workdir: Path) -> WheelResult:
    result = WheelResult(wheel)
    target = workdir / wheel.stem
    install = run_step(
        "install",
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-index",
            "--target",
            str(target),
            str(wheel),
        ],
        dict(os.environ),
        workdir,
    )
    result.steps.append(install)
    if not install.ok:
        return result

    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(target), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env["FUSEDOPS_REQUIRE_GPU"] = "1"
    env["PYTHONDONTWRITEBYTECODE"] = "1"

    # Import from the install, not a source tree, and show what was loaded.
    probe = run_step(
        "import",
        [
            sys.executable,
            "-c",
            "import fusedops, torch; "
            f"assert fusedops.__file__.startswith({str(target)!r}), fusedops.__file__; "
            "print(fusedops.BUILD_INFO, 'on torch', torch.__version__, torch.version.cuda)",
        ],
        env,
        workdir,
    )
    result.steps.append(probe)
    if not probe.ok:
        return result

    if not args.sanitizer_only:
        result.steps.extend(run_suite(wheel, args, workdir, env))
    result.steps.extend(run_sanitizers(args, workdir, env))
    return result


def run_suite(
    wheel: Path, args: argparse.Namespace, workdir: Path, env: dict[str, str]
) -> list[Step]:
    """pytest with GPU tests required, and the check that every gpu-marked test passed."""
    steps = []
    try:
        required = collect_gpu_tests(env)
        selection = split_part(collect_tests(env), args.part) if args.part else SUITE
    except CollectionError as error:
        return [Step("collect the suite", False, 0.0, str(error))]
    if args.part:
        k, n = args.part
        if not selection:
            return [Step("pytest (GPU required)", False, 0.0, f"part {k}/{n} holds no test")]
        chosen = set(selection)
        required = [node for node in required if node in chosen]
    junit = workdir / f"{wheel.stem}.junit.xml"
    pytest_cmd = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        # a test stuck for 5 minutes dumps every thread's stack (a hung job says where)
        "-o",
        "faulthandler_timeout=300",
        "--durations=10",
        f"--junitxml={junit}",
        *selection,
    ]
    if args.k:
        pytest_cmd += ["-k", args.k]
    steps.append(run_step("pytest (GPU required)", pytest_cmd, env, REPO))
    # A GPU job must not pass by running fewer GPU tests: every gpu-marked test
    # that collects must have passed (a -k that deselects some fails here too).
    outcomes = junit_outcomes(junit.read_text()) if junit.is_file() else {}
    # The whole suite must hold GPU tests; a slice of it may hold none.
    none_collected = [] if args.part else ["no gpu-marked test was collected"]
    missing = missing_gpu_tests(required, outcomes) if required else none_collected
    detail = f"{len(required) - len(missing)}/{len(required)} gpu tests passed" + (
        f"; e.g. {missing[0]}" if missing else ""
    )
    steps.append(Step("every GPU test passed", not missing, 0.0, detail))
    return steps


def run_sanitizers(args: argparse.Namespace, workdir: Path, env: dict[str, str]) -> list[Step]:
    """The CUDA workload under each sanitizer tool; nothing with --no-sanitizer."""
    steps = []
    sanitizer = shutil.which("compute-sanitizer")
    if args.no_sanitizer:
        log("compute-sanitizer: skipped (--no-sanitizer)")
    elif sanitizer is None and args.sanitizer_only:
        steps.append(Step("compute-sanitizer", False, 0.0, "not found on PATH (--sanitizer-only)"))
    elif sanitizer is None:
        log("compute-sanitizer: not found on PATH, sanitizer steps skipped")
    else:
        for tool, name, cmd in sanitizer_runs(sanitizer, sys.executable):
            step, output = run_step_output(name, cmd, env, workdir)
            steps.append(sanitizer_clean(step, tool, output))
    return steps


def sanitizer_runs(sanitizer: str, python: str) -> list[tuple[str, str, list[str]]]:
    """(tool, step name, command) of each sanitizer run: the workload whole under
    each tool, but once a dtype under the tools of SPLIT_BY_DTYPE."""
    runs = []
    for tool in SANITIZER_TOOLS:
        base = [sanitizer, "--tool", tool, "--error-exitcode", "99", python, str(WORKLOAD)]
        if tool not in SPLIT_BY_DTYPE:
            runs.append((tool, f"compute-sanitizer {tool}", base))
            continue
        for dtype in WORKLOAD_DTYPES:
            runs.append((tool, f"compute-sanitizer {tool} {dtype}", [*base, "--dtype", dtype]))
    return runs


def render(results: list[WheelResult]) -> str:
    lines = ["", "gpu_test verdicts:"]
    for res in results:
        lines.append(f"  {'PASS' if res.ok else 'FAIL'}  {res.wheel.name}")
        for step in res.steps:
            mark = "ok  " if step.ok else "FAIL"
            # a failure's detail longer: it may be the diagnosis (killed_detail)
            detail = step.detail[:90] if step.ok else step.detail[:500]
            lines.append(f"      {mark} {step.name:<38} {step.seconds:7.1f}s  {detail}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("wheels", nargs="+", type=Path, help="wheel files to test")
    runs = parser.add_mutually_exclusive_group()
    runs.add_argument("--no-sanitizer", action="store_true", help="skip compute-sanitizer runs")
    runs.add_argument(
        "--sanitizer-only", action="store_true", help="only the compute-sanitizer runs, no pytest"
    )
    parser.add_argument("-k", help="pytest -k expression (to narrow the suite)")
    parser.add_argument(
        "--part", type=part_of, help="K/N: run the K-th of N contiguous slices of the suite"
    )
    args = parser.parse_args(argv)
    if args.sanitizer_only and (args.k or args.part):
        parser.error("-k and --part narrow pytest, which --sanitizer-only does not run")

    missing = [w for w in args.wheels if not w.is_file() or w.suffix != ".whl"]
    if missing:
        parser.error(f"not a wheel file: {', '.join(map(str, missing))}")
    try:
        import pytest  # noqa: F401
    except ImportError:
        parser.error("pytest is not installed: pip install pytest")

    with tempfile.TemporaryDirectory(prefix="fusedops-gpu-test-") as tmp:
        results = [test_wheel(w.resolve(), args, Path(tmp)) for w in args.wheels]
    print(render(results))
    return 0 if all(r.ok for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
