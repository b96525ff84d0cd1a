"""Prepared in s53, not run: float32 rms_norm at hidden 16384 in the re-reading build
(kReread, shipped in v39) with L1 eviction priorities on its loads, as Triton's
evict_last / evict_first loads carry them (v39's ncu: ours hits the L1 on 48.0% of its
global load sectors against inductor's 66.4%, and reads 3% more from the DRAM). FUSEDOPS_EXP_L1:
1 first read L1::evict_last, second L1::evict_first; 2 first L1::evict_last, second
plain; 3 as 1 with the second read's L2 policy evict_first too; 4 as 1 with the weight
L1::evict_last; 5 no cache hints changed, but the four vectors of the second read all
issued before the first output (the shipped build issues them a vector at a time with
the weight's, four round trips after the barrier; v39's ncu: 21% more instructions than
inductor's and 71% of the warps active against 89%). Against the shipped build (base),
bits checked, with the victim probe after float32 16384 x 16384.

    pip install -q --no-deps --no-index --target /tmp/inst .device/exp60/*.whl \\
        .whl/liger_kernel-0.8.5-py3-none-any.whl
    PYTHONPATH=/tmp/inst python exp60.py OUT.csv --dtypes float32 --hidden 16384 \\
        --rows 256,512,1024,2048,4096,16384,65536

The wheel is a `pip wheel` build for sm_90 of dd5f0c9 with next/exp-l1-eviction.diff (all
twelve builds 32 registers, no stack, on sm_90 with CUDA 13.0; SASS: LDG.E.EL.128 for the
L1::evict_last reads, LDG.E.EF.128 for the evict_first ones; mode 5's second-read loads
before its first STG). The loop is
benchmarks/tools/victim_ab.py. A script for the GPU machine, not a test.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path("benchmarks/tools").resolve()))
import victim_ab

SETTINGS = {
    "base": {},
    "el_ef": {"FUSEDOPS_EXP_L1": "1"},
    "el": {"FUSEDOPS_EXP_L1": "2"},
    "el_ef_l2ef": {"FUSEDOPS_EXP_L1": "3"},
    "el_ef_w": {"FUSEDOPS_EXP_L1": "4"},
    "x_first": {"FUSEDOPS_EXP_L1": "5"},
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
