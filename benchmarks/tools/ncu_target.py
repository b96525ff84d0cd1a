"""What the ncu target scripts share: their shape lists and the profiled region."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence

import torch

DTYPES = ("bfloat16", "float16", "float32", "float64")


def parse_shapes(text: str) -> list[tuple[int, int]]:
    """ "1x4096,128x4096" -> [(1, 4096), (128, 4096)]; an argparse type, so a bad
    list is a usage error naming it, not a traceback."""
    shapes = []
    for item in text.split(","):
        rows, sep, hidden = item.strip().partition("x")
        try:
            shape = (int(rows), int(hidden))
        except ValueError:
            shape = None
        if not sep or shape is None or min(shape) < 1:
            raise argparse.ArgumentTypeError(
                f"{item!r} is not ROWSxHIDDEN with both at least 1 (e.g. 128x4096)"
            )
        shapes.append(shape)
    return shapes


def profile_each_once(
    calls: Sequence[Callable[[], object]], warmup: int = 3, repeat: int = 1
) -> None:
    """Warm every call up (compilation, autotuning, caches), then run each
    `repeat` times in a row between cudaProfilerStart and cudaProfilerStop: with
    `ncu --profile-from-start off` those runs are the ones profiled. With
    `--cache-control none`, the later repeats see the cache the earlier ones
    left, as the calls of one CUDA graph replay in gpu_sweep.py do (loosely:
    ncu replays a kernel once per metric pass, which warms the cache too)."""
    if repeat < 1:
        raise ValueError(f"repeat must be at least 1, not {repeat}")
    for call in calls:
        for _ in range(warmup):
            call()
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStart()
    for call in calls:
        for _ in range(repeat):
            call()
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStop()
