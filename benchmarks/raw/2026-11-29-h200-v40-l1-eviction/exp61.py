"""s54: the fused add (and rms_norm) below the L2 with x and the residual read as streamed,
as inductor's fused add kernel reads them at the shapes where it is ahead of ours
(v40 call B: `tl.load(..., eviction_policy='evict_first')` for both inputs; over one graph
replay of 7 calls at bf16 1024 x 8192 both read 235 MB from the DRAM, but ours writes
221-224 MB to it and inductor's 170-174). FUSEDOPS_EXP_STREAM: 1 L2::evict_first policy;
2 that and L1::evict_first (Triton's evict_first load); 3 ld.global.cs (__ldcs). Only the
plain plan's builds (rows > SMs, below the L2, not the latency build's one wave) take it.
Against the shipped build (base), bits checked, with the victim probe.

    pip install -q --no-deps --no-index --target /tmp/inst .device/exp61/*.whl
    PYTHONPATH=/tmp/inst python exp61.py OUT.csv fused_add_rms_norm --dtypes bfloat16,float32 \\
        --hidden 2048,4096,8192 --rows 512,1024,2048,4096

The wheel is a `pip wheel` build for sm_90 of d9d1560 with exp-stream-loads.diff (every
build that existed before has the same SASS; of the 138 new builds, the fused add's at the
four missed shapes have the base's registers, 31 others 1-4 more or fewer, none a stack).
The loop is benchmarks/tools/victim_ab.py. A script for the GPU machine, not a test.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path("benchmarks/tools").resolve()))
import victim_ab

SETTINGS = {
    "base": {},
    "l2ef": {"FUSEDOPS_EXP_STREAM": "1"},
    "ef": {"FUSEDOPS_EXP_STREAM": "2"},
    "cs": {"FUSEDOPS_EXP_STREAM": "3"},
}

if __name__ == "__main__":
    op = sys.argv.pop(2)
    sys.exit(
        victim_ab.main(
            SETTINGS,
            op=op,
            rivals=("compile-static", "copy"),
            victim_shapes=(("bfloat16", 1024, 8192), ("float32", 512, 8192)),
        )
    )
