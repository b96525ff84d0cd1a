"""Build parallelism that follows the machine: cores and memory."""

from __future__ import annotations

import os
from collections.abc import Callable

# A multi-arch nvcc job peaks at roughly this much memory.
_BYTES_PER_JOB = 3 * 1024**3


def _available_memory() -> int | None:
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def default_max_jobs() -> int:
    cores = (
        len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    )
    memory = _available_memory()
    by_memory = max(1, memory // _BYTES_PER_JOB) if memory else cores
    return max(1, min(cores, by_memory))


def set_default_max_jobs(log: Callable[[str], None]) -> None:
    """Sets MAX_JOBS (ninja's parallelism) unless the user already did."""
    if not os.environ.get("MAX_JOBS"):
        os.environ["MAX_JOBS"] = str(default_max_jobs())
    log(f"MAX_JOBS={os.environ['MAX_JOBS']}")


def nvcc_threads() -> int:
    """nvcc --threads: compile a file's archs in parallel with the cores ninja leaves idle."""
    cores = os.cpu_count() or 1
    jobs = int(os.environ.get("MAX_JOBS") or default_max_jobs())
    return max(1, cores // max(1, jobs))
