// Shared device helpers: dtype mapping, 16-byte vectors, block reductions,
// launch checks. Included only by the .cu files of the kernel layer.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "../kernels.h"

namespace fusedops::kernels::cuda {

inline void check_cuda(cudaError_t err, const char* what) {
  if (err != cudaSuccess) {
    throw std::runtime_error(std::string("fusedops: ") + what +
                             " failed: " + cudaGetErrorString(err));
  }
}

// The device launches go to (the ops set it to their tensors' device first).
inline int current_device() {
  int device = 0;
  check_cuda(cudaGetDevice(&device), "cudaGetDevice");
  return device;
}

// Every launch is followed by this: a bad configuration must surface as a
// Python exception, not as a silently skipped kernel.
inline void check_launch(const char* kernel) {
  const cudaError_t err = cudaGetLastError();
  if (err == cudaErrorNoKernelImageForDevice) {
    throw std::runtime_error(std::string("fusedops: ") + kernel +
                             " failed: this GPU's architecture is not in the wheel's arch list "
                             "(run `python -m fusedops doctor`)");
  }
  check_cuda(err, kernel);
}

// Accumulation type: float32, or float64 for float64 inputs (the ops' documented precision).
template <typename T>
struct Acc {
  using type = float;
};
template <>
struct Acc<double> {
  using type = double;
};

template <typename A>
__device__ __forceinline__ A to_acc(float v) {
  return static_cast<A>(v);
}
template <typename A>
__device__ __forceinline__ A to_acc(double v) {
  return static_cast<A>(v);
}
template <typename A>
__device__ __forceinline__ A to_acc(__half v) {
  return static_cast<A>(__half2float(v));
}
template <typename A>
__device__ __forceinline__ A to_acc(__nv_bfloat16 v) {
  return static_cast<A>(__bfloat162float(v));
}

template <typename T>
struct Cast;
template <>
struct Cast<float> {
  __device__ __forceinline__ static float from(float v) { return v; }
};
template <>
struct Cast<double> {
  __device__ __forceinline__ static double from(double v) { return v; }
};
template <>
struct Cast<__half> {
  __device__ __forceinline__ static __half from(float v) { return __float2half_rn(v); }
};
template <>
struct Cast<__nv_bfloat16> {
  __device__ __forceinline__ static __nv_bfloat16 from(float v) { return __float2bfloat16_rn(v); }
};

// N elements of T moved as one aligned access (16 bytes when N = 16/sizeof(T)).
template <typename T, int N>
struct alignas(sizeof(T) * N) Vec {
  T v[N];
};

template <typename T>
constexpr int kVec16 = 16 / static_cast<int>(sizeof(T));

inline bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; }

template <typename A>
__device__ __forceinline__ A warp_sum(A v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

// Sum over the block, returned to every thread. `scratch` holds 32 values.
template <typename A>
__device__ __forceinline__ A block_sum(A v, A* scratch) {
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  v = warp_sum(v);
  __syncthreads();  // scratch may still be read from the previous call
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  const int num_warps = (blockDim.x + 31) >> 5;
  v = lane < num_warps ? scratch[lane] : A(0);
  return warp_sum(v);
}

// Two sums reduced together: one pair of barriers instead of two.
// `scratch` holds 32 values, like block_sum's.
template <typename A>
__device__ __forceinline__ void block_sum2(A (&v)[2], A* scratch) {
  __shared__ A second[32];
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  v[0] = warp_sum(v[0]);
  v[1] = warp_sum(v[1]);
  __syncthreads();  // scratch may still be read from the previous call
  if (lane == 0) {
    scratch[warp] = v[0];
    second[warp] = v[1];
  }
  __syncthreads();
  const int num_warps = (blockDim.x + 31) >> 5;
  v[0] = warp_sum(lane < num_warps ? scratch[lane] : A(0));
  v[1] = warp_sum(lane < num_warps ? second[lane] : A(0));
}

// ---- asynchronous global -> shared copies -------------------------------
// cp.async (sm_80+) moves 16 bytes from global to shared memory without
// passing through registers, so the bytes a thread has in flight no longer
// cost it registers. `.cg` caches in L2 only, leaving L1 to data that is
// re-read (the weight). Before sm_80 the same calls copy synchronously
// (a plain load and store), so a kernel built on them stays correct there.
// The usual pattern: issue copies, cp_async_commit() closes a group;
// cp_async_wait(n) returns once at most n of this thread's groups are still
// pending. It makes only this thread's own copies visible to it: a thread
// that reads data other threads copied needs a __syncthreads() after it.
__device__ __forceinline__ void cp_async16(void* smem_dst, const void* gmem_src) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(smem_dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(gmem_src) : "memory");
#else
  *static_cast<uint4*>(smem_dst) = *static_cast<const uint4*>(gmem_src);
#endif
}

__device__ __forceinline__ void cp_async_commit() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}

// cp.async.wait_group takes an immediate: n is dispatched to 0..3.
__device__ __forceinline__ void cp_async_wait(int n) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  switch (n) {
    case 0:
      asm volatile("cp.async.wait_group 0;\n" ::: "memory");
      break;
    case 1:
      asm volatile("cp.async.wait_group 1;\n" ::: "memory");
      break;
    case 2:
      asm volatile("cp.async.wait_group 2;\n" ::: "memory");
      break;
    default:
      asm volatile("cp.async.wait_group 3;\n" ::: "memory");
      break;
  }
#else
  (void)n;
#endif
}

}  // namespace fusedops::kernels::cuda

// Runs `__VA_ARGS__` with `scalar_t` bound to the CUDA type of `dtype`.
#define FUSEDOPS_CUDA_DISPATCH(dtype, ...)                                     \
  [&] {                                                                        \
    using ::fusedops::kernels::DType;                                          \
    switch (dtype) {                                                           \
      case DType::kFloat32: {                                                  \
        using scalar_t = float;                                                \
        return __VA_ARGS__();                                                  \
      }                                                                        \
      case DType::kFloat64: {                                                  \
        using scalar_t = double;                                               \
        return __VA_ARGS__();                                                  \
      }                                                                        \
      case DType::kFloat16: {                                                  \
        using scalar_t = __half;                                               \
        return __VA_ARGS__();                                                  \
      }                                                                        \
      case DType::kBFloat16: {                                                 \
        using scalar_t = __nv_bfloat16;                                        \
        return __VA_ARGS__();                                                  \
      }                                                                        \
    }                                                                          \
    throw std::invalid_argument("fusedops: unsupported dtype in CUDA kernel"); \
  }()
