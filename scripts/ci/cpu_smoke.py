#!/usr/bin/env python3
"""CPU smoke test of an installed fusedops wheel (cibuildwheel's test-command).

Runs from outside the source tree, so it imports the installed wheel: each op
once on small CPU tensors against a plain-torch reference, then
``python -m fusedops doctor``. Works on a machine without a GPU; a CUDA wheel
must still import there (it loads torch's CUDA libraries, not a driver).
"""

from __future__ import annotations

import argparse
import subprocess
import sys

EPS = 1e-6
HIDDEN = 64


def check_ops() -> list[str]:
    """Run each op on CPU and compare it with plain torch; return what was checked."""
    import torch
    import torch.nn.functional as F

    import fusedops

    torch.manual_seed(0)
    x = torch.randn(3, 5, HIDDEN)
    residual = torch.randn(3, 5, HIDDEN)
    weight = torch.randn(HIDDEN)

    def reference_rms_norm(t: torch.Tensor) -> torch.Tensor:
        return t * torch.rsqrt(t.pow(2).mean(-1, keepdim=True) + EPS) * weight

    torch.testing.assert_close(fusedops.rms_norm(x, weight, EPS), reference_rms_norm(x))

    out, residual_out = fusedops.fused_add_rms_norm(x, residual, weight, EPS)
    torch.testing.assert_close(residual_out, x + residual)
    torch.testing.assert_close(out, reference_rms_norm(x + residual))

    gate_up = torch.randn(7, 2 * HIDDEN)
    expected = F.silu(gate_up[..., :HIDDEN]) * gate_up[..., HIDDEN:]
    torch.testing.assert_close(fusedops.silu_and_mul(gate_up), expected)

    return [
        f"fusedops {getattr(fusedops, '__version__', '?')} from {fusedops.__file__}",
        f"torch {torch.__version__}",
        "rms_norm, fused_add_rms_norm, silu_and_mul match plain torch on CPU",
    ]


def run_doctor() -> int:
    """Run ``python -m fusedops doctor`` in a fresh interpreter; return its exit status."""
    completed = subprocess.run([sys.executable, "-m", "fusedops", "doctor"], check=False)
    return completed.returncode


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-doctor", action="store_true", help="skip `python -m fusedops doctor`")
    args = parser.parse_args(argv)

    for line in check_ops():
        print(f"cpu_smoke: {line}")
    if not args.no_doctor:
        status = run_doctor()
        if status != 0:
            print(f"cpu_smoke: `python -m fusedops doctor` exited {status}", file=sys.stderr)
            return 1
    print("cpu_smoke: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
