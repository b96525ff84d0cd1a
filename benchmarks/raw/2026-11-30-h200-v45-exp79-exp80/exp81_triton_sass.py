"""The SASS of exp81's plain-load Triton forms at the float32 fused add, hidden 2048, compiled
for sm_90 by Triton's own compiler on a machine without a GPU (session 63). Writes
OUT_DIR/tri-x{rows}-r{tile}-w{warps}.cubin for the three forms of exp81_ncu.py; read them with
the cuobjdump Triton ships (triton/backends/nvidia/bin/cuobjdump -sass FILE). Run from the
repository root with torch and triton installed:

    python benchmarks/raw/2026-11-30-h200-v45-exp79-exp80/exp81_triton_sass.py OUT_DIR
"""

import os
import sys

import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from exp81_structure import fused_add_kernel

SIGNATURE = {
    "x_ptr": "*fp32",
    "r_ptr": "*fp32",
    "w_ptr": "*fp32",
    "sum_ptr": "*fp32",
    "out_ptr": "*fp32",
    "rows": "i32",
    "eps": "fp32",
    "H": "constexpr",
    "XBLOCK": "constexpr",
    "RBLOCK": "constexpr",
    "EVICT": "constexpr",
}


def main() -> int:
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    for xblock, rblock, warps in ((2, 2048, 8), (1, 2048, 8), (1, 1024, 8)):
        constants = {"H": 2048, "XBLOCK": xblock, "RBLOCK": rblock, "EVICT": ""}
        aligned = {(i,): [["tt.divisibility", 16]] for i in range(5)}  # the five pointers
        src = ASTSource(fused_add_kernel, SIGNATURE, constexprs=constants, attrs=aligned)
        kernel = triton.compile(
            src, target=GPUTarget("cuda", 90, 32), options={"num_warps": warps, "num_stages": 1}
        )
        name = f"tri-x{xblock}-r{rblock}-w{warps}.cubin"
        with open(os.path.join(out_dir, name), "wb") as f:
            f.write(kernel.asm["cubin"])
        print(name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
