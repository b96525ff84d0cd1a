// SiLU-and-mul (the SwiGLU activation) and its backward on the CPU.
#include <algorithm>
#include <cmath>

#include "../kernels.h"
#include "scalar.h"

namespace fusedops::kernels {
namespace cpu {
namespace {

int64_t row_grain(int64_t d) { return std::max<int64_t>(1, 16384 / std::max<int64_t>(1, d)); }

template <typename Acc>
inline Acc sigmoid(Acc a) {
  return Acc(1) / (Acc(1) + std::exp(-a));
}

// out[r, i] = silu(a) * b with a = x[r, i], b = x[r, d + i]
template <typename T>
void silu_and_mul_impl(T* out, const T* x, int64_t rows, int64_t d, const ParallelFor& parallel) {
  using Acc = typename AccType<T>::type;
  parallel(rows, row_grain(d), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const T* xa = x + r * 2 * d;
      const T* xb = xa + d;
      T* o = out + r * d;
      for (int64_t i = 0; i < d; ++i) {
        const Acc a = load<Acc>(xa[i]);
        o[i] = Store<T>::from(a * sigmoid(a) * load<Acc>(xb[i]));
      }
    }
  });
}

// d/da silu(a) = s * (1 + a * (1 - s)) with s = sigmoid(a)
template <typename T>
void silu_and_mul_backward_impl(T* grad_x, const T* grad_out, const T* x, int64_t rows, int64_t d,
                                const ParallelFor& parallel) {
  using Acc = typename AccType<T>::type;
  parallel(rows, row_grain(d), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const T* xa = x + r * 2 * d;
      const T* xb = xa + d;
      const T* dy = grad_out + r * d;
      T* ga = grad_x + r * 2 * d;
      T* gb = ga + d;
      for (int64_t i = 0; i < d; ++i) {
        const Acc a = load<Acc>(xa[i]);
        const Acc b = load<Acc>(xb[i]);
        const Acc g = load<Acc>(dy[i]);
        const Acc s = sigmoid(a);
        ga[i] = Store<T>::from(g * b * s * (Acc(1) + a * (Acc(1) - s)));
        gb[i] = Store<T>::from(g * a * s);
      }
    }
  });
}

}  // namespace
}  // namespace cpu

void silu_and_mul_cpu(DType dtype, void* out, const void* x, int64_t rows, int64_t d,
                      const ParallelFor& parallel) {
  FUSEDOPS_CPU_DISPATCH(dtype, [&] {
    cpu::silu_and_mul_impl(static_cast<scalar_t*>(out), static_cast<const scalar_t*>(x), rows, d,
                           parallel);
  });
}

void silu_and_mul_backward_cpu(DType dtype, void* grad_x, const void* grad_out, const void* x,
                               int64_t rows, int64_t d, const ParallelFor& parallel) {
  FUSEDOPS_CPU_DISPATCH(dtype, [&] {
    cpu::silu_and_mul_backward_impl(static_cast<scalar_t*>(grad_x),
                                    static_cast<const scalar_t*>(grad_out),
                                    static_cast<const scalar_t*>(x), rows, d, parallel);
  });
}

}  // namespace fusedops::kernels
