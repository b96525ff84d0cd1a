"""The bf16 silu forward at 4096 x 4096 beside copies with and without fresh pages.

    PYTHONPATH=<build> python faults.py

Fastest of 25 calls in ms, three rounds. Fresh destinations are allocated on every call
and advised for 2 MiB pages, as the CPU kernels advise their outputs.
"""

import ctypes
import time

import torch

import fusedops  # noqa: F401

torch.set_num_threads(2)
libc = ctypes.CDLL(None)
libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
HUGE_PAGE = 1 << 21
MADV_HUGEPAGE = 14


def advise(t: torch.Tensor) -> None:
    begin = t.data_ptr()
    first = -(-begin // HUGE_PAGE) * HUGE_PAGE
    last = (begin + t.numel() * t.element_size()) // HUGE_PAGE * HUGE_PAGE
    if last > first:
        libc.madvise(first, last - first, MADV_HUGEPAGE)


def fastest(fn, calls: int = 25) -> float:
    for _ in range(3):
        fn()
    best = float("inf")
    for _ in range(calls):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best * 1e3


def fresh_copy(src: torch.Tensor) -> torch.Tensor:
    dst = torch.empty_like(src)
    advise(dst)
    return dst.copy_(src)


def fresh_fill(nbytes: int) -> torch.Tensor:
    dst = torch.empty(nbytes, dtype=torch.uint8)
    advise(dst)
    return dst.fill_(0)


def fresh_touch(nbytes: int) -> torch.Tensor:
    dst = torch.empty(nbytes, dtype=torch.uint8)
    advise(dst)
    dst[::4096] = 1  # one byte a 4 KiB page
    return dst


x = torch.randn(4096, 8192).to(torch.bfloat16)
src48 = torch.ones(48 << 20, dtype=torch.uint8)
src32 = torch.ones(32 << 20, dtype=torch.uint8)
kept48 = torch.empty_like(src48)
cases = {
    "silu bf16 4096x4096": lambda: torch.ops.fusedops.silu_and_mul(x),
    "fresh copy 48MiB": lambda: fresh_copy(src48),
    "copy 48MiB prealloc": lambda: kept48.copy_(src48),
    "fresh copy 32MiB": lambda: fresh_copy(src32),
    "fresh fill 32MiB": lambda: fresh_fill(32 << 20),
    "fresh touch 32MiB (1 byte/4K)": lambda: fresh_touch(32 << 20),
}
results: dict[str, list[float]] = {name: [] for name in cases}
for _ in range(3):
    for name, fn in cases.items():
        results[name].append(fastest(fn))
for name, ms in results.items():
    print(f"{name:36s}", " ".join(f"{t:.3f}" for t in ms))
