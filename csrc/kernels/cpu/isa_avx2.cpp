// The row kernels compiled for AVX2 + FMA + F16C (x86-64-v3 CPUs).
//
// Every standard header is included before the target pragma: only this
// file's own functions (in namespace avx2) may carry AVX2 code, never an
// inline library function the linker could share with the baseline build.
#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "isa.h"
#include "scalar.h"

#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c")
#define FUSEDOPS_ISA_AVX2 1

namespace fusedops::kernels::cpu {
namespace avx2 {
#include "isa_body.h"
}  // namespace avx2
}  // namespace fusedops::kernels::cpu

#undef FUSEDOPS_ISA_AVX2
#pragma GCC pop_options

namespace fusedops::kernels::cpu {
const IsaKernels& avx2_kernels() {
  static const IsaKernels kernels{
      "avx2", {avx2::kTable[0], avx2::kTable[1], avx2::kTable[2], avx2::kTable[3]}};
  return kernels;
}
}  // namespace fusedops::kernels::cpu
#endif
