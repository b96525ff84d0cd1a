// RMSNorm, fused residual-add + RMSNorm, and their backward on the CPU.
//
// Rows are independent, so the forward splits rows across torch's thread
// pool. Inner loops run over contiguous float arrays so the compiler
// vectorises them. The weight gradient is a column sum over rows: each chunk
// of rows accumulates into its own partial row, and the partials are summed
// at the end in a fixed order (deterministic for a given thread count).
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "../kernels.h"
#include "scalar.h"

namespace fusedops::kernels {
namespace cpu {
namespace {

// Rows per task: enough work to amortise scheduling, about 32K elements.
int64_t row_grain(int64_t hidden) {
  return std::max<int64_t>(1, 32768 / std::max<int64_t>(1, hidden));
}

template <typename T, typename Acc>
void rms_norm_row(T* out, const Acc* xs, const T* weight, int64_t hidden, double eps) {
  Acc sum_sq = 0;
  for (int64_t i = 0; i < hidden; ++i) sum_sq += xs[i] * xs[i];
  const Acc rstd = Acc(1) / std::sqrt(sum_sq / static_cast<Acc>(hidden) + static_cast<Acc>(eps));
  for (int64_t i = 0; i < hidden; ++i) out[i] = Store<T>::from(xs[i] * rstd * load<Acc>(weight[i]));
}

template <typename T>
void rms_norm_impl(T* out, const T* x, const T* weight, int64_t rows, int64_t hidden, double eps,
                   const ParallelFor& parallel) {
  using Acc = typename AccType<T>::type;
  parallel(rows, row_grain(hidden), [&](int64_t begin, int64_t end) {
    std::vector<Acc> xs(hidden);
    for (int64_t r = begin; r < end; ++r) {
      const T* xr = x + r * hidden;
      for (int64_t i = 0; i < hidden; ++i) xs[i] = load<Acc>(xr[i]);
      rms_norm_row(out + r * hidden, xs.data(), weight, hidden, eps);
    }
  });
}

template <typename T>
void fused_add_rms_norm_impl(T* out, T* residual_out, const T* x, const T* residual,
                             const T* weight, int64_t rows, int64_t hidden, double eps,
                             const ParallelFor& parallel) {
  using Acc = typename AccType<T>::type;
  parallel(rows, row_grain(hidden), [&](int64_t begin, int64_t end) {
    std::vector<Acc> xs(hidden);
    for (int64_t r = begin; r < end; ++r) {
      const int64_t off = r * hidden;
      for (int64_t i = 0; i < hidden; ++i) {
        // residual_out is rounded to the input dtype, and the norm is taken of
        // that rounded value (CONTRACT.md: out = rms_norm(residual_out)).
        const T s = Store<T>::from(load<Acc>(x[off + i]) + load<Acc>(residual[off + i]));
        residual_out[off + i] = s;
        xs[i] = load<Acc>(s);
      }
      rms_norm_row(out + off, xs.data(), weight, hidden, eps);
    }
  });
}

// y = x * rstd * w, rstd = (mean(x^2) + eps)^-1/2
// dx = rstd * (w*dy - x * rstd^2 * mean(w*dy*x)) [+ grad_extra]
// dw = sum_rows(dy * x * rstd)
template <typename T>
void rms_norm_backward_impl(T* grad_x, T* grad_weight, const T* grad_out, const T* grad_extra,
                            const T* x, const T* weight, int64_t rows, int64_t hidden, double eps,
                            const ParallelFor& parallel) {
  using Acc = typename AccType<T>::type;
  const int64_t grain = row_grain(hidden);
  const int64_t num_chunks = rows == 0 ? 0 : (rows + grain - 1) / grain;
  // One partial weight-gradient row per chunk of rows, indexed by chunk so the
  // result does not depend on which thread ran which chunk.
  std::vector<Acc> partial(static_cast<size_t>(num_chunks * hidden), Acc(0));
  parallel(num_chunks, 1, [&](int64_t chunk_begin, int64_t chunk_end) {
    std::vector<Acc> xs(hidden), wdy(hidden);
    for (int64_t c = chunk_begin; c < chunk_end; ++c) {
      Acc* dw = partial.data() + c * hidden;
      const int64_t row_end = std::min(rows, (c + 1) * grain);
      for (int64_t r = c * grain; r < row_end; ++r) {
        const int64_t off = r * hidden;
        Acc sum_sq = 0, sum_wdyx = 0;
        for (int64_t i = 0; i < hidden; ++i) {
          xs[i] = load<Acc>(x[off + i]);
          const Acc dy = load<Acc>(grad_out[off + i]);
          wdy[i] = dy * load<Acc>(weight[i]);
          sum_sq += xs[i] * xs[i];
          sum_wdyx += wdy[i] * xs[i];
        }
        const Acc n = static_cast<Acc>(hidden);
        const Acc rstd = Acc(1) / std::sqrt(sum_sq / n + static_cast<Acc>(eps));
        const Acc coef = rstd * rstd * rstd * sum_wdyx / n;
        for (int64_t i = 0; i < hidden; ++i) {
          Acc g = rstd * wdy[i] - coef * xs[i];
          if (grad_extra != nullptr) g += load<Acc>(grad_extra[off + i]);
          grad_x[off + i] = Store<T>::from(g);
          dw[i] += load<Acc>(grad_out[off + i]) * xs[i] * rstd;
        }
      }
    }
  });
  std::vector<Acc> total(hidden, Acc(0));
  for (int64_t c = 0; c < num_chunks; ++c) {
    const Acc* dw = partial.data() + c * hidden;
    for (int64_t i = 0; i < hidden; ++i) total[i] += dw[i];
  }
  for (int64_t i = 0; i < hidden; ++i) grad_weight[i] = Store<T>::from(total[i]);
}

}  // namespace
}  // namespace cpu

void rms_norm_cpu(DType dtype, void* out, const void* x, const void* weight, int64_t rows,
                  int64_t hidden, double eps, const ParallelFor& parallel) {
  FUSEDOPS_CPU_DISPATCH(dtype, [&] {
    cpu::rms_norm_impl(static_cast<scalar_t*>(out), static_cast<const scalar_t*>(x),
                       static_cast<const scalar_t*>(weight), rows, hidden, eps, parallel);
  });
}

void fused_add_rms_norm_cpu(DType dtype, void* out, void* residual_out, const void* x,
                            const void* residual, const void* weight, int64_t rows, int64_t hidden,
                            double eps, const ParallelFor& parallel) {
  FUSEDOPS_CPU_DISPATCH(dtype, [&] {
    cpu::fused_add_rms_norm_impl(static_cast<scalar_t*>(out), static_cast<scalar_t*>(residual_out),
                                 static_cast<const scalar_t*>(x),
                                 static_cast<const scalar_t*>(residual),
                                 static_cast<const scalar_t*>(weight), rows, hidden, eps, parallel);
  });
}

void rms_norm_backward_cpu(DType dtype, void* grad_x, void* grad_weight, const void* grad_out,
                           const void* grad_extra, const void* x, const void* weight, int64_t rows,
                           int64_t hidden, double eps, const ParallelFor& parallel) {
  FUSEDOPS_CPU_DISPATCH(dtype, [&] {
    cpu::rms_norm_backward_impl(static_cast<scalar_t*>(grad_x), static_cast<scalar_t*>(grad_weight),
                                static_cast<const scalar_t*>(grad_out),
                                static_cast<const scalar_t*>(grad_extra),
                                static_cast<const scalar_t*>(x),
                                static_cast<const scalar_t*>(weight), rows, hidden, eps, parallel);
  });
}

}  // namespace fusedops::kernels
