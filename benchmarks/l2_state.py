"""The L2 state a timing starts from: no line left marked evict_last by whatever ran before.

A load or prefetch marked evict_last (PTX `.L2::evict_last`, or a CUDA access
policy window's persisting lines) keeps its lines in the L2 after its kernel
has finished: normal lines are evicted first, so the cache flush that
triton.testing.do_bench writes between timings evicts the flush's own lines
and leaves those. The next implementation timed on the same inputs then reads
part of them from the L2. On an H100 the forward of fusedops 42a6a66, whose
L2 prefetch left x's lines evict_last, made Liger's rms_norm and a device copy
timed after it 6-7% faster at 64 MB reads (45 against 48 us), in the
sweep and in every probe that timed them after it (NOTES.md, v16). Calling
reset_l2_persisting() before each implementation's timing removes that
carry-over: an implementation is still timed with whatever its own earlier
calls leave, as in a loop over one op.
"""

from __future__ import annotations

import ctypes
import functools

import torch


@functools.cache
def _driver() -> ctypes.CDLL:
    return ctypes.CDLL("libcuda.so.1")


def reset_l2_persisting() -> None:
    """Sets every L2 line of the current CUDA context that is marked
    evict_last (persisting) back to normal: cuCtxResetPersistingL2Cache, after
    the work queued so far. Raises RuntimeError if the driver call fails."""
    torch.cuda.synchronize()
    rc = _driver().cuCtxResetPersistingL2Cache()
    if rc != 0:
        raise RuntimeError(f"cuCtxResetPersistingL2Cache failed with CUresult {rc}")
    torch.cuda.synchronize()
