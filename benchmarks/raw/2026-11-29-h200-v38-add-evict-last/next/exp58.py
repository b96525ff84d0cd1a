"""Prepared in s52, not run: float32 rms_norm in 1024-thread blocks (hidden 16384) the way
inductor's kernel runs it (v38's ncu): x re-read after the sum in 32 registers, so an SM
holds two blocks (rr), and that with the first read evict_last (rrel), against the shipped
build (base: the row held, 55 registers, one block an SM); and the victim probe of each.

    pip install -q --no-deps --no-index --target /tmp/inst .device/exp58/*.whl \\
        .whl/liger_kernel-0.8.5-py3-none-any.whl
    PYTHONPATH=/tmp/inst python exp58.py OUT.csv --dtypes float32 --hidden 16384 \\
        --rows 256,512,1024,2048,4096,16384,65536

The wheel is a `pip wheel` build for sm_90 of 6bcc714 with next/exp-reread-evict-last.diff
(FUSEDOPS_EXP_RR=1 or 2, read on every launch; both kReread builds take 32 registers and no
stack on sm_90 with CUDA 13.0, the shipped one 55). The loop is
benchmarks/tools/victim_ab.py. A script for the GPU machine, not a test.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path("benchmarks/tools").resolve()))
import victim_ab

SETTINGS = {
    "base": {},
    "rr": {"FUSEDOPS_EXP_RR": "1"},
    "rrel": {"FUSEDOPS_EXP_RR": "2"},
}

if __name__ == "__main__":
    sys.exit(
        victim_ab.main(
            SETTINGS,
            op="rms_norm",
            rivals=("compile-static", "liger", "copy"),
            victim_shapes=(("float32", 16384, 16384),),
        )
    )
