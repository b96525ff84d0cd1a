// SiLU-and-mul (SwiGLU activation) and its backward on CUDA.
//
// Elementwise over [rows, d] outputs with inputs [rows, 2d]: a grid-strided
// loop over 16-byte vectors when d and the pointers allow it (4- or 8-byte
// vectors for small launches, and 8-byte ones for the largest except the
// forward on devices with fast DRAM; vector_width), scalars otherwise. At
// the sizes that fit in L2 the kernel is bound by instructions and latency,
// not DRAM, so the path to each thread's loads is kept short (32-bit indices
// with a multiply-shift division, Index32) and the sigmoids of a vector are
// computed together (sigmoid_vec), so their latencies overlap.
#include <algorithm>
#include <type_traits>

#include "common.cuh"

namespace fusedops::kernels {
namespace cuda {
namespace {

constexpr int kThreads = 256;

// Elements in the narrower vectors (vector_width): 4 bytes (kNarrow) and 8
// bytes (kMid); float64 keeps its 16-byte vectors (narrower was not
// measured).
template <typename T>
constexpr int kNarrow = sizeof(T) <= 4 ? 4 / static_cast<int>(sizeof(T)) : kVec16<T>;
template <typename T>
constexpr int kMid = sizeof(T) <= 4 ? 8 / static_cast<int>(sizeof(T)) : kVec16<T>;

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

// exp(-a) as __expf(-a) computes it (2^(a * -log2 e) on the hardware), less
// __expf's rescaling of results below 2^-126, which here flush to zero: the
// sigmoid only ever adds them to 1, where both round to exactly 1.
__device__ __forceinline__ float exp_neg_for_sigmoid(float a) {
  float e;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(e) : "f"(a * -1.44269504088896341f));
  return e;
}

// sigmoid_vec's reciprocals hold for y = 1 + exp(-a) in [1, kReciprocalLimit)
// (y >= 1 always: exp_neg_for_sigmoid is never negative). y leaves that range
// only for a below about -87, or NaN.
constexpr float kReciprocalLimit = 0x1p126f;

// s[k] = sigmoid(a[k]) for a whole vector. A lane whose y = 1 + exp(-a) is
// not below kReciprocalLimit takes the IEEE division (sigmoid()). By kRounded:
// - true: 1 / y rounded as `1.0f / y` rounds it (reciprocal_from_one), bit for
//   bit what sigmoid() gives, so when any lane is out of range the whole
//   vector simply takes sigmoid() (redoing only those lanes, as false does, gives
//   the same bits but moved the bf16 backward by -2.1% to +2.4% by shape on
//   an H100, 1024 x 2048 the +2.4%: NOTES.md, v25);
// - false: the hardware reciprocal alone, within 1 ulp of float (PTX's bound
//   for rcp.approx), and only the out-of-range lanes are redone, so that each
//   output's bits depend on its own inputs alone, never on its neighbours or
//   the vector width. Used by the 16-bit forward, whose float result a * s * b
//   is rounded to 16 bits: a float ulp off can only move an output lying that
//   close to a 16-bit midpoint. An H100 A/B (NOTES.md, v24): up to 4 outputs
//   in a million (bf16) or 15 (fp16) changed, the largest error against
//   float64 math stayed the same to three digits, and 35 of 40 shapes (1-4096
//   rows) ran faster, by up to 1.9% (median 0.4-0.6%; identical builds: median
//   0.25%): the Newton step's two FMAs are off each thread's dependent chain.
//   The backward keeps the rounded reciprocal: it measured within its noise
//   there, and its s also feeds 1 - s.
template <bool kRounded, typename A, int V>
__device__ __forceinline__ void sigmoid_vec(const A (&a)[V], A (&s)[V]) {
  if constexpr (!std::is_same_v<A, float>) {
#pragma unroll
    for (int k = 0; k < V; ++k) s[k] = sigmoid(a[k]);
  } else {
    bool in_range = true;
#pragma unroll
    for (int k = 0; k < V; ++k) {
      const float y = 1.0f + exp_neg_for_sigmoid(a[k]);
      in_range &= y < kReciprocalLimit;
      if constexpr (kRounded) {
        s[k] = reciprocal_from_one(y);
      } else {
        asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(s[k]) : "f"(y));
      }
    }
    if (in_range) return;
    // Cold (a NaN, or a below about -87). kRounded: every lane takes sigmoid();
    // otherwise only the lanes out of range, whose y is computed again, not kept.
#pragma unroll
    for (int k = 0; k < V; ++k) {
      if (kRounded || !(1.0f + exp_neg_for_sigmoid(a[k]) < kReciprocalLimit)) s[k] = sigmoid(a[k]);
    }
  }
}

// The flat index space of a launch: `total` vectors of the [rows, d] output,
// `dv` to a row, and how a vector index splits into (row, column).
// Index64 divides as written. Index32, for tensors of fewer than 2^31
// elements, keeps the loop and the address math in 32 bits and divides by dv
// with a multiply and a shift (dv's magic number is found on the host): a
// few instructions where a runtime division takes about twenty, on the path
// to every thread's first load.
struct Index64 {
  using I = int64_t;
  int64_t total, dv;
  __device__ __forceinline__ int64_t row(int64_t i) const { return i / dv; }
};

struct Index32 {
  using I = uint32_t;
  uint32_t total, dv, magic, shift;
  // (i + umulhi(i, magic)) >> shift == i / dv for i < 2^31: the sum fits.
  __device__ __forceinline__ uint32_t row(uint32_t i) const {
    return (__umulhi(i, magic) + i) >> shift;
  }
};

// Round-up method: shift = ceil(log2 dv), magic = 2^32 (2^shift - dv) / dv + 1
// (below 2^32 since dv > 2^(shift - 1)).
Index32 make_index32(int64_t total, int64_t dv) {
  uint32_t shift = 0;
  while ((int64_t{1} << shift) < dv) ++shift;
  const uint64_t magic = ((uint64_t{1} << 32) * ((uint64_t{1} << shift) - dv)) / dv + 1;
  return {static_cast<uint32_t>(total), static_cast<uint32_t>(dv), static_cast<uint32_t>(magic),
          shift};
}

// Where output vector i = (row, col) reads x, in vectors: x's rows hold 2 * dv
// vectors, a then b, so a is at row * 2dv + col = i + row * dv (one
// multiply-add from i on the way to the first load) and b dv further. With
// it, and the block size as the constant kThreads (every launch uses it)
// rather than read from blockDim, the first load issues 7 instructions sooner:
// 1-4% faster at most small launches (NOTES.md, v17).
template <typename Index>
__device__ __forceinline__ typename Index::I x_index(const Index& ix, typename Index::I i) {
  return i + ix.row(i) * ix.dv;
}

// kHalves: a 16-byte vector of 16-bit values takes its 8 sigmoids in two
// halves of 4, which need fewer registers than 8 at once (see kCapped).
template <typename T, int V, bool kHalves, typename Index>
__device__ __forceinline__ void silu_and_mul_body(T* __restrict__ out, const T* __restrict__ x,
                                                  const Index& ix) {
  using A = typename Acc<T>::type;
  using VecT = Vec<T, V>;
  using I = typename Index::I;
  constexpr int H = kHalves && V >= 8 ? V / 2 : V;  // elements converted at once
  // The 16-byte launches keep the index this kernel had before x_index (the
  // row's offset and the column, the block size read from blockDim): with
  // x_index they were up to 2.4% slower at 128-1024 rows of 16-bit x (median
  // +0.3%), where every other launch got faster (NOTES.md, v17).
  constexpr bool kRowOffset = V * sizeof(T) == 16;
  const I threads = kRowOffset ? static_cast<I>(blockDim.x) : static_cast<I>(kThreads);
  const I stride = static_cast<I>(gridDim.x) * threads;
  for (I i = static_cast<I>(blockIdx.x) * threads + threadIdx.x; i < ix.total; i += stride) {
    const VecT* xv = reinterpret_cast<const VecT*>(x);
    VecT a, b;
    if constexpr (kRowOffset) {
      const I row = ix.row(i);
      const I col = i - row * ix.dv;
      const VecT* xr = xv + row * 2 * ix.dv;
      a = xr[col];
      b = xr[ix.dv + col];
    } else {
      const I ia = x_index(ix, i);
      a = xv[ia];
      b = xv[ia + ix.dv];
    }
    VecT o;
#pragma unroll
    for (int h = 0; h < V; h += H) {
      A af[H], s[H];
#pragma unroll
      for (int k = 0; k < H; ++k) af[k] = to_acc<A>(a.v[h + k]);
      sigmoid_vec<sizeof(T) != 2>(af, s);  // 16-bit: the hardware reciprocal
#pragma unroll
      for (int k = 0; k < H; ++k) {
        o.v[h + k] = Cast<T>::from(af[k] * s[k] * to_acc<A>(b.v[h + k]));
      }
    }
    reinterpret_cast<VecT*>(out)[i] = o;
  }
}

// Launches in scalars or 4-byte vectors, and float64: registers as the
// compiler allocates them.
template <typename T, int V, typename Index>
__global__ void silu_and_mul_kernel(T* __restrict__ out, const T* __restrict__ x, Index ix) {
  silu_and_mul_body<T, V, false>(out, x, ix);
}

// Launches in 8- and 16-byte vectors of float32 or 16-bit values. On sm_80
// and sm_90 (kCapped) at most 32 registers a thread, so that an SM holds 8
// blocks, all its 2048 threads: at 40 (16-byte bf16 vectors), 6 fitted, and a
// grid of 1024 blocks (bf16 1024 x 2048) ran as a full wave and a tail. Within
// 32 registers the 16-byte 16-bit vectors need kHalves; with it no build
// spills (cuobjdump -res-usage). On other archs the kernel is exactly
// silu_and_mul_kernel: unmeasured there, and at the caps those archs would
// need (40 registers for sm_120's 1536 threads, 32 for sm_100) ptxas spilled.
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ == 800 || __CUDA_ARCH__ == 900)
constexpr bool kCapped = true;
#define FUSEDOPS_SILU_FULL_SM_BOUNDS __launch_bounds__(kThreads, 2048 / kThreads)
#else
constexpr bool kCapped = false;
#define FUSEDOPS_SILU_FULL_SM_BOUNDS
#endif

template <typename T, int V, typename Index>
__global__ void FUSEDOPS_SILU_FULL_SM_BOUNDS silu_and_mul_full_sm_kernel(T* __restrict__ out,
                                                                         const T* __restrict__ x,
                                                                         Index ix) {
  silu_and_mul_body<T, V, kCapped>(out, x, ix);
}
#undef FUSEDOPS_SILU_FULL_SM_BOUNDS

template <typename T, int V, typename Index>
__global__ void silu_and_mul_bwd_kernel(T* __restrict__ grad_x, const T* __restrict__ grad_out,
                                        const T* __restrict__ x, Index ix) {
  using A = typename Acc<T>::type;
  using VecT = Vec<T, V>;
  using I = typename Index::I;
  const I stride = static_cast<I>(gridDim.x) * kThreads;
  for (I i = static_cast<I>(blockIdx.x) * kThreads + threadIdx.x; i < ix.total; i += stride) {
    const I ia = x_index(ix, i);
    const VecT* xv = reinterpret_cast<const VecT*>(x);
    VecT* gv = reinterpret_cast<VecT*>(grad_x);
    const VecT a = xv[ia];
    const VecT b = xv[ia + ix.dv];
    const VecT g = reinterpret_cast<const VecT*>(grad_out)[i];
    // Every input is converted before the sigmoids: converted after them,
    // ptxas issued the b and g loads only once a's sigmoids were done (two
    // memory latencies in a row, up to 6% slower even at DRAM-bound sizes).
    A af[V], bf[V], gf[V], s[V];
#pragma unroll
    for (int k = 0; k < V; ++k) {
      af[k] = to_acc<A>(a.v[k]);
      bf[k] = to_acc<A>(b.v[k]);
      gf[k] = to_acc<A>(g.v[k]);
    }
    sigmoid_vec<true>(af, s);
    VecT ga, gb;
#pragma unroll
    for (int k = 0; k < V; ++k) {
      ga.v[k] = Cast<T>::from(gf[k] * bf[k] * s[k] * (A(1) + af[k] * (A(1) - s[k])));
      gb.v[k] = Cast<T>::from(gf[k] * af[k] * s[k]);
    }
    gv[ia] = ga;
    gv[ia + ix.dv] = gb;
  }
}

// One thread per work item, up to 2^21 blocks (2^29 threads); the
// grid-strided loop covers larger launches (the misaligned, one-element
// launches of about 2^30 items in test_cuda_either_side_of_the_index_width_switch
// take it). The largest sweep launch, 65536 x 16384 float32 in 8-byte vectors
// (the backward; the forward too where the DRAM is slow), is 2^21 blocks.
// Capped at 65536 blocks, the loop made 65536-row launches up to 3.5% slower
// on an H100 (fp32 backward 65536 x 16384: 7300.6 -> 7045.2 us, bf16
// forward 65536 x 16384: 2148.5 -> 2101.3; NOTES.md, v16), where
// torch.compile's one pass over the tensor was ahead. Index32 stays in 32
// bits: fewer than 2^30 items, so i + stride < 2^30 + 2^29.
int grid_for(int64_t work_items) {
  constexpr int64_t kMaxBlocks = int64_t{1} << 21;
  const int64_t blocks = (work_items + kThreads - 1) / kThreads;
  return static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(blocks, kMaxBlocks)));
}

// The width of a launch, by its count of 16-byte vectors: on an H100 shapes
// with the same count measured within 2% of each other whatever their rows and
// hidden, but the best width differs by direction and dtype. Measured there
// (benchmarks/NOTES.md, v17) and, past kWideMaxVectors, on an H200 (v35);
// used on every arch; 4- against 8-byte
// vectors at 1-128 rows, every power of two, and 8- against 16-byte ones:
// - up to 2048 vectors (32 KB of output, bf16 1 x 16384) a launch is a small
//   fraction of a wave and its time is one thread's chain of loads and
//   sigmoids: 4-byte vectors, four times the threads of 16-byte ones with a
//   quarter of the chain each (8-byte ones: 0-4% slower for 16-bit, within 1%
//   either way for float32);
// - 2049-8192: 8-byte vectors (at 4096-8192, 0.2-3.5% faster than 4-byte);
// - 8193-16384: 4-byte vectors again (8-byte ones 0.7-3.3% slower in the
//   backward and 1.6-2.6% in the float32 forward; 0.5-0.9% faster in the
//   16-bit forward);
// - then 8-byte vectors, 16-byte ones beyond the kMidMaxVectors* below: the
//   forward to 131072 (16-bit 128 x 8192: 2.30 against 2.42-2.53 us), the
//   16-bit backward to 65536 (16-byte vectors 2% faster at 131072), the
//   float32 backward to 262144 (8-byte vectors 6-8% faster at 131072-262144);
// - the float32 forward takes 8-byte vectors again at 262145-524288 (0.2-5.7%
//   faster at every such shape in three A/Bs: 512 x 4096 5.07 -> 4.92 us), but
//   not at 131073-262144 (3.3-3.7% slower at three of its shapes) nor at
//   524289-2^20 (1.5-3.1% slower); NOTES.md v28 and v29;
// - past kWideMaxVectors (2^20: 16 MiB of output, 48 MiB with the input,
//   about an H100's L2), 8-byte vectors again for the float32 backward
//   (0.1-0.8% faster on an H100) and, on devices whose DRAM peaks below
//   kFastDramBytesPerSecond, for the forward (0.4-1.3% faster at every such
//   shape of an H100's sweep, 1024-65536 rows); the 16-bit backward keeps
//   16-byte ones (8-byte: -0.2% to +0.3%, slower at 22 of 24 shapes; NOTES.md,
//   v23). On an H200 the forward there is 2.3-9.2% faster in 16-byte vectors
//   at every dtype and shape measured (NOTES.md, v35), presumably because its
//   faster DRAM needs more bytes in flight a thread (not profiled).
// 4-byte launches are at most 65536 threads (256 blocks of kThreads).
constexpr int64_t kNarrowMaxVectors = 2048;
constexpr int64_t kNarrowBandMin = 8192, kNarrowBandMax = 16384;  // (min, max]: narrow
constexpr int64_t kMidMaxVectorsFwd = 131072;
constexpr int64_t kFwd32MidBandMin = 262144, kFwd32MidBandMax = 524288;  // (min, max]: 8-byte
constexpr int64_t kMidMaxVectorsBwd16 = 65536;                           // 16-bit backward
constexpr int64_t kMidMaxVectorsBwd32 = 262144;                          // float32 backward
constexpr int64_t kWideMaxVectors = int64_t{1} << 20;                    // not the 16-bit backward
// Between an H100 SXM's 3.35 TB/s (2619000 kHz, 5120 bits as it reports them;
// 8-byte vectors faster past kWideMaxVectors) and an H200's 4.81 (3201000 kHz,
// 6016 bits; 16-byte ones faster). Only those two were measured: where
// the line falls between them, and what newer, faster devices prefer, is not.
constexpr double kFastDramBytesPerSecond = 4e12;

// Whether the current device's DRAM peaks at kFastDramBytesPerSecond or more
// (memory clock x bus width, two transfers a clock). Asked only by forward
// launches past kWideMaxVectors; a thread-local cache of the last device the
// thread asked about keeps the attribute queries off later launches on it.
bool current_dram_is_fast() {
  thread_local int cached_device = -1;
  thread_local bool cached_fast = false;
  const int device = current_device();
  if (device != cached_device) {
    int clock_khz = 0, bus_bits = 0;
    check_cuda(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrMemoryClockRate, device),
               "cudaDeviceGetAttribute(MemoryClockRate)");
    check_cuda(cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, device),
               "cudaDeviceGetAttribute(GlobalMemoryBusWidth)");
    cached_fast = 2.0 * clock_khz * 1e3 * bus_bits / 8 >= kFastDramBytesPerSecond;
    cached_device = device;
  }
  return cached_fast;
}

enum class Direction { kForward, kBackward };

// Elements per vector for a launch over [rows, d]: 16 bytes where d and every
// pointer allow it (4 or 8 bytes in the bands above), else one element.
template <typename T>
int vector_width(int64_t rows, int64_t d, bool aligned, Direction direction) {
  constexpr int kWide = kVec16<T>;
  if (!aligned || d % kWide != 0) return 1;
  const int64_t vectors = rows * d / kWide;
  if (vectors <= kNarrowMaxVectors) return kNarrow<T>;
  if (vectors > kNarrowBandMin && vectors <= kNarrowBandMax) return kNarrow<T>;
  const int64_t mid_max = direction == Direction::kForward ? kMidMaxVectorsFwd
                          : sizeof(T) == 4                 ? kMidMaxVectorsBwd32
                                                           : kMidMaxVectorsBwd16;
  if (vectors <= mid_max) return kMid<T>;
  if (sizeof(T) == 4 && direction == Direction::kForward && vectors > kFwd32MidBandMin &&
      vectors <= kFwd32MidBandMax) {
    return kMid<T>;
  }
  const bool wide_band_ends = direction == Direction::kForward || sizeof(T) == 4;
  if (!wide_band_ends || vectors <= kWideMaxVectors || kMid<T> == kWide) return kWide;
  const bool stays_wide = direction == Direction::kForward && current_dram_is_fast();
  return stays_wide ? kWide : kMid<T>;
}

// Calls go(std::integral_constant<int, V>) for the width from vector_width.
template <typename T, typename Go>
void with_width(int width, Go&& go) {
  if (width == kVec16<T>) {
    go(std::integral_constant<int, kVec16<T>>{});
  } else if (width == kMid<T>) {
    go(std::integral_constant<int, kMid<T>>{});
  } else if (width == kNarrow<T>) {
    go(std::integral_constant<int, kNarrow<T>>{});
  } else {
    go(std::integral_constant<int, 1>{});
  }
}

// Calls go(V, index space) for x of [rows, 2d] in vectors of `width`
// elements: Index32 where x has fewer than 2^31 elements, else Index64. The
// bound is conservative: Index32 counts vectors, and its math (i + umulhi,
// row * 2 * dv) stays below 2^31 for any x of fewer than 2^31 elements.
template <typename T, typename Go>
void with_launch_shape(int64_t rows, int64_t d, int width, Go&& go) {
  with_width<T>(width, [&](auto v) {
    constexpr int V = decltype(v)::value;
    const int64_t dv = d / V;
    if (rows * 2 * d < (int64_t{1} << 31)) {
      go(v, make_index32(rows * dv, dv));
    } else {
      go(v, Index64{rows * dv, dv});
    }
  });
}

template <typename T>
void launch_fwd(T* out, const T* x, int64_t rows, int64_t d, cudaStream_t stream) {
  const int width = vector_width<T>(rows, d, aligned16(out) && aligned16(x), Direction::kForward);
  with_launch_shape<T>(rows, d, width, [&](auto v, auto ix) {
    constexpr int V = decltype(v)::value;
    if constexpr (sizeof(T) <= 4 && V * sizeof(T) >= 8) {
      silu_and_mul_full_sm_kernel<T, V><<<grid_for(ix.total), kThreads, 0, stream>>>(out, x, ix);
    } else {
      silu_and_mul_kernel<T, V><<<grid_for(ix.total), kThreads, 0, stream>>>(out, x, ix);
    }
  });
  check_launch("silu_and_mul kernel launch");
}

template <typename T>
void launch_bwd(T* grad_x, const T* grad_out, const T* x, int64_t rows, int64_t d,
                cudaStream_t stream) {
  const int width = vector_width<T>(
      rows, d, aligned16(grad_x) && aligned16(grad_out) && aligned16(x), Direction::kBackward);
  with_launch_shape<T>(rows, d, width, [&](auto v, auto ix) {
    constexpr int V = decltype(v)::value;
    silu_and_mul_bwd_kernel<T, V>
        <<<grid_for(ix.total), kThreads, 0, stream>>>(grad_x, grad_out, x, ix);
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
