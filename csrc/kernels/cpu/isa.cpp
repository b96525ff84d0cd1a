#include "isa.h"

#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

namespace fusedops::kernels::cpu {
namespace {

struct Candidate {
  const char* name;
  const IsaKernels& (*kernels)();
  bool (*supported)();
};

#if defined(__x86_64__) || defined(_M_X64)
// __builtin_cpu_supports also checks that the OS saves the wide registers
// (XGETBV), so a kernel without AVX-512 state support falls back to AVX2.
bool has_avx512() {
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
         __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c");
}
bool has_avx512bf16() { return has_avx512() && __builtin_cpu_supports("avx512bf16"); }
bool has_avx2() {
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
         __builtin_cpu_supports("f16c");
}
#endif
bool always() { return true; }

// Widest first.
const Candidate kCandidates[] = {
#if defined(__x86_64__) || defined(_M_X64)
    {"avx512bf16", avx512bf16_kernels, has_avx512bf16},
    {"avx512", avx512_kernels, has_avx512},
    {"avx2", avx2_kernels, has_avx2},
#endif
    {"baseline", baseline_kernels, always},
};

const IsaKernels& choose() {
  const char* wanted = std::getenv("FUSEDOPS_CPU_ISA");
  if (wanted == nullptr || *wanted == '\0') {
    for (const Candidate& c : kCandidates) {
      if (c.supported()) return c.kernels();
    }
  }
  std::string names;
  for (const Candidate& c : kCandidates) {
    if (std::strcmp(c.name, wanted) == 0) {
      if (!c.supported()) {
        throw std::runtime_error(std::string("fusedops: FUSEDOPS_CPU_ISA=") + wanted +
                                 " but this CPU does not support it");
      }
      return c.kernels();
    }
    names += names.empty() ? c.name : std::string(", ") + c.name;
  }
  throw std::runtime_error(std::string("fusedops: FUSEDOPS_CPU_ISA=") + wanted +
                           " is not one of: " + names);
}

}  // namespace

const IsaKernels& active_kernels() {
  // Chosen once: the environment is read at the first CPU op of the process.
  static const IsaKernels& kernels = choose();
  return kernels;
}

}  // namespace fusedops::kernels::cpu
