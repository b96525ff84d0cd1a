// RMSNorm, fused residual-add + RMSNorm, and their backward on the CPU.
//
// The row math lives in isa_body.h (vectorised, compiled per ISA); this file
// splits the work over torch's intra-op thread pool and reduces the weight
// gradient. The pool comes from the op layer as a ParallelFor:
// at::parallel_for under the classic ABI, torch::stable::parallel_for (in the
// stable ABI since torch 2.10, our TORCH_TARGET_VERSION) under the stable
// one. Threads of our own (std::thread) would run beside torch's OpenMP
// threads, oversubscribe the cores when the caller is itself inside a torch
// parallel region, and ignore torch.set_num_threads.
#include <algorithm>
#include <memory>
#include <vector>

#include "../kernels.h"
#include "huge_pages.h"
#include "isa.h"
#include "scalar.h"

namespace fusedops::kernels {
namespace cpu {
namespace {

// Rows per task: enough work to amortise scheduling, about 32K elements.
int64_t row_grain(int64_t hidden) {
  return std::max<int64_t>(1, 32768 / std::max<int64_t>(1, hidden));
}

// The weight gradient is a column sum over all rows. Rows are cut into at
// most kMaxBlocks blocks, a number that depends on the shape only, never on
// the thread count, and each block sums into its own double row; the blocks
// are then added in block order. So grad_weight is the same bits for any
// torch.set_num_threads. Inside a block the kernel adds into a float row for
// up to kFlushRows rows before the float row is added into the block's
// double row: no float sum grows over more than kFlushRows terms, whatever
// the number of rows (2^25 rows of hidden 1 included).
// The partial rows are also capped at kPartialBudget doubles (32 MiB) in all:
// wide rows get fewer blocks (one block beyond 2^21 columns) rather than
// gigabytes of scratch.
constexpr int64_t kMaxBlocks = 128;
constexpr int64_t kPartialBudget = int64_t{1} << 22;
constexpr int64_t kFlushRows = 32;
constexpr int64_t kColumnGrain = 1024;  // the pool's grain for the column sums

template <typename Acc>
void backward_impl(const RowKernels& k, DType dtype, void* grad_x, void* grad_weight,
                   const void* grad_out, const void* grad_extra, const void* x, const void* weight,
                   int64_t rows, int64_t hidden, double eps, const ParallelFor& parallel) {
  const int64_t min_rows = row_grain(hidden);
  const int64_t max_blocks =
      std::clamp<int64_t>(kPartialBudget / std::max<int64_t>(1, hidden), 1, kMaxBlocks);
  int64_t blocks = std::min<int64_t>(max_blocks, (rows + min_rows - 1) / min_rows);
  const int64_t rows_per_block = blocks == 0 ? 0 : (rows + blocks - 1) / blocks;
  blocks = rows_per_block == 0 ? 0 : (rows + rows_per_block - 1) / rows_per_block;
  // Not zeroed: each block's first flush stores its row, later ones add. The
  // zeroing was a serial pass over the partials (32 MiB at 128 blocks of
  // hidden 32768) before any row, and the sum below was serial too: without
  // both, float32 4-5% faster at 4096 x 4096 and 4096 x 16384, 4.5-8% at
  // 64 x 4096 (NOTES.md, v23).
  std::unique_ptr<double[]> partial(new double[static_cast<size_t>(blocks * hidden)]);
  // The next-row prefetch (isa_body.h) where x and dy exceed kPrefetchMinBytes (isa.h).
  const bool prefetch = 2 * rows * hidden * dtype_size(dtype) > kPrefetchMinBytes;
  parallel(blocks, 1, [&](int64_t block_begin, int64_t block_end) {
    std::vector<Acc> acc(static_cast<size_t>(hidden));
    for (int64_t b = block_begin; b < block_end; ++b) {
      double* part = partial.get() + b * hidden;
      const int64_t row_begin = b * rows_per_block;
      const int64_t row_end = std::min(rows, row_begin + rows_per_block);
      for (int64_t r = row_begin; r < row_end; r += kFlushRows) {
        std::fill(acc.begin(), acc.end(), Acc(0));
        k.rms_norm_backward(grad_x, acc.data(), grad_out, grad_extra, x, weight, r,
                            std::min(row_end, r + kFlushRows), hidden, eps, prefetch);
        if (r == row_begin) {
          for (int64_t i = 0; i < hidden; ++i) part[i] = static_cast<double>(acc[i]);
        } else {
          for (int64_t i = 0; i < hidden; ++i) part[i] += static_cast<double>(acc[i]);
        }
      }
    }
  });
  // Each column adds the blocks' rows in block order, so grad_weight is the
  // same bits for any thread count; the columns are split over the pool.
  FUSEDOPS_CPU_DISPATCH(dtype, [&] {
    scalar_t* gw = static_cast<scalar_t*>(grad_weight);
    parallel(hidden, kColumnGrain, [&](int64_t begin, int64_t end) {
      std::vector<double> total(static_cast<size_t>(end - begin), 0.0);
      for (int64_t b = 0; b < blocks; ++b) {
        const double* part = partial.get() + b * hidden + begin;
        for (int64_t i = 0; i < end - begin; ++i) total[i] += part[i];
      }
      for (int64_t i = begin; i < end; ++i) gw[i] = Store<scalar_t>::from(total[i - begin]);
    });
  });
}

}  // namespace
}  // namespace cpu

void rms_norm_cpu(DType dtype, void* out, const void* x, const void* weight, int64_t rows,
                  int64_t hidden, double eps, const ParallelFor& parallel) {
  const cpu::RowKernels& k = cpu::active_kernels()[dtype];
  cpu::advise_huge_pages(out, rows * hidden * dtype_size(dtype));
  parallel(rows, cpu::row_grain(hidden), [&](int64_t begin, int64_t end) {
    k.rms_norm(out, x, weight, begin, end, hidden, eps);
  });
}

void fused_add_rms_norm_cpu(DType dtype, void* out, void* residual_out, const void* x,
                            const void* residual, const void* weight, int64_t rows, int64_t hidden,
                            double eps, const ParallelFor& parallel) {
  const cpu::RowKernels& k = cpu::active_kernels()[dtype];
  cpu::advise_huge_pages(out, rows * hidden * dtype_size(dtype));
  cpu::advise_huge_pages(residual_out, rows * hidden * dtype_size(dtype));
  parallel(rows, cpu::row_grain(hidden), [&](int64_t begin, int64_t end) {
    k.fused_add_rms_norm(out, residual_out, x, residual, weight, begin, end, hidden, eps);
  });
}

void rms_norm_backward_cpu(DType dtype, void* grad_x, void* grad_weight, const void* grad_out,
                           const void* grad_extra, const void* x, const void* weight, int64_t rows,
                           int64_t hidden, double eps, const ParallelFor& parallel) {
  const cpu::RowKernels& k = cpu::active_kernels()[dtype];
  cpu::advise_huge_pages(grad_x, rows * hidden * dtype_size(dtype));
  if (dtype == DType::kFloat64) {
    cpu::backward_impl<double>(k, dtype, grad_x, grad_weight, grad_out, grad_extra, x, weight, rows,
                               hidden, eps, parallel);
  } else {
    cpu::backward_impl<float>(k, dtype, grad_x, grad_weight, grad_out, grad_extra, x, weight, rows,
                              hidden, eps, parallel);
  }
}

}  // namespace fusedops::kernels
