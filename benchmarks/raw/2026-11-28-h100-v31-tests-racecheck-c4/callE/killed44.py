"""gpu_test.py's run_step_output on racecheck of v30's workload (256 x 16384 in its loop)."""

import importlib.util
import os
import sys
from pathlib import Path

spec = importlib.util.spec_from_file_location("gpu_test_script", "scripts/gpu_test.py")
g = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = g
spec.loader.exec_module(g)
cmd = [
    "compute-sanitizer",
    "--tool",
    "racecheck",
    "--error-exitcode",
    "99",
    sys.executable,
    ".device/scripts/workload_v30.py",
]
step, output = g.run_step_output(
    "compute-sanitizer racecheck (v30 workload)", cmd, dict(os.environ), Path.cwd()
)
step = g.sanitizer_clean(step, "racecheck", output)
print(g.render([g.WheelResult(Path("head.whl"), [step])]))
