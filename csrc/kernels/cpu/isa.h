// The CPU kernels compiled once per instruction set, and the choice among them.
//
// The extension is built once for every x86-64 (or aarch64) CPU, so its
// default target is the baseline ISA (SSE2). The row kernels are therefore
// compiled four times from one source (isa_body.h) -- baseline, AVX2+F16C,
// AVX-512, AVX-512 with BF16 (which differs only in rounding pairs of float
// vectors to bf16) -- and the widest one this CPU supports is picked once, at
// first use. FUSEDOPS_CPU_ISA=baseline|avx2|avx512|avx512bf16 narrows the
// choice (to test the other builds on one machine); a wider ISA than the CPU
// has is refused.
//
// Every function works on a row range of a contiguous [rows, cols] matrix;
// the parallel split and the weight-gradient reduction live in the callers
// (rms_norm.cpp, silu_and_mul.cpp), written once for all ISAs.
#pragma once

#include <cstdint>

#include "../kernels.h"

namespace fusedops::kernels::cpu {

// Where the row kernels that take `prefetch` are asked to use it: inputs
// larger than this, well past a core's L2 (the callers decide, knowing the
// whole tensor). Measured on a 2-vCPU AMD EPYC (1 MiB of L2 a core), rows of
// 4096 (benchmarks/NOTES.md):
// - rms_norm backward, x and dy together, 16-bit: 1-8% slower from 1 to
//   8 MiB, within the host's noise (-8% to +5%) at 16-32 MiB, 5-11% faster at
//   64 MiB; at 4096 x 16384 level within the noise (v23);
// - silu_and_mul's forward, x: 0-5% slower at 1-8 MiB, 3-22% faster at
//   16-32 MiB, 13-23% at 64 MiB (fastest rounds); its backward, 16-bit only:
//   level to 17% faster at 64-256 MiB, float32 level or slower (v24).
constexpr int64_t kPrefetchMinBytes = int64_t{8} << 20;

struct RowKernels {
  // out[r] = rms_norm(x[r]) * weight for r in [begin, end)
  void (*rms_norm)(void* out, const void* x, const void* weight, int64_t begin, int64_t end,
                   int64_t hidden, double eps);
  // residual_out[r] = x[r] + residual[r] (rounded to the dtype); out[r] = rms_norm(residual_out[r])
  void (*fused_add_rms_norm)(void* out, void* residual_out, const void* x, const void* residual,
                             const void* weight, int64_t begin, int64_t end, int64_t hidden,
                             double eps);
  // grad_x rows (plus grad_extra when not null); adds each row's dy * x * rstd
  // into dw_acc[hidden] (float, or double for float64 inputs). With
  // prefetch, 16-bit rows but the last prefetch the next row's x and dy (for
  // inputs that are not in the cache; the caller knows their size).
  void (*rms_norm_backward)(void* grad_x, void* dw_acc, const void* grad_out,
                            const void* grad_extra, const void* x, const void* weight,
                            int64_t begin, int64_t end, int64_t hidden, double eps, bool prefetch);
  // Columns [col_begin, col_end) of rows [begin, end); x rows are 2*d wide.
  // With prefetch, the loops prefetch their inputs kPrefetchAheadBytes ahead
  // (isa_body.h; the backward only for 16-bit values).
  void (*silu_and_mul)(void* out, const void* x, int64_t begin, int64_t end, int64_t d,
                       int64_t col_begin, int64_t col_end, bool prefetch);
  void (*silu_and_mul_backward)(void* grad_x, const void* grad_out, const void* x, int64_t begin,
                                int64_t end, int64_t d, int64_t col_begin, int64_t col_end,
                                bool prefetch);
};

struct IsaKernels {
  const char* name;
  RowKernels by_dtype[4];  // indexed by DType

  const RowKernels& operator[](DType dtype) const { return by_dtype[static_cast<int>(dtype)]; }
};

const IsaKernels& baseline_kernels();
#if defined(__x86_64__) || defined(_M_X64)
const IsaKernels& avx2_kernels();
const IsaKernels& avx512_kernels();
const IsaKernels& avx512bf16_kernels();
#endif

// The kernels for this CPU (see above); throws std::runtime_error when
// FUSEDOPS_CPU_ISA names an unknown or unsupported ISA.
const IsaKernels& active_kernels();

}  // namespace fusedops::kernels::cpu
