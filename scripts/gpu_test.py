"""Test built wheels on this machine's GPU, with GPU tests required.

    python scripts/gpu_test.py WHEEL [WHEEL ...] [--no-sanitizer] [-k EXPR]

For each wheel: install it into a private directory against the machine's own
torch (`pip install --no-deps --target`, so torch is never touched), run the
test suite with FUSEDOPS_REQUIRE_GPU=1 (a missing GPU fails instead of
skipping), then run the CUDA workload once under `compute-sanitizer` memcheck
and racecheck where the tool exists. Prints a verdict per wheel and exits
non-zero if any step of any wheel failed. Needs only pip and pytest: this is
what a bare GPU runner has.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# The op and package tests run against the installed wheel; pipeline and build
# tests exercise build tooling a GPU runner does not have.
SUITE = ["tests/ops", "tests/package", "tests/faults"]
WORKLOAD = REPO / "tests" / "ops" / "sanitizer_workload.py"
SANITIZER_TOOLS = ("memcheck", "racecheck")


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


def run_step(name: str, cmd: list[str], env: dict[str, str], cwd: Path) -> Step:
    log(f"{name}: {' '.join(cmd)}")
    start = time.monotonic()
    proc = subprocess.run(cmd, env=env, cwd=cwd, check=False, text=True, capture_output=True)
    seconds = time.monotonic() - start
    output = (proc.stdout + proc.stderr).rstrip()
    print(output[-6000:], flush=True)
    last = output.splitlines()[-1] if output else ""
    return Step(name, proc.returncode == 0, seconds, last)


def sanitizer_clean(step: Step, tool: str) -> Step:
    """compute-sanitizer exits 0 even with findings unless told otherwise: check its summary too."""
    summary_ok = (
        "ERROR SUMMARY: 0 errors" in step.detail
        or "RACECHECK SUMMARY: 0 hazards" in step.detail
        or step.detail.endswith("0 errors, 0 warnings)")
    )
    return Step(step.name, step.ok and summary_ok, step.seconds, step.detail)


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

    pytest_cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *SUITE]
    if args.k:
        pytest_cmd += ["-k", args.k]
    result.steps.append(run_step("pytest (GPU required)", pytest_cmd, env, REPO))

    sanitizer = shutil.which("compute-sanitizer")
    if args.no_sanitizer:
        log("compute-sanitizer: skipped (--no-sanitizer)")
    elif sanitizer is None:
        log("compute-sanitizer: not found on PATH, sanitizer steps skipped")
    else:
        for tool in SANITIZER_TOOLS:
            step = run_step(
                f"compute-sanitizer {tool}",
                [
                    sanitizer,
                    "--tool",
                    tool,
                    "--error-exitcode",
                    "99",
                    sys.executable,
                    str(WORKLOAD),
                ],
                env,
                workdir,
            )
            result.steps.append(sanitizer_clean(step, tool))
    return result


def render(results: list[WheelResult]) -> str:
    lines = ["", "gpu_test verdicts:"]
    for res in results:
        lines.append(f"  {'PASS' if res.ok else 'FAIL'}  {res.wheel.name}")
        for step in res.steps:
            mark = "ok  " if step.ok else "FAIL"
            lines.append(f"      {mark} {step.name:<28} {step.seconds:7.1f}s  {step.detail[:90]}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("wheels", nargs="+", type=Path, help="wheel files to test")
    parser.add_argument("--no-sanitizer", action="store_true", help="skip compute-sanitizer runs")
    parser.add_argument("-k", help="pytest -k expression (to narrow the suite)")
    args = parser.parse_args(argv)

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
