"""Prepared in s51, not run: rms_norm's evict_last builds setting the last rows' lines back
to normal after the block's barrier (late) instead of before it (base, the shipped 2ed24bd
plan), where every load of the row has returned; and the victim probe of each.

    pip install -q --no-deps --no-index --target /tmp/inst .device/exp56/*.whl \\
        .whl/liger_kernel-0.8.5-py3-none-any.whl
    PYTHONPATH=/tmp/inst python exp56.py OUT.csv

The wheel is a `pip wheel` build for sm_90 of f7ae313 with next/exp-demote-late.diff
(FUSEDOPS_EXP_DEMOTE_LATE=1, read on every launch). The loop (bit check, timing, victim
probe) is benchmarks/tools/victim_ab.py: exp54.py's and exp55.py's, shared. A script for the
GPU machine, not a test.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path("benchmarks/tools").resolve()))
import victim_ab

SETTINGS = {
    "base": {},
    "late": {"FUSEDOPS_EXP_DEMOTE_LATE": "1"},
}

if __name__ == "__main__":
    sys.exit(victim_ab.main(SETTINGS, op="rms_norm", rivals=("compile", "copy")))
