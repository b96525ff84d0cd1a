// SiLU-and-mul (SwiGLU activation) and its backward on CUDA.
//
// Elementwise over [rows, d] outputs with inputs [rows, 2d]: a grid-strided
// loop over 16-byte vectors when d and the pointers allow it (4-byte vectors
// for small launches), scalars otherwise. The 2D index is a division per
// vector; this kernel is memory bound, so the integer math hides under the
// loads. The sigmoids of a vector are computed together (sigmoid_vec), so
// their latencies overlap.
#include <algorithm>
#include <type_traits>

#include "common.cuh"

namespace fusedops::kernels {
namespace cuda {
namespace {

constexpr int kThreads = 256;

// Elements in the narrow vector of small launches: 4 bytes, one element for
// float32; float64 keeps its 16-byte vectors (narrower was not measured).
template <typename T>
constexpr int kNarrow = sizeof(T) <= 4 ? 4 / static_cast<int>(sizeof(T)) : kVec16<T>;

template <typename A>
__device__ __forceinline__ A sigmoid(A a) {
  return A(1) / (A(1) + exp(-a));
}
template <>
__device__ __forceinline__ float sigmoid<float>(float a) {
  return 1.0f / (1.0f + __expf(-a));
}

// 1 / y for 1 <= y < 2^126, rounded as `1.0f / y` rounds it: the hardware
// reciprocal and one Newton step, which is the path the compiler's IEEE
// division takes on that range. Written out because `1.0f / y` wraps that path
// in a range check and a branch per call, and the branch makes the V sigmoids
// of a vector run one after another (8 in a row for a 16-byte bf16 vector,
// the latency of every small launch); here they issue together.
__device__ __forceinline__ float reciprocal_from_one(float y) {
  float r;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(y));
  return fmaf(r, fmaf(-y, r, 1.0f), r);
}

// s[k] = sigmoid(a[k]) for a whole vector, bit for bit what sigmoid() gives.
// y = 1 + exp(-a) leaves [1, 2^126) only for a below about -87 or NaN; then
// the vector takes the IEEE division after all.
template <typename A, int V>
__device__ __forceinline__ void sigmoid_vec(const A (&a)[V], A (&s)[V]) {
  if constexpr (std::is_same_v<A, float>) {
    bool in_range = true;
#pragma unroll
    for (int k = 0; k < V; ++k) {
      const float y = 1.0f + __expf(-a[k]);
      in_range &= y < 0x1p126f;
      s[k] = reciprocal_from_one(y);
    }
    if (in_range) return;
  }
#pragma unroll
  for (int k = 0; k < V; ++k) s[k] = sigmoid(a[k]);
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
    A af[V], s[V];
#pragma unroll
    for (int k = 0; k < V; ++k) af[k] = to_acc<A>(a.v[k]);
    sigmoid_vec(af, s);
    VecT o;
#pragma unroll
    for (int k = 0; k < V; ++k) o.v[k] = Cast<T>::from(af[k] * s[k] * to_acc<A>(b.v[k]));
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
    A af[V], s[V];
#pragma unroll
    for (int k = 0; k < V; ++k) af[k] = to_acc<A>(a.v[k]);
    sigmoid_vec(af, s);
    VecT ga, gb;
#pragma unroll
    for (int k = 0; k < V; ++k) {
      const A bf = to_acc<A>(b.v[k]);
      const A gf = to_acc<A>(g.v[k]);
      ga.v[k] = Cast<T>::from(gf * bf * s[k] * (A(1) + af[k] * (A(1) - s[k])));
      gb.v[k] = Cast<T>::from(gf * af[k] * s[k]);
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

// Launches of at most this many 16-byte vectors (256 KB of output, e.g. bf16
// 16 x 8192) are a fraction of one wave, and their time is one thread's chain
// of loads and sigmoids: they take 4-byte vectors, four times the threads
// (at most 64K, under one wave of any GPU with 32 SMs) with a quarter of the
// chain each. Measured on an H200 against 16-byte vectors: up to 9% faster
// forward and 14% backward at these sizes; at 65536 vectors the extra threads
// no longer fit a wave and it was up to 18% slower.
constexpr int64_t kNarrowMaxVectors = 16384;

// Elements per vector for a launch over [rows, d]: 16 bytes where d and every
// pointer allow it, 4 bytes for small launches, else one element.
template <typename T>
int vector_width(int64_t rows, int64_t d, bool aligned) {
  constexpr int kWide = kVec16<T>;
  if (!aligned || d % kWide != 0) return 1;
  return rows * d / kWide <= kNarrowMaxVectors ? kNarrow<T> : kWide;
}

// Calls go(std::integral_constant<int, V>) for the width from vector_width.
template <typename T, typename Go>
void with_width(int width, Go&& go) {
  if (width == kVec16<T>) {
    go(std::integral_constant<int, kVec16<T>>{});
  } else if (width == kNarrow<T>) {
    go(std::integral_constant<int, kNarrow<T>>{});
  } else {
    go(std::integral_constant<int, 1>{});
  }
}

template <typename T>
void launch_fwd(T* out, const T* x, int64_t rows, int64_t d, cudaStream_t stream) {
  const int width = vector_width<T>(rows, d, aligned16(out) && aligned16(x));
  with_width<T>(width, [&](auto v) {
    constexpr int V = decltype(v)::value;
    silu_and_mul_kernel<T, V><<<grid_for(rows * d / V), kThreads, 0, stream>>>(out, x, rows, d);
  });
  check_launch("silu_and_mul kernel launch");
}

template <typename T>
void launch_bwd(T* grad_x, const T* grad_out, const T* x, int64_t rows, int64_t d,
                cudaStream_t stream) {
  const int width =
      vector_width<T>(rows, d, aligned16(grad_x) && aligned16(grad_out) && aligned16(x));
  with_width<T>(width, [&](auto v) {
    constexpr int V = decltype(v)::value;
    silu_and_mul_bwd_kernel<T, V>
        <<<grid_for(rows * d / V), kThreads, 0, stream>>>(grad_x, grad_out, x, rows, d);
  });
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
