// One-row-per-block kernels of increasing work, for benchmarks/tools/row_ladder.py:
// not part of the package. Built alone with nvcc and called through ctypes.
//
// Written to find why, at 64 MB reads on an H100, Liger's rms_norm and the
// device copy seemed 6-7% faster than fusedops's (the answer, NOTES.md v16: the
// prefetch's evict_last lines left in the L2). The rungs separate what the
// kernel body adds from what an nvcc-built row kernel does at all:
//   mode 0  copy: load one row, store it;
//   mode 1  scale: also load the weight, out = x * w (no reduction);
//   mode 2  norm: sum of squares, warp shuffles, one barrier, rsqrt, x * r * w;
//   mode 3  norm + prefetch: mode 2, and each block below the last
//           `ahead_rows` asks the L2 for row blockIdx.x + ahead_rows, one
//           128-byte line per thread, marked evict_last (the wheel's
//           RowPrefetch at 64 MB: 4 MB ahead);
//   mode 4  mode 3, and each thread then sets its line of its own row (the
//           line another block prefetched) back to evict_normal, so that no
//           line stays evict_last after the kernel. Unlike the wheel's
//           demote_l2 (after the sum of squares, from the row's first
//           128-byte line) it demotes right after issuing the loads, and
//           assumes rows of whole lines: what v16's calls 3 and 4 measured.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

namespace {

struct alignas(16) Vec16 {
  uint32_t u[4];
};

template <typename T>
struct Elem;
template <>
struct Elem<float> {
  static constexpr int kPerVec = 4;
  static __device__ float get(const Vec16& v, int k) { return __uint_as_float(v.u[k]); }
  static __device__ void set(Vec16& v, int k, float f) { v.u[k] = __float_as_uint(f); }
};
template <>
struct Elem<__nv_bfloat16> {
  static constexpr int kPerVec = 8;
  static __device__ float get(const Vec16& v, int k) {
    const uint32_t half = k % 2 == 0 ? v.u[k / 2] << 16 : v.u[k / 2] & 0xffff0000u;
    return __uint_as_float(half);
  }
  static __device__ void set(Vec16& v, int k, float f) {
    const uint32_t b = __bfloat16_as_ushort(__float2bfloat16_rn(f));
    v.u[k / 2] = k % 2 == 0 ? (v.u[k / 2] & 0xffff0000u) | b : (v.u[k / 2] & 0xffffu) | (b << 16);
  }
};

template <bool kNc>
__device__ __forceinline__ Vec16 load(const Vec16* p) {
  Vec16 v;
  if constexpr (kNc) {
    asm volatile("ld.global.nc.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.u[0]), "=r"(v.u[1]), "=r"(v.u[2]), "=r"(v.u[3])
                 : "l"(p));
  } else {
    asm volatile("ld.global.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.u[0]), "=r"(v.u[1]), "=r"(v.u[2]), "=r"(v.u[3])
                 : "l"(p));
  }
  return v;
}

template <typename T, int C, int kMode, bool kNc>
__global__ void row_kernel(Vec16* __restrict__ out, const Vec16* __restrict__ x,
                           const Vec16* __restrict__ w, int nvec, float inv_hidden, float eps,
                           int ahead_rows) {
  using E = Elem<T>;
  __shared__ float warp_sums[32];
  const int64_t base = static_cast<int64_t>(blockIdx.x) * nvec;
  Vec16 xv[C], wv[C];
#pragma unroll
  for (int c = 0; c < C; ++c) {
    const int i = threadIdx.x + c * blockDim.x;
    xv[c] = load<kNc>(x + base + i);
    if constexpr (kMode >= 1) wv[c] = load<kNc>(w + i);
  }
  if constexpr (kMode >= 3) {
    const unsigned line = threadIdx.x * 128u;
    if (blockIdx.x + ahead_rows < gridDim.x && line < nvec * 16u) {
      const char* p = reinterpret_cast<const char*>(x + base + int64_t{ahead_rows} * nvec) + line;
      asm volatile("prefetch.global.L2::evict_last [%0];" ::"l"(p));
    }
    if (kMode == 4 && line < nvec * 16u) {
      const char* own = reinterpret_cast<const char*>(x + base) + line;
      asm volatile("applypriority.global.L2::evict_normal [%0], 128;" ::"l"(own));
    }
  }
  float r = 1.0f;
  if constexpr (kMode >= 2) {
    float s = 0.0f;
#pragma unroll
    for (int c = 0; c < C; ++c) {
#pragma unroll
      for (int k = 0; k < E::kPerVec; ++k) s = fmaf(E::get(xv[c], k), E::get(xv[c], k), s);
    }
#pragma unroll
    for (int m = 16; m > 0; m /= 2) s += __shfl_xor_sync(0xffffffffu, s, m);
    const int warps = blockDim.x / 32;
    if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = s;
    __syncthreads();
    s = 0.0f;
    for (int k = 0; k < warps; ++k) s += warp_sums[k];
    r = rsqrtf(fmaf(s, inv_hidden, eps));
  }
#pragma unroll
  for (int c = 0; c < C; ++c) {
    const int i = threadIdx.x + c * blockDim.x;
    Vec16 o = xv[c];
    if constexpr (kMode >= 1) {
#pragma unroll
      for (int k = 0; k < E::kPerVec; ++k) E::set(o, k, E::get(xv[c], k) * r * E::get(wv[c], k));
    }
    out[base + i] = o;
  }
}

struct Args {
  Vec16* out;
  const Vec16* x;
  const Vec16* w;
  long rows;
  int nvec;
  float inv_hidden, eps;
  int ahead_rows;
};

template <typename T, int C, int kMode, bool kNc>
int go_kernel(const Args& a, int threads, cudaStream_t s) {
  row_kernel<T, C, kMode, kNc>
      <<<a.rows, threads, 0, s>>>(a.out, a.x, a.w, a.nvec, a.inv_hidden, a.eps, a.ahead_rows);
  return cudaGetLastError() == cudaSuccess ? 0 : -3;
}

template <typename T, int C, bool kNc>
int go_mode(int mode, const Args& a, int threads, cudaStream_t s) {
  switch (mode) {
    case 0:
      return go_kernel<T, C, 0, kNc>(a, threads, s);
    case 1:
      return go_kernel<T, C, 1, kNc>(a, threads, s);
    case 2:
      return go_kernel<T, C, 2, kNc>(a, threads, s);
    case 3:
      return go_kernel<T, C, 3, kNc>(a, threads, s);
    case 4:
      return go_kernel<T, C, 4, kNc>(a, threads, s);
    default:
      return -1;
  }
}

template <typename T, bool kNc>
int go_c(int mode, int c, const Args& a, cudaStream_t s) {
  if (c <= 0 || a.nvec % c != 0 || a.nvec / c > 1024 || (a.nvec / c) % 32 != 0) return -2;
  const int threads = a.nvec / c;
  switch (c) {
    case 1:
      return go_mode<T, 1, kNc>(mode, a, threads, s);
    case 2:
      return go_mode<T, 2, kNc>(mode, a, threads, s);
    case 4:
      return go_mode<T, 4, kNc>(mode, a, threads, s);
    default:
      return -2;
  }
}

template <typename T>
int go_t(int mode, int c, int nc, void* out, const void* x, const void* w, long rows, int hidden,
         float eps, cudaStream_t s) {
  const int nvec = hidden / Elem<T>::kPerVec;
  // The wheel's RowPrefetch at 64 MB: 4 MB of x ahead, in whole rows.
  const long row_bytes = long{hidden} * static_cast<long>(sizeof(T));
  const int ahead_rows = static_cast<int>(std::max(1L, (4L << 20) / row_bytes));
  const Args a{static_cast<Vec16*>(out),
               static_cast<const Vec16*>(x),
               static_cast<const Vec16*>(w),
               rows,
               nvec,
               1.0f / static_cast<float>(hidden),
               eps,
               ahead_rows};
  return nc != 0 ? go_c<T, true>(mode, c, a, s) : go_c<T, false>(mode, c, a, s);
}

}  // namespace

// dtype: 0 float32, 2 bfloat16 (fwd_variants.cu's codes). Returns 0, or < 0
// for an unsupported combination (-1 mode, -2 vectors per thread, -3 launch).
extern "C" int launch(int dtype, int mode, int c, int nc, void* out, const void* x, const void* w,
                      long rows, int hidden, float eps, void* stream) {
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  if (dtype == 0) return go_t<float>(mode, c, nc, out, x, w, rows, hidden, eps, s);
  if (dtype == 2) return go_t<__nv_bfloat16>(mode, c, nc, out, x, w, rows, hidden, eps, s);
  return -4;
}
