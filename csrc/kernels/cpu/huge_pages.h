// Output memory on the CPU: ask Linux for 2 MiB pages before the first write.
//
// An out-of-place op writes a freshly allocated output on every call, and the
// first write to each fresh 4 KiB page is a page fault: on a 4096 x 4096
// float32 rms_norm here the faults were ~3/4 of the op's time
// (benchmarks/RESULTS.md), for fusedops and torch.compile alike. With
// transparent huge pages in `madvise` mode (the default of many
// distributions) a range marked MADV_HUGEPAGE faults in 2 MiB at a time, 512
// times fewer faults. torch does the same for all its CPU allocations when
// THP_MEM_ALLOC_ENABLE=1; this does it only for outputs the kernels are about
// to write whole, so the kernels' callers must pass memory the op itself has
// just allocated (csrc/ops does), never a caller's buffer.
//
// What the advice costs: it belongs to the address range, not the tensor, and
// stays after the tensor is freed (glibc may hand the range out again, marked);
// with THP `defrag` in `madvise` mode, a fault in a marked range may compact
// memory first, which can stall on a long-running host whose memory is
// fragmented; each call takes the process's mmap lock for writing once.
// FUSEDOPS_CPU_HUGE_PAGES=0 turns it off.
#pragma once

#include <cstdint>

namespace fusedops::kernels::cpu {

// Marks the whole, aligned 2 MiB pages inside [data, data + bytes)
// MADV_HUGEPAGE; the partial pages at either end are left alone (an output of
// 2-4 MiB may hold none). Nothing is marked when FUSEDOPS_CPU_HUGE_PAGES is
// off (read once per process; an unknown value throws std::runtime_error) or
// on systems without madvise. A failed madvise is ignored: the advice is only
// a hint, and the kernel's result does not depend on it.
void advise_huge_pages(void* data, int64_t bytes);

}  // namespace fusedops::kernels::cpu
