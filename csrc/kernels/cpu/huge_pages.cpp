#include "huge_pages.h"

#include <cstdlib>
#include <cstring>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace fusedops::kernels::cpu {
namespace {

constexpr uintptr_t kHugePage = uintptr_t{1} << 21;

bool enabled() {
  const char* value = std::getenv("FUSEDOPS_CPU_HUGE_PAGES");
  return value == nullptr || std::strcmp(value, "0") != 0;
}

}  // namespace

void advise_huge_pages(void* data, int64_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  static const bool on = enabled();
  if (!on || data == nullptr || bytes < static_cast<int64_t>(kHugePage)) return;
  const uintptr_t begin = reinterpret_cast<uintptr_t>(data);
  const uintptr_t first = (begin + kHugePage - 1) & ~(kHugePage - 1);
  const uintptr_t last = (begin + static_cast<uintptr_t>(bytes)) & ~(kHugePage - 1);
  // Only pages wholly inside the output: the memory around it is not ours.
  if (last > first) madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
#else
  (void)data;
  (void)bytes;
#endif
}

}  // namespace fusedops::kernels::cpu
