"""exp63's setting (the 16-bit fused add re-reading its residual_out, two blocks an SM) in
exp62's three patterns: same tensors (the sweep's), rotating input sets, and rotating with a
consumer of each output.

exp62 (s55 call A) found v40's streamed loads faster only in the sweep's pattern (every call
on the same tensors) and 1.3-2.9% slower with rotating buffers, so a setting is judged here
in all three before it ships. exp62's loop, with this setting and these cases.

    pip install -q --no-deps --no-index --target /tmp/inst .device/exp63/*.whl
    PYTHONPATH=/tmp/inst python exp64.py OUT.csv

A script for the GPU machine, not a test.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import exp62

exp62.SETTINGS = {"base": {}, "add_reread": {"FUSEDOPS_EXP_ADD_REREAD": "1"}}
exp62.CASES = (  # where the 16-bit fused add at hidden 16384 was behind a rival, and 1024x8192
    ("fused_add_rms_norm", "bfloat16", 512, 16384),
    ("fused_add_rms_norm", "bfloat16", 2048, 16384),
    ("fused_add_rms_norm", "float16", 512, 16384),
    ("fused_add_rms_norm", "bfloat16", 8192, 16384),
)

if __name__ == "__main__":
    sys.exit(exp62.main())
