"""The victim probe of the fused add as HEAD ships it (the demote after the block's barrier),
the one setting alone: set against exp57's probe (before the barrier) through each run's
"copies alone after a flush". A script for the GPU machine, not a test.

    PYTHONPATH=/tmp/inst python victim_shipped.py OUT.csv --dtypes bfloat16 --rows 16384 \\
        --hidden 8192
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path("benchmarks/tools").resolve()))
import victim_ab

if __name__ == "__main__":
    sys.exit(victim_ab.main({"shipped": {}}, op="fused_add_rms_norm", rivals=("copy",)))
