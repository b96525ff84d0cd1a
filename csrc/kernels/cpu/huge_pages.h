// Output memory on the CPU: ask Linux for 2 MiB pages before the first write.
//
// An out-of-place op writes a freshly allocated output on every call, and the
// first write to each fresh 4 KiB page is a page fault: on a 4096 x 4096
// float32 rms_norm the faults took ~35 ms of ~40 (benchmarks/RESULTS.md,
// "the output's first touch"), for fusedops and torch.compile alike. With
// transparent huge pages in `madvise` mode (the default of many distributions)
// a region the program has marked MADV_HUGEPAGE faults in 2 MiB at a time:
// 512 times fewer faults, ~5 ms. torch does the same for all its CPU
// allocations when THP_MEM_ALLOC_ENABLE=1; this does it only for the outputs
// the kernels are about to write whole.
#pragma once

#include <cstdint>

namespace fusedops::kernels::cpu {

// Marks the whole 2 MiB pages inside [data, data + bytes) MADV_HUGEPAGE.
// Outputs smaller than one such page are left alone; so is every call when
// FUSEDOPS_CPU_HUGE_PAGES=0 (read once per process), and on systems without
// madvise. Never fails: the advice is only a hint, and the kernel's result
// does not depend on it.
void advise_huge_pages(void* data, int64_t bytes);

}  // namespace fusedops::kernels::cpu
