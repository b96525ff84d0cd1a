// The row kernels compiled for AVX-512 (F, BW, VL, DQ) + FMA + F16C.
//
// As in isa_avx2.cpp, every standard header is included before the pragma.
#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "isa.h"
#include "scalar.h"

#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")
#define FUSEDOPS_ISA_AVX512 1

namespace fusedops::kernels::cpu {
namespace avx512 {
#include "isa_body.h"
}  // namespace avx512
}  // namespace fusedops::kernels::cpu

#undef FUSEDOPS_ISA_AVX512
#pragma GCC pop_options

namespace fusedops::kernels::cpu {
const IsaKernels& avx512_kernels() {
  static const IsaKernels kernels{
      "avx512", {avx512::kTable[0], avx512::kTable[1], avx512::kTable[2], avx512::kTable[3]}};
  return kernels;
}
}  // namespace fusedops::kernels::cpu
#endif
