#include "huge_pages.h"

#if defined(__linux__)
#include <strings.h>
#include <sys/mman.h>

#include <cstdlib>
#include <stdexcept>
#include <string>
#endif

namespace fusedops::kernels::cpu {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
namespace {

constexpr uintptr_t kHugePage = uintptr_t{1} << 21;

// FUSEDOPS_CPU_HUGE_PAGES, spelled like the project's other on/off knobs:
// unset or empty, 1/true/yes/on: on; 0/false/no/off: off; anything else is
// an error (a typo must not silently keep the default).
bool enabled() {
  const char* value = std::getenv("FUSEDOPS_CPU_HUGE_PAGES");
  if (value == nullptr || *value == '\0') return true;
  for (const char* on : {"1", "true", "yes", "on"}) {
    if (strcasecmp(value, on) == 0) return true;
  }
  for (const char* off : {"0", "false", "no", "off"}) {
    if (strcasecmp(value, off) == 0) return false;
  }
  throw std::runtime_error(std::string("fusedops: FUSEDOPS_CPU_HUGE_PAGES=") + value +
                           " is not one of 1/true/yes/on or 0/false/no/off");
}

}  // namespace

void advise_huge_pages(void* data, int64_t bytes) {
  static const bool on = enabled();
  if (!on || data == nullptr || bytes < static_cast<int64_t>(kHugePage)) return;
  const uintptr_t begin = reinterpret_cast<uintptr_t>(data);
  const uintptr_t first = (begin + kHugePage - 1) & ~(kHugePage - 1);
  const uintptr_t last = (begin + static_cast<uintptr_t>(bytes)) & ~(kHugePage - 1);
  // Only pages wholly inside the output: the memory around it is not ours.
  if (last > first) madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
}
#else
void advise_huge_pages(void*, int64_t) {}
#endif

}  // namespace fusedops::kernels::cpu
