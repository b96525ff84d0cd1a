"""How much of a CPU op's time is the first touch of its freshly allocated output.

    python benchmarks/tools/cpu_first_touch.py [--reps 15]
    THP_MEM_ALLOC_ENABLE=1 python benchmarks/tools/cpu_first_touch.py

Times, in turns, on a 4096 x 4096 float32 tensor (64 MiB): fusedops.rms_norm,
torch.compile's rms_norm, writing into memory that already exists (copy_,
torch.mul out=), and allocating plus first-touching a new tensor
(empty_like().fill_(), clone()). An out-of-place op pays the allocation's page
faults on every call; torch's THP_MEM_ALLOC_ENABLE=1 backs large
allocations with 2 MiB pages, 512 times fewer faults. A script, not a test.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import torch

import fusedops


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=15)
    args = parser.parse_args(argv)
    x = torch.randn(4096, 4096)
    w = torch.randn(4096)
    dst = torch.empty_like(x)

    def manual(a, b):
        return a * torch.rsqrt(a.pow(2).mean(-1, keepdim=True) + 1e-6) * b

    compiled = torch.compile(manual, dynamic=False)
    fns = {
        "fusedops.rms_norm (new output)": lambda: fusedops.rms_norm(x, w),
        "torch.compile rms_norm (new output)": lambda: compiled(x, w),
        "copy_ into an existing tensor": lambda: dst.copy_(x),
        "torch.mul(x, 2, out=existing)": lambda: torch.mul(x, 2, out=dst),
        "empty_like(x).fill_(1) (new output)": lambda: torch.empty_like(x).fill_(1.0),
        "x.clone() (new output)": lambda: x.clone(),
    }
    for fn in fns.values():
        for _ in range(3):
            fn()
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(args.reps):
        for name, fn in fns.items():
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    thp = os.environ.get("THP_MEM_ALLOC_ENABLE", "unset")
    print(f"threads {torch.get_num_threads()} | THP_MEM_ALLOC_ENABLE={thp} | 4096x4096 float32")
    print("| what | median ms | min ms |")
    print("| --- | ---: | ---: |")
    for name, t in times.items():
        print(f"| {name} | {1e3 * statistics.median(t):.2f} | {1e3 * min(t):.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
