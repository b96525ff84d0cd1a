// The row kernels at the build's default target (SSE2 on x86-64, NEON on
// aarch64): the fallback for CPUs without AVX2 and for other architectures.
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "isa.h"
#include "scalar.h"

namespace fusedops::kernels::cpu {
namespace baseline {
#include "isa_body.h"
}  // namespace baseline

const IsaKernels& baseline_kernels() {
  static const IsaKernels kernels{
      "baseline",
      {baseline::kTable[0], baseline::kTable[1], baseline::kTable[2], baseline::kTable[3]}};
  return kernels;
}

}  // namespace fusedops::kernels::cpu
