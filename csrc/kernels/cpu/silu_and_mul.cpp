// SiLU-and-mul (the SwiGLU activation) and its backward on the CPU.
//
// Elementwise: the row math lives in isa_body.h (vectorised, compiled per
// ISA); this file only splits the work over torch's thread pool. Long rows
// are also cut into column blocks, so a few very wide rows still use every
// thread.
#include <algorithm>

#include "../kernels.h"
#include "huge_pages.h"
#include "isa.h"

namespace fusedops::kernels {
namespace cpu {
namespace {

constexpr int64_t kTaskElems = 16384;  // output elements per task, at least

template <typename Fn>
void split(int64_t rows, int64_t d, const ParallelFor& parallel, const Fn& fn) {
  if (rows == 0 || d == 0) return;
  // Rows of up to 2 * kTaskElems stay whole; longer rows are cut into blocks.
  const int64_t col_block = d <= 2 * kTaskElems ? d : kTaskElems;
  const int64_t col_blocks = (d + col_block - 1) / col_block;
  if (col_blocks == 1) {
    parallel(rows, std::max<int64_t>(1, kTaskElems / d),
             [&](int64_t begin, int64_t end) { fn(begin, end, int64_t{0}, d); });
    return;
  }
  parallel(rows * col_blocks, 1, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      const int64_t r = t / col_blocks, c0 = (t % col_blocks) * col_block;
      fn(r, r + 1, c0, std::min(d, c0 + col_block));
    }
  });
}

}  // namespace
}  // namespace cpu

void silu_and_mul_cpu(DType dtype, void* out, const void* x, int64_t rows, int64_t d,
                      const ParallelFor& parallel) {
  const cpu::RowKernels& k = cpu::active_kernels()[dtype];
  cpu::advise_huge_pages(out, rows * d * dtype_size(dtype));
  const bool prefetch = 2 * rows * d * dtype_size(dtype) > cpu::kPrefetchMinBytes;
  cpu::split(rows, d, parallel, [&](int64_t begin, int64_t end, int64_t c0, int64_t c1) {
    k.silu_and_mul(out, x, begin, end, d, c0, c1, prefetch);
  });
}

void silu_and_mul_backward_cpu(DType dtype, void* grad_x, const void* grad_out, const void* x,
                               int64_t rows, int64_t d, const ParallelFor& parallel) {
  const cpu::RowKernels& k = cpu::active_kernels()[dtype];
  cpu::advise_huge_pages(grad_x, rows * 2 * d * dtype_size(dtype));
  const bool prefetch = 2 * rows * d * dtype_size(dtype) > cpu::kPrefetchMinBytes;
  cpu::split(rows, d, parallel, [&](int64_t begin, int64_t end, int64_t c0, int64_t c1) {
    k.silu_and_mul_backward(grad_x, grad_out, x, begin, end, d, c0, c1, prefetch);
  });
}

}  // namespace fusedops::kernels
