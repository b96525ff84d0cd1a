// Variants of the single-pass rms_norm forward (csrc/kernels/cuda/rms_norm.cu,
// as of git 25270f4), for benchmarks/tools/fwd_variants.py: not part of the
// package. Built alone with nvcc and called through ctypes (extern "C" launch).
//
// Flags (bits): 1 loads as plain ld.global instead of ld.global.nc; 2 second
// reduction level of log2(warps) shuffles in a loop; 4 programmatic dependent
// launch (griddepcontrol, sm_90+); 8 sum of squares as a pairwise tree; 16 the
// mean as a multiply by 1/hidden; 32 the short second level unrolled. Plan 0 is
// fusedops's block shape, plan 1 Liger-Kernel's (warps by next_pow2(hidden)).
// Measured on an H100: benchmarks/NOTES.md, v8. Added after v8 (NOTES.md, v9):
// 64 second level read whole from shared memory (every thread reads the
// warps' sums and adds them as a halving tree: no shuffles, no branches);
// 128 weight loads issued after the thread's own sum of squares; 256 one row
// per block (no row loop: the grid here is always `rows` blocks); 512 the sum
// of squares as the wheel's multiply-add pairs tree (with 8). Added in v10:
// 1024 the warp count as a compile-time constant (block sizes of 1-32 whole
// warps, a power of two): the row stride and the second level's shuffle
// rounds are fixed; each lane reads warp (lane mod warps)'s sum, so there is
// no zero padding and no branch per round. Added in v33 (prepared in v32's
// session): 2048 at C = 4, the sum in C = 2's order (plan 2 runs rows that
// plan 0 gives C = 2 at 4 vectors a thread in half the threads): thread t's
// vectors t, t + T/2, t + T, t + 3T/2 are summed as two halves, (t, t + T) and
// (t + T/2, t + 3T/2), which are the sums of threads t and t + T/2 at C = 2 and
// T threads; each half is summed over its warp, warp w's halves are stored as
// the sums of warps w and w + warps of the C = 2 block, and the second level
// adds those 2 * warps sums as the C = 2 block adds its warps'. Meant to give
// C = 2's bits at any batch, so that a plan could take C = 4 by batch;
// fwd_variants.py checks each output against the variant without 2048 (plan 0).
// Flag 2048 is only for plan 2 (launch returns -6 otherwise): elsewhere a C = 4
// block may have more than 16 warps, whose halves do not fit 32 slots.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

template <typename T, int N>
struct alignas(sizeof(T) * N) Vec {
  T v[N];
};
__device__ __forceinline__ float f32(float v) { return v; }
__device__ __forceinline__ float f32(__half v) { return __half2float(v); }
__device__ __forceinline__ float f32(__nv_bfloat16 v) { return __bfloat162float(v); }
template <typename T>
__device__ __forceinline__ T from(float v);
template <>
__device__ __forceinline__ float from<float>(float v) {
  return v;
}
template <>
__device__ __forceinline__ __half from<__half>(float v) {
  return __float2half_rn(v);
}
template <>
__device__ __forceinline__ __nv_bfloat16 from<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
template <typename VecT>
__device__ __forceinline__ void keep_packed(VecT& v) {
  uint4& u = reinterpret_cast<uint4&>(v);
  asm volatile("" : "+r"(u.x), "+r"(u.y), "+r"(u.z), "+r"(u.w));
}
template <bool kPlain, typename VecT>
__device__ __forceinline__ VecT ld(const VecT* p) {
  if constexpr (kPlain) {
    uint4 u;
    asm volatile("ld.global.v4.u32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(u.x), "=r"(u.y), "=r"(u.z), "=r"(u.w)
                 : "l"(p));
    return reinterpret_cast<VecT&>(u);
  } else {
    return *p;
  }
}
// The warps' sums as a halving tree over N values (zero-padded past nw): the
// order the butterfly shuffles add in, so the result is the same bits.
template <int N>
__device__ __forceinline__ float read_all(const float* s, int nw) {
  float t[N];
#pragma unroll
  for (int k = 0; k < N; k += 4) {
    const float4 q = reinterpret_cast<const float4*>(s)[k / 4];
    t[k] = q.x;
    t[k + 1] = q.y;
    t[k + 2] = q.z;
    t[k + 3] = q.w;
  }
#pragma unroll
  for (int k = 0; k < N; ++k)
    if (k >= nw) t[k] = 0.f;
#pragma unroll
  for (int h = N / 2; h > 0; h >>= 1)
#pragma unroll
    for (int k = 0; k < h; ++k) t[k] += t[k + h];
  return t[0];
}

// The unrolled short second level: `count` sums (at most 32) zero-padded to a
// power of two p, lane j holding sum j mod p, log2(p) shuffle rounds.
__device__ __forceinline__ float short_level_unrolled(const float* sums, int count) {
  const int lane = threadIdx.x & 31;
  const int p = 1 << (32 - __clz(count - 1));  // rounded up to a power of two
  const int j = lane & (p - 1);
  float t = j < count ? sums[j] : 0.f;
#pragma unroll
  for (int o = 16; o > 0; o >>= 1)
    if (o < p) t += __shfl_xor_sync(0xffffffffu, t, o);
  return t;
}

// NW > 0: the block's warp count, known at compile time.
template <bool kShort, bool kUnrolled, bool kReadAll = false, int NW = 0>
__device__ __forceinline__ float block_sum(float v, float (*scratch)[32], int parity) {
  v = warp_sum(v);
  if constexpr (NW == 1) return v;
  if constexpr (NW > 1) {
    const int lane = threadIdx.x & 31;
    if (lane == 0) scratch[parity][threadIdx.x >> 5] = v;
    __syncthreads();
    float t = scratch[parity][lane & (NW - 1)];  // every lane holds a warp's sum
#pragma unroll
    for (int o = NW / 2; o > 0; o >>= 1) t += __shfl_xor_sync(0xffffffffu, t, o);
    return t;
  }
  const int nw = static_cast<int>(blockDim.x) >> 5;
  if (nw == 1) return v;
  const int lane = threadIdx.x & 31;
  if (lane == 0) scratch[parity][threadIdx.x >> 5] = v;
  __syncthreads();
  if constexpr (kReadAll) {
    // Shared memory is 16-byte aligned; reads past nw are of the (unwritten)
    // rest of the 32-entry row and are replaced by zeros.
    if (nw == 2) {
      const float2 q = reinterpret_cast<const float2*>(scratch[parity])[0];
      return q.x + q.y;
    }
    if (nw <= 4) return read_all<4>(scratch[parity], nw);
    if (nw <= 8) return read_all<8>(scratch[parity], nw);
    if (nw <= 16) return read_all<16>(scratch[parity], nw);
  }
  if constexpr (kUnrolled || kReadAll) {  // read-all: past 16 warps, the shuffles
    return short_level_unrolled(scratch[parity], nw);
  } else if constexpr (kShort) {
    int p = 1;
    while (p < nw) p <<= 1;  // warps rounded up to a power of two
    const int j = lane & (p - 1);
    float t = j < nw ? scratch[parity][j] : 0.f;
    for (int o = p >> 1; o > 0; o >>= 1) t += __shfl_xor_sync(0xffffffffu, t, o);
    return t;
  } else {
    return warp_sum(lane < nw ? scratch[parity][lane] : 0.f);
  }
}

// Flag 2048: a thread's two halves (lo, hi), each summed over its warp; warp w's
// go to slots w and w + nw, and the second level is block_sum's unrolled short
// level (short_level_unrolled) over 2 * nw slots, as a block of 2 * nw warps adds
// its warps' sums.
__device__ __forceinline__ float block_sum_halves(float lo, float hi, float (*scratch)[32],
                                                  int parity) {
  lo = warp_sum(lo);
  hi = warp_sum(hi);
  const int nw = static_cast<int>(blockDim.x) >> 5;
  if (2 * nw > 32) __trap();  // would write past the scratch row: plan 2 gives at most 16 warps
  if ((threadIdx.x & 31) == 0) {
    scratch[parity][threadIdx.x >> 5] = lo;
    scratch[parity][(threadIdx.x >> 5) + nw] = hi;
  }
  __syncthreads();
  return short_level_unrolled(scratch[parity], 2 * nw);
}

template <typename T, int C, int MaxT, int kFlags, int NW = 0>
__global__ void __launch_bounds__(MaxT)
    fwd(T* __restrict__ out, const T* __restrict__ x, const T* __restrict__ weight, int64_t rows,
        int hidden, float eps, float inv_hidden) {
  constexpr bool kPlain = kFlags & 1, kShort = kFlags & 2, kPdl = kFlags & 4;
  constexpr bool kTree = kFlags & 8, kInvH = kFlags & 16, kUnrolled = kFlags & 32;
  constexpr bool kReadAll = kFlags & 64, kLateW = kFlags & 128, kOneRow = kFlags & 256;
  constexpr bool kPairs = kFlags & 512;
  constexpr bool kHalves = (kFlags & 2048) && C == 4;  // needs the tree (8) and no NW
  static_assert(!(kFlags & 2048) || ((kFlags & 8) && NW == 0), "2048: tree sums, runtime warps");
  constexpr int V = 16 / sizeof(T);
  const int stride = NW > 0 ? NW * 32 : static_cast<int>(blockDim.x);
  using VecT = Vec<T, V>;
  __shared__ __align__(16) float scratch[2][32];
  const int nvec = hidden / V;
  const VecT* w = reinterpret_cast<const VecT*>(weight);
#if __CUDA_ARCH__ >= 900
  if constexpr (kPdl) asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  int parity = 0;
  int64_t row = blockIdx.x;
  do {
    const int64_t offset = row * hidden;
    const VecT* xr = reinterpret_cast<const VecT*>(x + offset);
    VecT xv[C], wv[C];
#pragma unroll
    for (int c = 0; c < C; ++c) {
      const int i = threadIdx.x + c * stride;
      if (i < nvec) {
        xv[c] = ld<kPlain>(xr + i);
        if constexpr (!kLateW) wv[c] = ld<kPlain>(w + i);
      }
    }
#if __CUDA_ARCH__ >= 900
    if constexpr (kPdl) asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
    float s = 0;
    float hi = 0;  // kHalves: the second half's sum
    if constexpr (kTree) {
      float part[C];
#pragma unroll
      for (int c = 0; c < C; ++c) {
        const int i = threadIdx.x + c * stride;
        constexpr int kLeaves = kPairs ? V / 2 : V;
        float q[kLeaves];
#pragma unroll
        for (int k = 0; k < kLeaves; ++k) {
          if constexpr (kPairs) {
            const float a = i < nvec ? f32(xv[c].v[2 * k]) : 0.f;
            const float b = i < nvec ? f32(xv[c].v[2 * k + 1]) : 0.f;
            q[k] = fmaf(b, b, a * a);
          } else {
            const float f = i < nvec ? f32(xv[c].v[k]) : 0.f;
            q[k] = f * f;
          }
        }
#pragma unroll
        for (int w2 = kLeaves / 2; w2 > 0; w2 >>= 1)
#pragma unroll
          for (int k = 0; k < w2; ++k) q[k] += q[k + w2];
        part[c] = q[0];
      }
#pragma unroll
      for (int w2 = C / 2; w2 > (kHalves ? 1 : 0); w2 >>= 1)
#pragma unroll
        for (int c = 0; c < w2; ++c) part[c] += part[c + w2];
      s = part[0];
      if constexpr (kHalves) hi = part[1];
    } else {
#pragma unroll
      for (int c = 0; c < C; ++c) {
        const int i = threadIdx.x + c * stride;
        if (i < nvec) {
#pragma unroll
          for (int k = 0; k < V; ++k) {
            const float f = f32(xv[c].v[k]);
            s += f * f;
          }
        }
      }
    }
    if constexpr (kLateW) {
#pragma unroll
      for (int c = 0; c < C; ++c) {
        const int i = threadIdx.x + c * stride;
        if (i < nvec) wv[c] = ld<kPlain>(w + i);
      }
    }
    if constexpr (kHalves) {
      s = block_sum_halves(s, hi, scratch, parity);
    } else {
      s = block_sum<kShort, kUnrolled, kReadAll, NW>(s, scratch, parity);
    }
    const float rstd =
        kInvH ? rsqrtf(fmaf(s, inv_hidden, eps)) : rsqrtf(s / static_cast<float>(hidden) + eps);
    VecT* outr = reinterpret_cast<VecT*>(out + offset);
#pragma unroll
    for (int c = 0; c < C; ++c) {
      const int i = threadIdx.x + c * stride;
      if (i < nvec) {
        keep_packed(xv[c]);
        keep_packed(wv[c]);
        VecT o;
#pragma unroll
        for (int k = 0; k < V; ++k) o.v[k] = from<T>(f32(xv[c].v[k]) * rstd * f32(wv[c].v[k]));
        outr[i] = o;
      }
    }
    if constexpr (kOneRow) break;
    row += gridDim.x;
    parity ^= 1;
  } while (row < rows);
}

template <typename T, int C, int MaxT, int F, int NW = 0>
int go_nw(int threads, void* out, const void* x, const void* w, long rows, int hidden, float eps,
          cudaStream_t stream) {
  auto k = fwd<T, C, MaxT, F, NW>;
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(static_cast<unsigned>(rows));
  cfg.blockDim = dim3(threads);
  cfg.stream = stream;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = attr;
  cfg.numAttrs = (F & 4) ? 1 : 0;
  cudaError_t e = cudaLaunchKernelEx(&cfg, k, static_cast<T*>(out), static_cast<const T*>(x),
                                     static_cast<const T*>(w), static_cast<int64_t>(rows), hidden,
                                     eps, static_cast<float>(1.0 / hidden));
  return static_cast<int>(e);
}

// Flag 1024 instantiates the kernel for the block's warp count.
template <typename T, int C, int MaxT, int F>
int go(int threads, void* out, const void* x, const void* w, long rows, int hidden, float eps,
       cudaStream_t stream) {
  if constexpr ((F & 1024) != 0) {
    switch (threads) {
      case 32:
        return go_nw<T, C, MaxT, F, 1>(threads, out, x, w, rows, hidden, eps, stream);
      case 64:
        return go_nw<T, C, MaxT, F, 2>(threads, out, x, w, rows, hidden, eps, stream);
      case 128:
        return go_nw<T, C, MaxT, F, 4>(threads, out, x, w, rows, hidden, eps, stream);
      case 256:
        return go_nw<T, C, MaxT, F, 8>(threads, out, x, w, rows, hidden, eps, stream);
      case 512:
        return go_nw<T, C, MaxT, F, 16>(threads, out, x, w, rows, hidden, eps, stream);
      case 1024:
        if constexpr (MaxT >= 1024)
          return go_nw<T, C, MaxT, F, 32>(threads, out, x, w, rows, hidden, eps, stream);
    }
    return -4;  // not a power-of-two warp count, or more threads than MaxT
  }
  return go_nw<T, C, MaxT, F>(threads, out, x, w, rows, hidden, eps, stream);
}

template <typename T, int MaxT, int F>
int by_c(int c, int threads, void* out, const void* x, const void* w, long rows, int hidden,
         float eps, cudaStream_t s) {
  switch (c) {
    case 1:
      return go<T, 1, MaxT, F>(threads, out, x, w, rows, hidden, eps, s);
    case 2:
      return go<T, 2, MaxT, F>(threads, out, x, w, rows, hidden, eps, s);
    case 4:
      return go<T, 4, MaxT, F>(threads, out, x, w, rows, hidden, eps, s);
    case 8:
      if constexpr (MaxT <= 512) return go<T, 8, MaxT, F>(threads, out, x, w, rows, hidden, eps, s);
  }
  return -1;
}

// The flag combinations built (fwd_variants.py's VARIANTS): 568 is the wheel's
// v8 rms_norm (pairs tree, 1/hidden, unrolled short level); 632/696/824/888/1016
// add to it read-all (64), late weight (128), one row (256) as named there;
// 1592/1720 the warp count at compile time (1024); 2616 v8 in C = 2's order (2048).
template <int... Flags>
struct FlagList {};
using BuiltFlags =
    FlagList<0, 1, 2, 3, 4, 7, 8, 16, 32, 56, 60, 568, 632, 696, 824, 888, 1016, 1592, 1720, 2616>;

template <typename T, int MaxT, int... Flags>
int by_flags_in(FlagList<Flags...>, int flags, int c, int threads, void* out, const void* x,
                const void* w, long rows, int hidden, float eps, cudaStream_t s) {
  int rc = -2;  // not a built combination
  ((flags == Flags &&
    (rc = by_c<T, MaxT, Flags>(c, threads, out, x, w, rows, hidden, eps, s), true)) ||
   ...);
  return rc;
}

template <typename T, int MaxT>
int by_flags(int flags, int c, int threads, void* out, const void* x, const void* w, long rows,
             int hidden, float eps, cudaStream_t s) {
  return by_flags_in<T, MaxT>(BuiltFlags{}, flags, c, threads, out, x, w, rows, hidden, eps, s);
}

// Plan 0's block: vectors a thread and threads (plan 2 starts from it).
struct Shape {
  int c;
  int threads;
};
template <typename T>
Shape plan0_shape(int nvec) {
  int c = nvec <= 256 ? 1 : 2;
  if (sizeof(T) == 4 && nvec >= 1024) c = 4;  // the wheel's v8 float32 rule
  while (nvec > c * 1024) c *= 2;
  return {c, ((nvec + c - 1) / c + 31) / 32 * 32};
}

// plan 0: fusedops's (C = 1 up to 256 vectors, else 2, float32 from 1024 vectors 4,
// doubled past 1024 threads);
// plan 1: Liger's (warps 4/8/16/32 by next_pow2(hidden), C = vectors / threads);
// plan 2: plan 0, but its C = 2 blocks of an even warp count at C = 4 in half the
// threads (flag 2048 then adds in C = 2's order).
// Return codes past cudaError_t's: -5 plan 2 does not apply at this row length
// (plan 0 gives no C = 2 block of an even warp count), -6 flag 2048 without plan 2.
template <typename T>
int launch_t(int flags, int plan, void* out, const void* x, const void* w, long rows, int hidden,
             float eps, cudaStream_t s) {
  const int nvec = hidden / (16 / sizeof(T));
  if ((flags & 2048) && plan != 2) return -6;
  if (plan == 0) {
    const Shape b = plan0_shape<T>(nvec);
    return by_flags<T, 1024>(flags, b.c, b.threads, out, x, w, rows, hidden, eps, s);
  }
  if (plan == 2) {
    const Shape b = plan0_shape<T>(nvec);
    if (b.c != 2 || b.threads % 64 != 0) return -5;
    return by_flags<T, 1024>(flags, 4, b.threads / 2, out, x, w, rows, hidden, eps, s);
  }
  int block = 1;
  while (block < hidden) block <<= 1;
  const int nw = block >= 32768 ? 32 : block >= 8192 ? 16 : block >= 2048 ? 8 : 4;
  const int threads = nw * 32;
  int c = 1;
  while (c * threads < nvec) c *= 2;
  return by_flags<T, 512>(flags, c, threads, out, x, w, rows, hidden, eps, s);
}

extern "C" int launch(int dtype, int flags, int plan, void* out, const void* x, const void* w,
                      long rows, int hidden, float eps, void* stream) {
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  switch (dtype) {
    case 0:
      return launch_t<float>(flags, plan, out, x, w, rows, hidden, eps, s);
    case 1:
      return launch_t<__half>(flags, plan, out, x, w, rows, hidden, eps, s);
    case 2:
      return launch_t<__nv_bfloat16>(flags, plan, out, x, w, rows, hidden, eps, s);
  }
  return -3;
}
