// SiLU-and-mul (SwiGLU activation) and its backward on CUDA.
//
// Elementwise over [rows, d] outputs with inputs [rows, 2d]: a grid-strided
// loop over 16-byte vectors when d and the pointers allow it, scalars
// otherwise. The 2D index is a division per vector; this kernel is memory
// bound, so the integer math hides under the loads.
#include <algorithm>

#include "common.cuh"

namespace fusedops::kernels {
namespace cuda {
namespace {

constexpr int kThreads = 256;

template <typename A>
__device__ __forceinline__ A sigmoid(A a) {
  return A(1) / (A(1) + exp(-a));
}
template <>
__device__ __forceinline__ float sigmoid<float>(float a) {
  return 1.0f / (1.0f + __expf(-a));
}

template <typename T, int V>
__global__ void silu_and_mul_kernel(T* __restrict__ out, const T* __restrict__ x, int64_t rows,
                                    int64_t d) {
  using A = typename Acc<T>::type;
  using VecT = Vec<T, V>;
  const int64_t dv = d / V;
  const int64_t total = rows * dv;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t row = i / dv;
    const int64_t col = i - row * dv;
    const VecT* xr = reinterpret_cast<const VecT*>(x + row * 2 * d);
    const VecT a = xr[col];
    const VecT b = xr[dv + col];
    VecT o;
#pragma unroll
    for (int k = 0; k < V; ++k) {
      const A af = to_acc<A>(a.v[k]);
      o.v[k] = Cast<T>::from(af * sigmoid(af) * to_acc<A>(b.v[k]));
    }
    reinterpret_cast<VecT*>(out)[i] = o;
  }
}

template <typename T, int V>
__global__ void silu_and_mul_bwd_kernel(T* __restrict__ grad_x, const T* __restrict__ grad_out,
                                        const T* __restrict__ x, int64_t rows, int64_t d) {
  using A = typename Acc<T>::type;
  using VecT = Vec<T, V>;
  const int64_t dv = d / V;
  const int64_t total = rows * dv;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t row = i / dv;
    const int64_t col = i - row * dv;
    const VecT* xr = reinterpret_cast<const VecT*>(x + row * 2 * d);
    VecT* gr = reinterpret_cast<VecT*>(grad_x + row * 2 * d);
    const VecT a = xr[col];
    const VecT b = xr[dv + col];
    const VecT g = reinterpret_cast<const VecT*>(grad_out)[i];
    VecT ga, gb;
#pragma unroll
    for (int k = 0; k < V; ++k) {
      const A af = to_acc<A>(a.v[k]);
      const A bf = to_acc<A>(b.v[k]);
      const A gf = to_acc<A>(g.v[k]);
      const A s = sigmoid(af);
      ga.v[k] = Cast<T>::from(gf * bf * s * (A(1) + af * (A(1) - s)));
      gb.v[k] = Cast<T>::from(gf * af * s);
    }
    gr[col] = ga;
    gr[dv + col] = gb;
  }
}

int grid_for(int64_t work_items) {
  // Enough blocks to fill any current GPU several times over; the loop is
  // grid-strided, so more would only add scheduling cost.
  const int64_t blocks = (work_items + kThreads - 1) / kThreads;
  return static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(blocks, 65536)));
}

template <typename T>
void launch_fwd(T* out, const T* x, int64_t rows, int64_t d, cudaStream_t stream) {
  constexpr int V = kVec16<T>;
  if (d % V == 0 && aligned16(out) && aligned16(x)) {
    silu_and_mul_kernel<T, V><<<grid_for(rows * d / V), kThreads, 0, stream>>>(out, x, rows, d);
  } else {
    silu_and_mul_kernel<T, 1><<<grid_for(rows * d), kThreads, 0, stream>>>(out, x, rows, d);
  }
  check_launch("silu_and_mul kernel launch");
}

template <typename T>
void launch_bwd(T* grad_x, const T* grad_out, const T* x, int64_t rows, int64_t d,
                cudaStream_t stream) {
  constexpr int V = kVec16<T>;
  if (d % V == 0 && aligned16(grad_x) && aligned16(grad_out) && aligned16(x)) {
    silu_and_mul_bwd_kernel<T, V>
        <<<grid_for(rows * d / V), kThreads, 0, stream>>>(grad_x, grad_out, x, rows, d);
  } else {
    silu_and_mul_bwd_kernel<T, 1>
        <<<grid_for(rows * d), kThreads, 0, stream>>>(grad_x, grad_out, x, rows, d);
  }
  check_launch("silu_and_mul backward kernel launch");
}

}  // namespace
}  // namespace cuda

void silu_and_mul_cuda(DType dtype, void* out, const void* x, int64_t rows, int64_t d,
                       void* stream) {
  if (rows == 0 || d == 0) return;
  FUSEDOPS_CUDA_DISPATCH(dtype, [&] {
    cuda::launch_fwd<scalar_t>(static_cast<scalar_t*>(out), static_cast<const scalar_t*>(x), rows,
                               d, static_cast<cudaStream_t>(stream));
  });
}

void silu_and_mul_backward_cuda(DType dtype, void* grad_x, const void* grad_out, const void* x,
                                int64_t rows, int64_t d, void* stream) {
  if (rows == 0 || d == 0) return;
  FUSEDOPS_CUDA_DISPATCH(dtype, [&] {
    cuda::launch_bwd<scalar_t>(
        static_cast<scalar_t*>(grad_x), static_cast<const scalar_t*>(grad_out),
        static_cast<const scalar_t*>(x), rows, d, static_cast<cudaStream_t>(stream));
  });
}

}  // namespace fusedops::kernels
