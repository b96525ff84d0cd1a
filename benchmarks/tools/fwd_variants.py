"""Time variants of the single-pass rms_norm forward against the wheel, Liger and a copy.

    nvcc -O3 -std=c++17 -arch=sm_90 -shared -Xcompiler -fPIC \\
        -o /tmp/fwd_variants.so benchmarks/tools/fwd_variants.cu
    python benchmarks/tools/fwd_variants.py /tmp/fwd_variants.so [--out DIR]
        [--rows 1,16,128,1024,16384] [--hidden 2048,4096,8192,16384]
        [--variants v0,all3,...] [--dtypes bfloat16,float16,float32]

fwd_variants.cu is a stand-alone copy of the kernel with switches (its
`launch` comment lists them); it is built with nvcc alone and called through
ctypes on torch's current stream, so a variant costs a recompile of one file,
not a wheel. Every variant's output is checked against fusedops.rms_norm
before it is timed; times are gpu_sweep.py's (kernel time per call in a CUDA
graph). Variants with flag 2048 must also give the bits of their flags without it at
plan 0 exactly. Writes variants.csv. A script for the GPU machine, not a test.
"""

from __future__ import annotations

import argparse
import csv
import ctypes
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from gpu_sweep import GRAPH_BYTES, MAX_CALLS, graph_us, liger_ops

import fusedops

EPS = 1e-6
DTYPE_CODE = {torch.float32: 0, torch.float16: 1, torch.bfloat16: 2}
# name: (flags, plan); flags: 1 plain loads, 2 short 2nd level (loop), 4 PDL,
# 8 tree sum, 16 mean by 1/hidden, 32 short 2nd level (unrolled); plan 1: Liger's.
# After v8 (NOTES.md, v9): 512 the wheel's pairs tree (568 is the wheel's v8
# rms_norm), 64 second level read whole from shared memory, 128 late weight
# loads, 256 one row per block. v10: 1024 the warp count at compile time. v33: plan 2
# (plan 0's C = 2 blocks of an even warp count at C = 4 in half the threads) and, with
# it only, 2048 (the sum in C = 2's order).
VARIANTS = {
    "v0": (0, 0),
    "plain": (1, 0),
    "tree": (8, 0),
    "invh": (16, 0),
    "unrolled": (32, 0),
    "all3": (56, 0),
    "lp": (0, 1),
    "lp+all3": (56, 1),
    "all3+pdl": (60, 0),
    "v8": (568, 0),
    "v8+readall": (632, 0),
    "v8+latew": (696, 0),
    "v8+onerow": (824, 0),
    "v8+readall+onerow": (888, 0),
    "v8+readall+latew+onerow": (1016, 0),
    "v8+nw": (1592, 0),
    "v8+nw+latew": (1720, 0),
    # v33 (prepared in v32's session, not yet run): plan 2 runs plan 0's C = 2 rows of
    # an even warp count at C = 4 in half the threads; 2048 adds in C = 2's order, and
    # main checks its bits against v8's. At other rows plan 2 is skipped.
    "v8+c4": (568, 2),
    "v8+c4o2": (568 | 2048, 2),
}
# Variants with this flag must give the bits of the same flags without it at plan 0.
SAME_BITS_AS_PLAN0 = 2048
NOT_APPLICABLE = -5  # launch's code: plan 2's C = 4 does not apply at this row length


class LaunchError(RuntimeError):
    def __init__(self, rc: int, message: str) -> None:
        super().__init__(message)
        self.rc = rc


def load_library(path: str) -> ctypes.CDLL:
    lib = ctypes.CDLL(path)
    lib.launch.argtypes = [ctypes.c_int] * 3 + [ctypes.c_void_p] * 3
    lib.launch.argtypes += [ctypes.c_long, ctypes.c_int, ctypes.c_float, ctypes.c_void_p]
    return lib


def variant(lib, dtype, flags, plan, x, w):
    out = torch.empty_like(x)

    def run() -> None:
        stream = torch.cuda.current_stream().cuda_stream
        rows, hidden = x.shape
        rc = lib.launch(
            DTYPE_CODE[dtype], flags, plan, out.data_ptr(), x.data_ptr(), w.data_ptr(),
            rows, hidden, EPS, stream,
        )  # fmt: skip
        if rc != 0:
            raise LaunchError(rc, f"launch returned {rc} (flags {flags}, plan {plan})")

    return run, out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("library")
    parser.add_argument("--out", type=Path, default=Path("."))
    parser.add_argument("--rows", default="1,16,128,1024,16384")
    parser.add_argument("--hidden", default="2048,4096,8192,16384")
    parser.add_argument("--variants", default=",".join(VARIANTS), help="names, comma-separated")
    parser.add_argument("--dtypes", default="bfloat16,float16,float32")
    args = parser.parse_args(argv)
    chosen = args.variants.split(",")
    unknown = sorted(set(chosen) - set(VARIANTS))
    if unknown:
        parser.error(f"unknown variants {unknown}; known: {', '.join(VARIANTS)}")
    lib = load_library(args.library)
    liger = liger_ops()
    a = torch.randn(4096, 4096, device="cuda")
    for _ in range(200):  # clocks up before the first timing
        a @ a
    with open(args.out / "variants.csv", "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["dtype", "rows", "hidden", "impl", "us"])
        for dtype in (getattr(torch, name) for name in args.dtypes.split(",")):
            for hidden in map(int, args.hidden.split(",")):
                w = torch.randn(hidden, dtype=dtype, device="cuda")
                for rows in map(int, args.rows.split(",")):
                    x = torch.randn(rows, hidden, dtype=dtype, device="cuda")
                    moved = (2 * rows * hidden + hidden) * x.element_size()
                    calls = max(1, min(MAX_CALLS, GRAPH_BYTES // moved))
                    ref = fusedops.rms_norm(x, w, EPS).float()
                    copy_out = torch.empty_like(x)
                    impls = {
                        "fusedops": lambda x=x, w=w: fusedops.rms_norm(x, w, EPS),
                        "copy": lambda x=x, o=copy_out: o.copy_(x),
                    }
                    if liger is not None:
                        impls["liger"] = lambda x=x, w=w: liger["rms_norm"](x, w)
                    for name in chosen:
                        flags, plan = VARIANTS[name]
                        run, out = variant(lib, dtype, flags, plan, x, w)
                        try:
                            run()
                        except LaunchError as e:
                            if plan == 2 and e.rc == NOT_APPLICABLE:
                                continue
                            raise
                        torch.cuda.synchronize()
                        if flags & SAME_BITS_AS_PLAN0:
                            base = flags & ~SAME_BITS_AS_PLAN0
                            run_base, base_out = variant(lib, dtype, base, 0, x, w)
                            run_base()
                            torch.cuda.synchronize()
                            if not torch.equal(out, base_out):
                                raise AssertionError(
                                    f"{name} {dtype} {rows}x{hidden}: not the bits of flags "
                                    f"{base} at plan 0"
                                )
                        err = (out.float() - ref).abs().max().item()
                        tol = 1e-5 if dtype == torch.float32 else 2**-6
                        if err > tol * max(1.0, ref.abs().max().item()):
                            raise AssertionError(f"{name} {dtype} {rows}x{hidden}: off by {err}")
                        impls[name] = run
                    times = {name: graph_us(fn, calls) for name, fn in impls.items()}
                    for name, us in times.items():
                        writer.writerow([str(dtype).split(".")[1], rows, hidden, name, f"{us:.3f}"])
                    cells = " ".join(f"{k}={v:.2f}" for k, v in times.items())
                    print(f"{str(dtype)[6:]:9s} {rows:6d}x{hidden:<6d} {cells}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
