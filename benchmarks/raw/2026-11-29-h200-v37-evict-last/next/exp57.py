"""Prepared in s51, not run: the fused add past the L2 reading x and the residual
evict_last, the rows within one L2 of the end (both tensors' reads) set back to normal
(add_el), against the shipped plan (plain loads), in one process; and the victim probe.

    pip install -q --no-deps --no-index --target /tmp/inst .device/exp57/*.whl \\
        .whl/liger_kernel-0.8.5-py3-none-any.whl
    PYTHONPATH=/tmp/inst python exp57.py OUT.csv

The wheel is a `pip wheel` build for sm_90 of e567a34 with next/exp-add-evict-last.diff
(FUSEDOPS_EXP_ADD_EL=1, read on every launch; blocks below 1024 threads, sm_90). ptxas
(CUDA 13.0, sm_90): the add_el builds take more registers than the shipped ones at some
widths (16-bit C = 2 at a runtime warp count 56 against 52), so a difference may be the
occupancy as well as the policy. The loop (bit check, timing, victim probe) is
benchmarks/tools/victim_ab.py: exp54.py's and exp55.py's, shared. A script for the GPU
machine, not a test.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path("benchmarks/tools").resolve()))
import victim_ab

SETTINGS = {
    "base": {},
    "add_el": {"FUSEDOPS_EXP_ADD_EL": "1"},
}

if __name__ == "__main__":
    sys.exit(victim_ab.main(SETTINGS, op="fused_add_rms_norm", rivals=("compile", "liger", "copy")))
