"""Prepared in s54, not run: the 16-bit fused add at 2 vectors a thread re-reading its stored
residual_out for the output (kAddReread), the weight loaded late, held to two blocks an SM.

Where the row fills 1024-thread blocks (hidden 16384) the shipped builds hold the row in
52-55 registers, one block an SM; the grid's 16-bit fused add at hidden 16384 is behind a
rival at 256, 512 and 2048 rows (v40's sweeps: compile-static 6.8-7.2% at 512, Liger
2.1-2.9% at 256 and 2048). inductor's fused add stores the residual sum and reads it back
for the output (v40 call B). v39 measured the same move on float32 rms_norm (x re-read, two
blocks an SM in 32 registers): 1.8-4.2% faster from 2048 rows. Re-reading, the C = 2 builds
fit 32 registers with no stack on sm_90 (CUDA 13.0), except the plain plan's 32-warp build
(16 bytes of stack; the streamed and evict_last plans' builds have none). The setting
`FUSEDOPS_EXP_ADD_REREAD=1` takes those builds wherever the plain, streamed or evict_last
plan runs the 16-bit fused add at C = 2 (not the latency build, the wave split or
kHalves), against the shipped build (base), bits checked, with the victim probe.

    pip install -q --no-deps --no-index --target /tmp/inst .device/exp63/*.whl \\
        .whl/liger_kernel-0.8.5-py3-none-any.whl
    PYTHONPATH=/tmp/inst python exp63.py OUT.csv --dtypes bfloat16,float16 \\
        --hidden 8192,16384 --rows 512,1024,2048,4096,16384,65536

The wheel is a `pip wheel` build for sm_90 of d55a69c with exp-add-reread.diff (every
build d55a69c has is byte-identical; 10 new). The loop is benchmarks/tools/victim_ab.py.
A script for the GPU machine, not a test.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path("benchmarks/tools").resolve()))
import victim_ab

SETTINGS = {"base": {}, "add_reread": {"FUSEDOPS_EXP_ADD_REREAD": "1"}}

if __name__ == "__main__":
    sys.exit(
        victim_ab.main(
            SETTINGS,
            op="fused_add_rms_norm",
            rivals=("compile-static", "liger", "copy"),
            victim_shapes=(("bfloat16", 2048, 16384), ("bfloat16", 512, 16384)),
        )
    )
