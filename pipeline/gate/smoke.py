"""The smoke check: install the wheel next to a torch and run the three ops on CPU.

The wheel goes (``--no-deps``) into a temporary ``--target`` directory put
first on PYTHONPATH of an interpreter that already has torch (the build
environment's, by default the one running the gate), and a small script
compares the ops with torch's own math. Nothing is downloaded.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

from ..cell import Cell
from .report import FAIL, CheckResult, result

SMOKE_TIMEOUT_S = 600.0
PIP_TIMEOUT_S = 600.0

# Runs inside the smoke interpreter: only torch and fusedops may be imported.
SMOKE_SCRIPT = r"""
import json, os, platform, sys
expect = json.loads(os.environ["FUSEDOPS_SMOKE_EXPECT"])
errors = []
result = {"python": platform.python_version(), "errors": errors}
try:
    import torch
    result["torch"] = torch.__version__.split("+")[0]
    import fusedops
    from fusedops._build_info import BUILD_INFO
except Exception as exc:
    errors.append(f"import failed: {type(exc).__name__}: {exc}")
    print("SMOKE-RESULT " + json.dumps(result))
    sys.exit(1)
print("fusedops imported from", fusedops.__file__)
print("BUILD_INFO", json.dumps(BUILD_INFO, sort_keys=True, default=str))
root = expect["install_root"]
if not os.path.realpath(fusedops.__file__).startswith(os.path.realpath(root) + os.sep):
    errors.append(f"imported fusedops from {fusedops.__file__}, not the wheel under test")
for key, want in expect["build_info"].items():
    if BUILD_INFO.get(key) != want:
        errors.append(f"BUILD_INFO[{key!r}] is {BUILD_INFO.get(key)!r}, expected {want!r}")
torch.manual_seed(0)
d, eps = 64, 1e-6
x, res, w = torch.randn(4, 3, d), torch.randn(4, 3, d), torch.randn(d)
g = torch.randn(4, 3, 2 * d)
def ref_rms(t):
    return t * torch.rsqrt(t.pow(2).mean(-1, keepdim=True) + eps) * w
def run(op, fn):
    try:
        fn()
        print("ok", op)
    except Exception as exc:
        errors.append(f"{op}: {type(exc).__name__}: {str(exc).strip()[:500]}")
run("rms_norm", lambda: torch.testing.assert_close(fusedops.rms_norm(x, w), ref_rms(x)))
def fused():
    out, res_out = fusedops.fused_add_rms_norm(x, res, w)
    torch.testing.assert_close(res_out, x + res)
    torch.testing.assert_close(out, ref_rms(x + res))
run("fused_add_rms_norm", fused)
run("silu_and_mul", lambda: torch.testing.assert_close(
    fusedops.silu_and_mul(g), torch.nn.functional.silu(g[..., :d]) * g[..., d:]))
print("SMOKE-RESULT " + json.dumps(result))
sys.exit(1 if errors else 0)
"""


def expected_build_info(cell: Cell | None, build_info: Mapping[str, Any] | None) -> dict[str, Any]:
    """The BUILD_INFO fields the installed package must report at run time."""
    want = {
        k: v for k, v in (build_info or {}).items() if k in ("version", "abi", "variant", "cuda")
    }
    if cell is not None:
        want.update(abi=cell.abi, variant=str(cell.variant), cuda=cell.variant.cuda_version)
    return want


def check_smoke_output(
    returncode: int, output: str, torch_spec: SpecifierSet | None = None
) -> CheckResult:
    """Judge the smoke script's output: its last SMOKE-RESULT line is a JSON summary."""
    name = "smoke"
    summary: dict[str, Any] = {}
    for line in reversed(output.strip().splitlines()):
        if line.startswith("SMOKE-RESULT "):
            try:
                summary = json.loads(line.removeprefix("SMOKE-RESULT "))
            except json.JSONDecodeError:
                summary = {}
            break
    if not isinstance(summary, dict) or not summary:
        tail = "\n".join(output.strip().splitlines()[-15:])
        return CheckResult(name, FAIL, f"smoke script died (exit {returncode}):\n{tail}")
    problems = [str(e) for e in summary.get("errors") or []]
    torch_version = str(summary.get("torch", ""))
    if torch_spec is not None and torch_version:
        try:
            inside = torch_spec.contains(Version(torch_version).public, prereleases=True)
        except InvalidVersion:
            inside = False
        if not inside:
            problems.append(
                f"smoke env has torch {torch_version}, outside the wheel's torch{torch_spec}"
            )
    if returncode != 0 and not problems:
        problems.append(f"smoke script exit {returncode}")
    ok = f"3 ops match torch on CPU (torch {torch_version}, python {summary.get('python')})"
    return result(name, problems, ok)


def run_smoke(
    wheel: Path,
    python: Path,
    *,
    expect: Mapping[str, Any],
    torch_spec: SpecifierSet | None,
    log: Callable[[str], object],
) -> CheckResult:
    """Install ``wheel`` for ``python`` into a temp dir and run SMOKE_SCRIPT there."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    with tempfile.TemporaryDirectory(prefix="fusedops-smoke-") as tmp:
        target = Path(tmp) / "site"
        cmd = [str(python), "-m", "pip", "--disable-pip-version-check", "install"]
        cmd += ["--no-deps", "--no-index", "--target", str(target), str(wheel)]
        log(f"gate: smoke: installing into {target}")
        try:
            proc = subprocess.run(
                cmd, capture_output=True, text=True, env=env, check=False, timeout=PIP_TIMEOUT_S
            )
        except (OSError, subprocess.SubprocessError) as exc:
            return CheckResult("smoke", FAIL, f"could not set up the smoke environment: {exc}")
        if proc.returncode != 0:
            tail = (proc.stderr or proc.stdout).strip()[-1500:]
            return CheckResult(
                "smoke", FAIL, f"could not set up the smoke environment: {shlex.join(cmd)}:\n{tail}"
            )
        env["PYTHONPATH"] = str(target)
        env["FUSEDOPS_SMOKE_EXPECT"] = json.dumps(
            {"install_root": str(target), "build_info": dict(expect)}
        )
        # cwd is the temp dir so a source checkout's fusedops/ cannot shadow the wheel.
        try:
            proc = subprocess.run(
                [str(python), "-c", SMOKE_SCRIPT],
                capture_output=True,
                text=True,
                env=env,
                cwd=tmp,
                check=False,
                timeout=SMOKE_TIMEOUT_S,
            )
        except subprocess.TimeoutExpired:
            return CheckResult("smoke", FAIL, f"smoke script hung for {SMOKE_TIMEOUT_S:g} s")
    return check_smoke_output(proc.returncode, proc.stdout + proc.stderr, torch_spec)
