// The row kernels compiled for AVX-512 with its BF16 extension (AMD Zen 4 and
// later, Intel Cooper Lake and Sapphire Rapids and later): the AVX-512 build
// where a pair of float vectors is rounded to bf16 by one instruction
// (vcvtne2ps2bf16, simd.h's store_pair) instead of the bit arithmetic.
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
#pragma GCC target("avx512f,avx512bw,avx512vl,avx512dq,avx512bf16,avx2,fma,f16c")
#define FUSEDOPS_ISA_AVX512 1
#define FUSEDOPS_ISA_AVX512BF16 1

namespace fusedops::kernels::cpu {
namespace avx512bf16 {
#include "isa_body.h"
}  // namespace avx512bf16
}  // namespace fusedops::kernels::cpu

#undef FUSEDOPS_ISA_AVX512BF16
#undef FUSEDOPS_ISA_AVX512
#pragma GCC pop_options

namespace fusedops::kernels::cpu {
const IsaKernels& avx512bf16_kernels() {
  static const IsaKernels kernels{
      "avx512bf16",
      {avx512bf16::kTable[0], avx512bf16::kTable[1], avx512bf16::kTable[2], avx512bf16::kTable[3]}};
  return kernels;
}
}  // namespace fusedops::kernels::cpu
#endif
