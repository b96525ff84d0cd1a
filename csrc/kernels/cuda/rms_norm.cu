// RMSNorm, fused residual-add + RMSNorm and their backward on CUDA.
//
// The designs that live here (benchmarks/NOTES.md has the history and
// numbers); launch_fwd and plan_bwd pick by measured speed:
//
// v7, "single-pass" (the forward of both ops for 16-byte aligned rows of up
// to 4096 vectors: bf16/fp16 hidden <= 32768, fp32 <= 16384; the double
// fused add to 2048 vectors): one block per row, every thread issues all its loads, the
// weight's too (but see late_weight_build and latency_late_weight_build),
// before the reduction, so a row
// costs one memory round trip.
// v8 shortened its per-row latency path (a tree sum, the mean by a
// multiply-add) and built it twice: for at most one row per SM, and held to
// its register budget for more rows; both give the same bits.
// v18, "cluster" (sm_90+, a few rows, single-pass blocks of 640 threads or
// more, 512 for the fused add): the single-pass block of a row
// split over a thread block cluster, each warp's sum sent to every block; the
// same bits, up to 40% faster at 1-64 rows. v28-v29 also send it the 16-bit
// fused add's rows of 1024-4096 vectors (blocks of 512+ threads) in batches
// of one wave and a tail (split_a_wave_and_tail).
//
// v6, "two-pass" (forward rows too long for v7): one block per row, nothing
// held across the reduction, the second pass re-reads the row from L2; ~30
// registers, so an SM runs 2048 threads and occupancy covers the latency.
//
// v5, "staged" (backward, sm_80+, 16-byte aligned rows that fit in shared
// memory): a persistent grid; each block walks its rows (blockIdx.x,
// + gridDim.x, ...) through a ring of 2-4 shared-memory stages filled by
// cp.async, so the next rows are in flight while the current one is reduced.
// Bytes in flight are bounded by shared memory (~227 KB per SM) instead of
// registers. Thread t copies and later reads the same 16-byte slots t, t + T,
// ... of every row, so a thread only ever reads shared memory it copied
// itself: waiting for its own cp.async groups is enough, no barrier is needed
// for the data (the block reduction's barriers are the only ones).
//
// v4, "register" (everything else: unaligned or odd hidden; the backward on
// sm_75 and for rows too long to stage): thread t owns the row's 16-byte
// vectors t, t + T, ..., (C-1)T, keeps the row in registers between the
// reduction and the output, and the backward keeps its weight-gradient
// partial sums in registers.
//
// Backward, long fp32 rows (too long to stage): the register kernel at 8
// vectors a thread, the whole row in registers (up to 16384 floats).
// Backward two-pass (double rows too long to stage; C = 8 in registers not
// measured for double): the v6 forward's manner, with the block's dw sums in
// registers.
// Rows longer still take a three-kernel fallback (dx, dw partials, sum).
//
// The weight gradient sums over rows: each block writes one partial row, and
// a second kernel adds the partials in a fixed order (deterministic); a grid
// of one block writes the gradient itself.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <stdexcept>
#include <tuple>
#include <type_traits>

#include "common.cuh"

namespace fusedops::kernels {
namespace cuda {
namespace {

constexpr int kMaxVecsPerThread = 4;
constexpr int kFwdMaxThreads = 512;  // row cached in registers: up to 128 registers
constexpr int kBwdMaxThreads = 512;  // x, dy and dw live in registers: fewer threads

struct RowPlan {
  int vecs_per_thread;  // C
  int threads;          // T
  bool cached;          // nvec <= C * T: the whole row fits in registers
};

// Four 16-byte vectors per thread whenever the row has that many: several
// independent loads in flight per thread is what keeps HBM busy (NOTES.md v2).
RowPlan plan_row(int64_t nvec, int max_threads) {
  int c = kMaxVecsPerThread;
  while (c > 1 && nvec < static_cast<int64_t>(c) * 32) c /= 2;
  const int64_t want = (nvec + c - 1) / c;
  const int threads = static_cast<int>(
      std::min<int64_t>(std::max<int64_t>(((want + 31) / 32) * 32, 32), max_threads));
  return {c, threads, nvec <= static_cast<int64_t>(c) * threads};
}

// What the launch plans need to know about a device, queried once per device.
struct DeviceLimits {
  int cc_major;    // compute capability major: cp.async needs 8
  int smem_optin;  // largest dynamic shared memory a block may opt in to
  int sm_count;
  int l2_bytes;
  int smem_per_sm;         // shared memory an SM holds for its blocks
  int smem_reserved_each;  // what the system takes of it for each block
};

DeviceLimits device_limits(int device) {
  static std::mutex mutex;
  static std::map<int, DeviceLimits> cache;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = cache.find(device);
  if (it != cache.end()) return it->second;
  DeviceLimits d{};
  check_cuda(cudaDeviceGetAttribute(&d.cc_major, cudaDevAttrComputeCapabilityMajor, device),
             "cudaDeviceGetAttribute(ComputeCapabilityMajor)");
  check_cuda(cudaDeviceGetAttribute(&d.smem_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device),
             "cudaDeviceGetAttribute(MaxSharedMemoryPerBlockOptin)");
  check_cuda(cudaDeviceGetAttribute(&d.sm_count, cudaDevAttrMultiProcessorCount, device),
             "cudaDeviceGetAttribute(MultiProcessorCount)");
  check_cuda(cudaDeviceGetAttribute(&d.l2_bytes, cudaDevAttrL2CacheSize, device),
             "cudaDeviceGetAttribute(L2CacheSize)");
  check_cuda(
      cudaDeviceGetAttribute(&d.smem_per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, device),
      "cudaDeviceGetAttribute(MaxSharedMemoryPerMultiprocessor)");
  check_cuda(cudaDeviceGetAttribute(&d.smem_reserved_each, cudaDevAttrReservedSharedMemoryPerBlock,
                                    device),
             "cudaDeviceGetAttribute(ReservedSharedMemoryPerBlock)");
  cache.emplace(device, d);
  return d;
}

// The most dynamic shared memory a kernel may opt in to: the device's per-block
// limit less the kernel's own static shared memory (asking for more is an error).
int max_dynamic_smem(const cudaFuncAttributes& attr, const DeviceLimits& device) {
  return device.smem_optin - static_cast<int>(attr.sharedSizeBytes);
}

int max_dynamic_smem(const void* kernel, int device) {
  cudaFuncAttributes attr{};
  check_cuda(cudaFuncGetAttributes(&attr, kernel), "cudaFuncGetAttributes");
  return max_dynamic_smem(attr, device_limits(device));
}

// A launch of more than 48 KB of dynamic shared memory fails unless the kernel
// was first allowed more (a per-kernel attribute; setting it again, from any
// thread, is harmless): allow the device's opt-in maximum, so that the call
// which plans such a launch also makes it legal.
void allow_dynamic_smem(const void* kernel, int device, int64_t smem_bytes) {
  if (smem_bytes <= 48 * 1024) return;
  check_cuda(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  max_dynamic_smem(kernel, device)),
             "cudaFuncSetAttribute(MaxDynamicSharedMemorySize)");
}

// Resident blocks per SM for a kernel at a block size and dynamic shared
// memory size, cached: the occupancy query is a driver call and the answer
// never changes for a device. The cache is per thread, as resident_clusters':
// the forward asks on every launch of a batch near one wave
// (latency_build_in_one_wave, split_a_wave_and_tail), and a lock there would
// be on that path. Asking also allows the launch (allow_dynamic_smem).
int blocks_per_sm(const void* kernel, int threads, int device, int64_t smem_bytes = 0) {
  thread_local std::map<std::tuple<const void*, int, int, int64_t>, int> cache;
  const auto key = std::make_tuple(kernel, threads, device, smem_bytes);
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  allow_dynamic_smem(kernel, device, smem_bytes);
  int blocks = 0;
  check_cuda(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, threads,
                                                           static_cast<size_t>(smem_bytes)),
             "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
  blocks = std::max(blocks, 1);
  cache.emplace(key, blocks);
  return blocks;
}

// The current device's limits, on every forward launch: a thread-local cache
// of the last device keeps the mutex and map of device_limits off that path.
const DeviceLimits& current_limits() {
  thread_local int cached_device = -1;
  thread_local DeviceLimits cached{};
  const int device = current_device();
  if (device != cached_device) {
    cached = device_limits(device);
    cached_device = device;
  }
  return cached;
}

// Blocks of the kernel resident at once on the current device's sm_count SMs
// (no dynamic shared memory).
int64_t resident_blocks(const void* kernel, int threads, int sm_count) {
  return int64_t{sm_count} * blocks_per_sm(kernel, threads, current_device());
}

int64_t persistent_grid(const void* kernel, int threads, int64_t rows, int sm_count) {
  return std::max<int64_t>(1, std::min<int64_t>(rows, resident_blocks(kernel, threads, sm_count)));
}

// ---- v5: staging plan ------------------------------------------------------
constexpr int kStagedMaxThreads = 512;
constexpr int kMaxStages = 4;  // cp_async_wait dispatches up to 3 pending groups

struct StagedPlan {
  int threads = 0;  // 0: the row does not fit (or no cp.async): use the v4 kernels
  int stages = 0;
  int64_t smem_bytes = 0;
  int blocks_per_sm = 0;
};

// Picks the number of stages that keeps the most bytes in flight per SM.
// While a block works on one row, its other (stages - 1) rows are being
// copied, so an SM has about blocks_per_sm * (stages - 1) * stage_bytes in
// flight; blocks_per_sm comes from the occupancy query with the dynamic
// shared memory size, so it accounts for registers and threads too.
// Ties go to fewer stages (more blocks: more warps to hide the reduction).
// Cached: a launch pays one map lookup, not three occupancy lookups.
StagedPlan plan_staged(const void* kernel, int threads, int64_t stage_bytes, int device) {
  static std::mutex mutex;
  static std::map<std::tuple<const void*, int, int64_t, int>, StagedPlan> cache;
  const auto key = std::make_tuple(kernel, threads, stage_bytes, device);
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = cache.find(key);
    if (it != cache.end()) return it->second;
  }
  StagedPlan best;
  const DeviceLimits d = device_limits(device);
  if (d.cc_major < 8) {  // no cp.async: the v4 kernels are the tested path there
    std::lock_guard<std::mutex> lock(mutex);
    cache.emplace(key, best);
    return best;
  }
  int64_t best_in_flight = 0;
  const int64_t smem_limit = max_dynamic_smem(kernel, device);
  for (int stages = 2; stages <= kMaxStages; ++stages) {
    const int64_t smem = stages * stage_bytes;
    if (smem > smem_limit) break;
    const int blocks = blocks_per_sm(kernel, threads, device, smem);
    const int64_t in_flight = blocks * (stages - 1) * stage_bytes;
    if (in_flight > best_in_flight) {
      best_in_flight = in_flight;
      best = {threads, stages, smem, blocks};
    }
  }
  std::lock_guard<std::mutex> lock(mutex);
  cache.emplace(key, best);
  return best;
}

// One block per row; kernels grid-stride past 2^30 rows.
int64_t row_grid(int64_t rows) { return std::min<int64_t>(rows, int64_t{1} << 30); }

// ---- forward ---------------------------------------------------------------
// One output vector: x * rstd * w per element, in the accumulation type A, rounded
// once to T. Every forward kernel stores through this, so they round alike.
template <typename A, typename T, int V>
__device__ __forceinline__ Vec<T, V> normed(const Vec<T, V>& x, A rstd, const Vec<T, V>& w) {
  Vec<T, V> o;
#pragma unroll
  for (int k = 0; k < V; ++k) o.v[k] = Cast<T>::from(to_acc<A>(x.v[k]) * rstd * to_acc<A>(w.v[k]));
  return o;
}

// Loads of one row for thread threadIdx.x: its C vectors of x (and residual).
template <typename VecT, int C>
__device__ __forceinline__ void load_row(VecT (&xv)[C], VecT (&rv)[C], const VecT* xr,
                                         const VecT* rr, int64_t nvec) {
#pragma unroll
  for (int c = 0; c < C; ++c) {
    const int64_t i = threadIdx.x + static_cast<int64_t>(c) * blockDim.x;
    if (i < nvec) {
      xv[c] = xr[i];
      if (rr != nullptr) rv[c] = rr[i];
    }
  }
}

// One block per row (the grid strides only past 2^30 rows). Each thread
// keeps its C vectors of the row in registers between the reduction and the
// output pass. A persistent variant with the weight held in registers and the
// next row prefetched was slower: it needed more than the 64 registers a
// 1024-thread block allows and spilled; blocks are capped at 512 threads (benchmarks/NOTES.md, v3).
template <typename T, int V, int C>
__global__ void __launch_bounds__(kFwdMaxThreads)
    rms_norm_fwd_kernel(T* __restrict__ out, T* __restrict__ residual_out, const T* __restrict__ x,
                        const T* __restrict__ residual, const T* __restrict__ weight, int64_t rows,
                        int64_t hidden, typename Acc<T>::type eps) {
  using A = typename Acc<T>::type;
  using VecT = Vec<T, V>;
  __shared__ A scratch[32];
  const bool add = residual != nullptr;
  const int64_t nvec = hidden / V;
  const VecT* w = reinterpret_cast<const VecT*>(weight);

  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const VecT* xr = reinterpret_cast<const VecT*>(x + row * hidden);
    VecT xc[C], rc[C];
    load_row<VecT, C>(xc, rc, xr,
                      add ? reinterpret_cast<const VecT*>(residual + row * hidden) : nullptr, nvec);
    A sum_sq = 0;
#pragma unroll
    for (int c = 0; c < C; ++c) {
      const int64_t i = threadIdx.x + static_cast<int64_t>(c) * blockDim.x;
      if (i < nvec) {
        if (add) {
          // residual_out is rounded to the dtype, and the norm is of that value.
#pragma unroll
          for (int k = 0; k < V; ++k) {
            xc[c].v[k] = Cast<T>::from(to_acc<A>(xc[c].v[k]) + to_acc<A>(rc[c].v[k]));
          }
          reinterpret_cast<VecT*>(residual_out + row * hidden)[i] = xc[c];
        }
#pragma unroll
        for (int k = 0; k < V; ++k) {
          const A f = to_acc<A>(xc[c].v[k]);
          sum_sq += f * f;
        }
      }
    }
    sum_sq = block_sum(sum_sq, scratch);
    const A rstd = A(1) / sqrt(sum_sq / static_cast<A>(hidden) + eps);
    VecT* outr = reinterpret_cast<VecT*>(out + row * hidden);
#pragma unroll
    for (int c = 0; c < C; ++c) {
      const int64_t i = threadIdx.x + static_cast<int64_t>(c) * blockDim.x;
      if (i < nvec) {
        const VecT wv = w[i];  // a local, as before: passing w[i] on reorders the V = 1 SASS
        outr[i] = normed(xc[c], rstd, wv);
      }
    }
  }
}

// v6 forward: one block per row, two passes, the second re-reading the row
// from L2. Holding nothing across the reduction keeps registers low (about
// 30), so an SM runs 2048 threads, each with U independent 16-byte loads in
// flight per pass: occupancy, not registers or shared memory, covers the
// memory latency (what ncu showed Triton's kernel doing; benchmarks/NOTES.md).
template <typename T, int V, int U>
__global__ void __launch_bounds__(512)
    rms_norm_fwd_two_pass_kernel(T* __restrict__ out, T* __restrict__ residual_out,
                                 const T* __restrict__ x, const T* __restrict__ residual,
                                 const T* __restrict__ weight, int64_t rows, int64_t hidden,
                                 typename Acc<T>::type eps) {
  using A = typename Acc<T>::type;
  using VecT = Vec<T, V>;
  __shared__ A scratch[32];
  const bool add = residual != nullptr;
  const int64_t nvec = hidden / V;
  const int64_t step = static_cast<int64_t>(blockDim.x) * U;
  const VecT* w = reinterpret_cast<const VecT*>(weight);
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const VecT* xr = reinterpret_cast<const VecT*>(x + row * hidden);
    const VecT* rr = add ? reinterpret_cast<const VecT*>(residual + row * hidden) : nullptr;
    VecT* sr = add ? reinterpret_cast<VecT*>(residual_out + row * hidden) : nullptr;
    VecT* outr = reinterpret_cast<VecT*>(out + row * hidden);
    // Rows here are long (up to 2^31 elements): one thread adds hidden / blockDim.x
    // squares, and a float running sum stops growing once it is 2^24 times the
    // terms. So each iteration's U*V squares are summed in A, then added into a
    // double: an exact enough running sum at one double add per U*V elements.
    double sum_rows = 0;
    for (int64_t base = threadIdx.x; base < nvec; base += step) {
      VecT v[U], r[U];
      A part = 0;
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int64_t i = base + static_cast<int64_t>(u) * blockDim.x;
        if (i < nvec) {
          v[u] = xr[i];
          if (add) r[u] = rr[i];
        }
      }
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int64_t i = base + static_cast<int64_t>(u) * blockDim.x;
        if (i < nvec) {
          if (add) {
#pragma unroll
            for (int k = 0; k < V; ++k)
              v[u].v[k] = Cast<T>::from(to_acc<A>(v[u].v[k]) + to_acc<A>(r[u].v[k]));
            sr[i] = v[u];
          }
#pragma unroll
          for (int k = 0; k < V; ++k) {
            const A f = to_acc<A>(v[u].v[k]);
            part += f * f;
          }
        }
      }
      sum_rows += static_cast<double>(part);
    }
    A sum_sq = static_cast<A>(sum_rows);
    sum_sq = block_sum(sum_sq, scratch);
    const A rstd = A(1) / sqrt(sum_sq / static_cast<A>(hidden) + eps);
    for (int64_t base = threadIdx.x; base < nvec; base += step) {
      VecT v[U], wv[U];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int64_t i = base + static_cast<int64_t>(u) * blockDim.x;
        if (i < nvec) {
          // residual_out[i] was written by this thread in pass 1.
          v[u] = add ? sr[i] : xr[i];
          wv[u] = w[i];
        }
      }
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int64_t i = base + static_cast<int64_t>(u) * blockDim.x;
        if (i < nvec) {
          outr[i] = normed(v[u], rstd, wv[u]);
        }
      }
    }
  }
}

// One vector per thread per step keeps the kernel at ~30 registers (full
// occupancy); unrolling 4 took ~100 registers and was slower (NOTES.md v6).
constexpr int kTwoPassUnroll = 1;

template <typename T, int V>
void launch_fwd_two_pass(T* out, T* residual_out, const T* x, const T* residual, const T* weight,
                         int64_t rows, int64_t hidden, double eps, cudaStream_t stream) {
  using A = typename Acc<T>::type;
  const int64_t nvec = hidden / V;
  const int64_t want = (nvec + kTwoPassUnroll - 1) / kTwoPassUnroll;
  const int threads =
      static_cast<int>(std::min<int64_t>(512, std::max<int64_t>(64, (want + 31) / 32 * 32)));
  rms_norm_fwd_two_pass_kernel<T, V, kTwoPassUnroll>
      <<<static_cast<unsigned>(row_grid(rows)), threads, 0, stream>>>(
          out, residual_out, x, residual, weight, rows, hidden, static_cast<A>(eps));
}

template <typename T, int V>
void launch_fwd_v(T* out, T* residual_out, const T* x, const T* residual, const T* weight,
                  int64_t rows, int64_t hidden, double eps, cudaStream_t stream) {
  const RowPlan plan = plan_row(hidden / V, kFwdMaxThreads);
  using A = typename Acc<T>::type;
  auto go = [&](auto kernel) {
    kernel<<<static_cast<unsigned>(row_grid(rows)), plan.threads, 0, stream>>>(
        out, residual_out, x, residual, weight, rows, hidden, static_cast<A>(eps));
  };
  if (!plan.cached) {
    // Rows too long for registers: the two-pass kernel re-reads them from L2.
    launch_fwd_two_pass<T, V>(out, residual_out, x, residual, weight, rows, hidden, eps, stream);
    return;
  }
  switch (plan.vecs_per_thread) {
    case 1:
      return go(rms_norm_fwd_kernel<T, V, 1>);
    case 2:
      return go(rms_norm_fwd_kernel<T, V, 2>);
    default:
      return go(rms_norm_fwd_kernel<T, V, 4>);
  }
}

// ---- v7 forward: single pass, every load issued up front -------------------
// One block per row. Thread t owns the row's 16-byte vectors t, t + T, ...,
// t + (C-1)T and issues all of its loads (x, the residual, and the weight)
// before it uses any, so a row costs one memory round trip: load, reduce,
// store. v5 and v6 paid two (the weight, or the whole row, was read again
// after the reduction), which made them ~1 us slower than Liger's Triton
// kernel at 1-128 rows (benchmarks/NOTES.md, v7). The vectors stay packed in
// their dtype across the reduction (keep_packed), so a thread holds C * 16
// bytes per input: 32 registers for bf16 with C = 2, full occupancy.
constexpr int kSinglePassMaxThreads = 1024;
// Vectors per thread: 2 (C = 1 and 4 measured slower at most shapes), but 1
// for rows of at most 256 vectors (bf16 hidden 2048: 3-4% faster at 1-128
// rows, equal at larger batches; NOTES.md v7).
constexpr int kSinglePassPreferC = 2;
constexpr int64_t kSinglePassOneVecMax = 256;
// float32 rms_norm rows of at least 1024 vectors (hidden >= 4096): 4 vectors,
// the 16 elements per thread bf16 has at C = 2. Fewer, fuller threads were 3-8%
// faster at 1-128 rows of 4096-16384 and equal at large batches (H100, NOTES.md
// v8). Not for the fused add, whose 4-vector kernel loads its weight late.
constexpr int64_t kFloatFourVecMin = 1024;

// The second level: every lane gets the sum of the num_warps warp sums in
// scratch[parity] (written before the barrier the caller passed).
// kWarps > 0: num_warps is kWarps, a power of two known at compile time.
template <bool kShortSecondLevel, int kWarps, typename A>
__device__ __forceinline__ A block_sum_second_level(A (*scratch)[32], int parity, int num_warps) {
  const int lane = threadIdx.x & 31;
  if constexpr (kWarps > 0) {
    static_assert((kWarps & (kWarps - 1)) == 0 && kWarps >= 2 && kWarps <= 32,
                  "a power of two, 2 to 32");
    A t = scratch[parity][lane & (kWarps - 1)];
#pragma unroll
    for (int offset = kWarps / 2; offset > 0; offset >>= 1) {
      t += __shfl_xor_sync(0xffffffffu, t, offset);
    }
    return t;
  } else if constexpr (kShortSecondLevel) {
    // Only log2(warps) shuffle rounds: lanes are grouped by the warp count rounded
    // up to a power of two, each group holding every warp's sum (padded with
    // zeros). Adding +0 is exact for any partial sum but -0, which sums of
    // squares never are, so the result is bit for bit warp_sum's over the 32
    // lanes; it costs a few registers, hence only where occupancy is moot.
    const int group = 1 << (32 - __clz(num_warps - 1));
    const int j = lane & (group - 1);
    A t = j < num_warps ? scratch[parity][j] : A(0);
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) {
      if (offset < group) t += __shfl_xor_sync(0xffffffffu, t, offset);
    }
    return t;
  } else {
    return warp_sum(lane < num_warps ? scratch[parity][lane] : A(0));
  }
}

// The second level for a warp count read from blockDim (v already summed per warp).
template <bool kShortSecondLevel, typename A>
__device__ __forceinline__ A block_sum_runtime_warps(A v, A (*scratch)[32], int parity) {
  const int num_warps = static_cast<int>(blockDim.x) >> 5;  // blockDim.x % 32 == 0
  if (num_warps == 1) return v;
  if ((threadIdx.x & 31) == 0) scratch[parity][threadIdx.x >> 5] = v;
  __syncthreads();
  return block_sum_second_level<kShortSecondLevel, 0>(scratch, parity, num_warps);
}

// Block sum with one barrier: partial sums alternate between two scratch rows
// (`parity`), so a row's writes never meet the previous row's reads (those
// finished before every thread reached the barrier in between).
// kWarps > 0 is the block's warp count, a power of two known at compile time
// (launch_with_warps): each lane reads warp (lane mod kWarps)'s sum and
// log2(kWarps) shuffle rounds follow, with no branch and no zero padding. The
// rounds are those of the short second level below for the same count, and
// adding the zero padding of the other forms is exact (sums of squares are
// never -0), so all three give the same bits. The GPU tests compare a fixed
// count with the runtime one where the 16-bit fused add's latency build has
// 16 fixed warps and its occupancy build a runtime count (hidden 8192).
template <bool kShortSecondLevel, int kWarps, typename A>
__device__ __forceinline__ A block_sum_one_barrier(A v, A (*scratch)[32], int parity) {
  v = warp_sum(v);
  if constexpr (kWarps > 0) {
    static_assert(kWarps >= 2, "fixed_warps_built builds 4 to 32");
    if ((threadIdx.x & 31) == 0) scratch[parity][threadIdx.x >> 5] = v;
    __syncthreads();
    return block_sum_second_level<kShortSecondLevel, kWarps>(scratch, parity, kWarps);
  } else {
    return block_sum_runtime_warps<kShortSecondLevel>(v, scratch, parity);
  }
}

// The block sum of a C = 4 block that adds in the order of the C = 2 block of
// twice its warps (see sum_squares_halves): warp w's two half sums go where
// warps w and w + warps of that block put theirs, and the second level is
// that block's. Its blocks have at most 16 warps (C = 2 blocks at most 32).
template <int kWarps, typename A>
__device__ __forceinline__ A block_sum_halves(A lo, A hi, A (*scratch)[32], int parity) {
  lo = warp_sum(lo);
  hi = warp_sum(hi);
  const int warps = kWarps > 0 ? kWarps : static_cast<int>(blockDim.x) >> 5;
  if ((threadIdx.x & 31) == 0) {
    scratch[parity][threadIdx.x >> 5] = lo;
    scratch[parity][(threadIdx.x >> 5) + warps] = hi;
  }
  __syncthreads();
  return block_sum_second_level<false, 2 * kWarps>(scratch, parity, 2 * warps);
}

// The first levels of sum_squares_tree: part[c] is the sum of the squares of
// vector c (tid: the thread's place in the row; vectors past it count as zero).
template <bool kPairs, typename A, typename VecT, int C, bool kFull>
__device__ __forceinline__ void squares_per_vector(const VecT (&xv)[C], int nvec, int stride,
                                                   int tid, A (&part)[C]) {
  constexpr int V = sizeof(VecT::v) / sizeof(VecT::v[0]);
  constexpr int kLeaves = kPairs ? V / 2 : V;
#pragma unroll
  for (int c = 0; c < C; ++c) {
    const bool in_row = kFull || tid + c * stride < nvec;
    A q[kLeaves];
#pragma unroll
    for (int k = 0; k < kLeaves; ++k) {
      if constexpr (kPairs) {
        const A a = in_row ? to_acc<A>(xv[c].v[2 * k]) : A(0);
        const A b = in_row ? to_acc<A>(xv[c].v[2 * k + 1]) : A(0);
        q[k] = fma(b, b, a * a);
      } else {
        const A f = in_row ? to_acc<A>(xv[c].v[k]) : A(0);
        q[k] = f * f;
      }
    }
#pragma unroll
    for (int half = kLeaves / 2; half > 0; half /= 2) {
#pragma unroll
      for (int k = 0; k < half; ++k) q[k] += q[k + half];
    }
    part[c] = q[0];
  }
}

// Halving adds across the vectors' sums, down to `sums` of them.
template <int C, typename A>
__device__ __forceinline__ void add_halving(A (&part)[C], int sums) {
#pragma unroll
  for (int half = C / 2; half >= sums; half /= 2) {
#pragma unroll
    for (int c = 0; c < half; ++c) part[c] += part[c + half];
  }
}

// Sum of the squares of a thread's C vectors (those past the row count as zero;
// with kFull there are none),
// added as a tree: within each vector, then across vectors. The tree is about
// log2(C * V) dependent operations deep where a running sum is C * V deep, and
// that chain sits on every row's latency path (1-128 rows of 4096-16384: up to
// 0.3 us less per call on an H100, benchmarks/NOTES.md v8). Two shapes of
// tree, by what the H100 sweep preferred:
// - kPairs (rms_norm): adjacent pairs as a multiply and a fused multiply-add,
//   then halving adds. Fewer values live at once: with squares first, the
//   32-register occupancy build of the 16-bit kernels ran 2-10% slower at
//   1024-65536 rows.
// - otherwise (the fused add, whose C = 2 kernels are not held to 32
//   registers): squares, then halving adds (nvcc contracts the first level
//   into multiply-adds); 2-7% faster than the pairs at 1-16 rows.
// Both builds are compiled with the same flags, so any contraction is the same
// in both.
// Every launch plan of an op, dtype and hidden size adds in the same order, so
// a row's result does not depend on how many rows are in the batch.
// tid: the thread's place in the row (threadIdx.x, but for the cluster kernel).
template <bool kPairs, typename A, typename VecT, int C, bool kFull>
__device__ __forceinline__ A sum_squares_tree(const VecT (&xv)[C], int nvec, int stride, int tid) {
  A part[C];
  squares_per_vector<kPairs, A, VecT, C, kFull>(xv, nvec, stride, tid, part);
  add_halving<C>(part, 1);
  return part[0];
}

// C = 4 in the order of C = 2 at twice the threads: at stride T this thread
// holds vectors t, t + T, t + 2T, t + 3T; the C = 2 block of 2T threads gives
// thread t vectors t, t + 2T and thread t + T vectors t + T, t + 3T. One
// halving level leaves exactly those two threads' sums: lo (part[0]) and hi
// (part[1]). block_sum_halves then adds them as the C = 2 block does.
template <bool kPairs, typename A, typename VecT, bool kFull>
__device__ __forceinline__ void sum_squares_halves(const VecT (&xv)[4], int nvec, int stride,
                                                   int tid, A& lo, A& hi) {
  A part[4];
  squares_per_vector<kPairs, A, VecT, 4, kFull>(xv, nvec, stride, tid, part);
  add_halving<4>(part, 2);
  lo = part[0];
  hi = part[1];
}

// Hides a vector's value from the optimiser. Called after the reduction, it
// makes the compiler keep the packed 16 bytes in registers and convert them
// again for the output, instead of keeping the (for bf16 twice as large)
// converted floats alive across the reduction: without it the bf16 kernel
// with 4 vectors per thread hit the 64-register cap of a 1024-thread block
// and spilled, and with 2 it took 52 registers instead of 32.
template <typename VecT>
__device__ __forceinline__ void keep_packed(VecT& v) {
  static_assert(sizeof(VecT) == 16, "16-byte vectors only");
  uint4& u = reinterpret_cast<uint4&>(v);
  asm volatile("" : "+r"(u.x), "+r"(u.y), "+r"(u.z), "+r"(u.w));
}

// a = a + b, rounded once to T. 16-bit types add packed pairs (one HADD2 per
// two elements; bf16 on sm_80/86 is an HFMA2 by 1.0, on sm_75 the float path
// itself) instead of widening both to float, adding and narrowing: the fused
// add's kernel ran 25% more instructions than Liger's, most of them these
// conversions (ncu, NOTES.md v9); with packed adds it is 1-5% faster at 1-128
// rows of 16-bit. For finite inputs the bits are
// those of Cast<T>::from(float(a) + float(b)), which the other kernels compute
// (signed zeros included; a NaN stays a NaN, its payload unchecked):
// two 16-bit values' float sum is exact unless one is below 2^-15 (bf16) or
// 2^-12 (fp16) of the other, and then it stays too far from a 16-bit rounding
// midpoint for the float rounding to move it onto one, so both round the same.
template <typename T, int V>
__device__ __forceinline__ void add_rounded(Vec<T, V>& a, const Vec<T, V>& b) {
  if constexpr (std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>) {
    using T2 = std::conditional_t<std::is_same_v<T, __half>, __half2, __nv_bfloat162>;
    static_assert(V % 2 == 0, "pairs");
    T2* pa = reinterpret_cast<T2*>(a.v);
    const T2* pb = reinterpret_cast<const T2*>(b.v);
#pragma unroll
    for (int k = 0; k < V / 2; ++k) pa[k] = __hadd2(pa[k], pb[k]);
  } else {
#pragma unroll
    for (int k = 0; k < V; ++k) a.v[k] = a.v[k] + b.v[k];  // float, double: T is the accumulator
  }
}

// 1 / sqrt(mean + eps). float: the hardware reciprocal square root (2 ulp, as
// Triton's and torch.compile's kernels use) instead of a correctly rounded
// sqrt and division, which sit on the latency path of every row; the mean is
// one fused multiply-add by 1/hidden (rounded once, on the host) instead of
// a division.
__device__ __forceinline__ float inv_rms(float sum_sq, float inv_hidden, float eps) {
  return rsqrtf(fmaf(sum_sq, inv_hidden, eps));
}
__device__ __forceinline__ double inv_rms(double sum_sq, double inv_hidden, double eps) {
  return 1.0 / sqrt(fma(sum_sq, inv_hidden, eps));
}

// Two builds of each kernel, chosen by the row count (launch_fwd_single_pass):
// kFewRows for at most one block per SM (and, for most blocks, a batch whose
// blocks of this build all fit at once: latency_build_in_one_wave), where
// latency is all that counts and
// the short second reduction level may take a few more registers; otherwise
// the kernel keeps the register budget it was measured with (32 for C = 1,
// and for C = 2 without the add: full occupancy), which large batches need.
// The two builds add in the same order, so their results are identical.
// Not held here: the 16-bit fused add at C = 2 (sm_90, fp16/bf16: 44/52
// registers in v7, 56 with the v8 tree, measured within 0.3% of v7 at 16384
// rows; 48/52 with v9's packed add), the float32 one (but see
// single_pass_kernel_min_blocks), and double (it spilled at 32 registers).
// ptxas, CUDA 13.0, at 32 registers: no spills on sm_75, sm_86, sm_90 and
// sm_120; the 16-bit rms_norm C = 2 builds spill 4 bytes on sm_80 (those with
// a fixed warp count) and 4-8 bytes on sm_100 (neither measured on such a GPU).
template <typename T, int C, bool kAdd, bool kFewRows>
constexpr int single_pass_min_blocks() {
  return !kFewRows && sizeof(T) <= 4 && (C == 1 || (C == 2 && !kAdd)) ? 2 : 1;
}

// The launch bound's minimum blocks: single_pass_min_blocks, but on sm_80 and
// sm_90 also 2 (32 registers, 38 unheld) for the float32 fused add at C = 2
// in its unchecked occupancy build (hidden 2048, 4096 and 8192) without the
// prefetch, i.e. for batches whose rows the L2 holds: an SM then runs 8 blocks
// of 8 warps instead of 6 (and 2 of 32 warps instead of 1), so 1024 rows of
// 2048, or 256 of 8192, run as one wave instead of a wave and a tail. H100:
// 1024 x 2048 8.16 -> 7.44 us, 256 x 8192 8.88 -> 8.11, 256 x 2048 0.5%
// slower; the prefetching builds, held too, were 0.5-2.9% slower at
// 1024-65536 rows (NOTES.md v21). Measured on sm_90 only; sm_80 is held on
// ptxas's word that it does not spill. sm_100 spilled 4-16 bytes held; sm_75,
// sm_86 and sm_120 cannot hold 2 blocks of 1024 threads an SM.
// The hold follows the arch the code is compiled for: PTX of sm_80/sm_90
// JIT-compiled for a newer GPU keeps it (the release wheels carry PTX only
// for 12.0, compiled unheld).
// FUSEDOPS_HOLD_FLOAT_ADD_C2 differs between nvcc's host and device passes,
// so only a kernel's launch bound may read it (through this function); the
// host's plans (prefetch_built) read single_pass_min_blocks.
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ == 800 || __CUDA_ARCH__ == 900)
#define FUSEDOPS_HOLD_FLOAT_ADD_C2 true
#else
#define FUSEDOPS_HOLD_FLOAT_ADD_C2 false
#endif
template <typename T, int C, bool kAdd, bool kFewRows, bool kFull, bool kPrefetch>
constexpr int single_pass_kernel_min_blocks() {
  if (FUSEDOPS_HOLD_FLOAT_ADD_C2 && sizeof(T) == 4 && kAdd && C == 2 && !kFewRows && kFull &&
      !kPrefetch) {
    return 2;
  }
  return single_pass_min_blocks<T, C, kAdd, kFewRows>();
}
#undef FUSEDOPS_HOLD_FLOAT_ADD_C2

// The re-reading builds' launch bound (kReread, kStreamAdd): two 1024-thread
// blocks an SM (32 registers) on sm_90, the one arch measured with them
// (reread_planned, stream_add_planned); the others keep one
// (sm_75 holds at most 1024 threads an SM, sm_86 and sm_120 1536, so two such
// blocks never fit there; sm_80 and sm_100 could hold two, unmeasured). It
// differs between nvcc's host and device passes, so only a launch bound may read
// it; the host asks the loaded kernel (reread_planned's caller).
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 900
constexpr int kRereadMinBlocks = 2;
#else
constexpr int kRereadMinBlocks = 1;
#endif

// The large-batch forward's L2 prefetch: the block of row r < rows_below asks
// for the bytes of row r + (bytes_ahead / row bytes). Planned only when the
// rows read (x, and the residual for the fused add) exceed the L2: there it
// made the forward up to 6% faster on an H200 (bf16 16384 x 8192: 133.6 ->
// 128.8 us; float32 16384 x 16384: 535.9 -> 515.8), where at 16-32 MB, which
// the L2 holds between calls, it cost up to 14% (NOTES.md, v13). 4 MB of reads
// ahead (2 MB in each of x and the residual for the fused add), at most an
// eighth of the L2. Measured on an H200 and an H100 (1.0-3.6% faster there),
// not on GPUs with small L2s or before sm_80 (plain prefetch there). With
// the kernels of v34 it pays on an H200 only where an SM holds few warps, and
// past_l2_plan launches it only there; the fused add at C = 4 has no
// prefetching build (prefetch_built), and 16-bit rms_norm in C = 2's order
// at C = 4 (halves_planned) none either. rows_below = 0: off.
// demote_from: the first row whose x (and residual) lines an evict_last build
// (kEvictLastX) sets back to evict_normal once summed: the rows whose reads (x,
// and the residual for the fused add) fill the last L2.
struct RowPrefetch {
  int64_t rows_below = 0;
  int64_t bytes_ahead = 0;
  int64_t demote_from = 0;

  static constexpr int64_t kAheadBytes = int64_t{4} << 20;

  // row_bytes: one row of one tensor; tensors: how many are read (1 or 2).
  static RowPrefetch plan(int64_t rows, int64_t row_bytes, int tensors, int64_t l2_bytes) {
    const int64_t read_per_row = row_bytes * tensors;
    if (l2_bytes <= 0 || rows * read_per_row <= l2_bytes) return {};
    const int64_t ahead = std::min(kAheadBytes, l2_bytes / 8);
    const int64_t ahead_rows = std::max<int64_t>(1, ahead / read_per_row);
    const int64_t l2_rows = (l2_bytes + read_per_row - 1) / read_per_row;
    return {rows - ahead_rows, ahead_rows * row_bytes, std::max<int64_t>(0, rows - l2_rows)};
  }
};

// Asks the L2 for the 128-byte line at p: a hint that writes no register (the
// callers keep p inside the tensor). From sm_80 the line is marked
// evict_last, so normal lines go before it until its block reads it (plain
// prefetches a wave ahead lost more than a third of the speed to lines evicted
// before use; NOTES.md, v13).
__device__ __forceinline__ void prefetch_l2(const void* p) {
#if __CUDA_ARCH__ >= 800
  asm volatile("prefetch.global.L2::evict_last [%0];" ::"l"(p));
#else
  asm volatile("prefetch.global.L2 [%0];" ::"l"(p));
#endif
}

// Sets the 128-byte lines holding [p, p + bytes) back to evict_normal, line
// t by thread t, once the block has read them (applypriority takes 128-byte
// aligned addresses: the first line starts at or before p). The block has
// enough threads: a row is at most 64 bytes a thread (4 vectors of 16), so
// its bytes / 128 + 1 lines are at most half the threads plus one.
// Without this the prefetched lines stayed evict_last after the kernel: the
// cache flushes of a benchmark did not move them, later kernels had that much
// less L2, and a kernel timed next on the same x read part of it from the L2
// (on an H100, Liger's rms_norm and a device copy looked 6-7% faster than ours
// at 64 MB reads). With the demote our kernel was 0.2-1.5% faster itself at
// 30 prefetching shapes (NOTES.md, v16).
__device__ __forceinline__ void demote_l2(const void* p, unsigned bytes) {
#if __CUDA_ARCH__ >= 800
  const uintptr_t start = reinterpret_cast<uintptr_t>(p);
  const uintptr_t line = (start & ~uintptr_t{127}) + uintptr_t{threadIdx.x} * 128;
  if (line < start + bytes) {
    asm volatile("applypriority.global.L2::evict_normal [%0], 128;" ::"l"(line));
  }
#endif
}

// A kEvictLastX build's row set back to evict_normal (demote_l2) if it is one of
// the last L2's rows (from demote_from): x's, and the fused add's residual's.
template <bool kAdd, typename T>
__device__ __forceinline__ void demote_row(const T* x, const T* residual, int64_t offset,
                                           int hidden, int64_t row, int64_t demote_from) {
  if (row < demote_from) return;
  demote_l2(x + offset, hidden * sizeof(T));
  if constexpr (kAdd) demote_l2(residual + offset, hidden * sizeof(T));
}

// x past the L2 read as inductor's rms_norm reads it (ncu, NOTES.md v37): a 16-byte
// load whose line the L2 marks evict_last. Why that helps is not measured; our
// reading is that the L2 then evicts the output's dirty lines before x's clean
// ones and writes them back sooner. With that alone the kHalves builds and float32's C = 2 and C =
// 4 builds ran 1.9-4.7% faster past the L2 on an H200 (bf16 65536 x 8192: 522.5
// -> 500.0 us; ncu: the DRAM at 89.5% of its peak instead of 85.6%, the same
// bytes), but left x's last lines pinned: four copies of a 12 MiB buffer after
// it took 25.2 us instead of 23.3 (after float32 16384 x 2048: 24.8 instead of
// 23.6). demote_from sets the rows within one L2 of the end back to
// evict_normal (demote_l2): that kept most of the gain (bf16 65536 x 8192:
// -4.3%) and the copies at 23.3 and 23.7 us, where demoting every row kept at
// most 3.6% (none at 16-bit hidden 16384). The demote waits for the block's
// barrier, so that no other warp's load of the row is still in flight to mark
// a line again: issued before it instead, the times and the copies were the
// same within 0.9% (NOTES.md v38). Registers on sm_90
// (CUDA 13.0): 62 for the kHalves builds instead of 55-56 (8 blocks of 4 warps an
// SM instead of 9 at hidden 4096), the same for float32. Before sm_80 (no cache
// policies) a plain load.
// kL1EvictLast (the kReread build's first read): the line kept in the L1 too,
// for the second read (see load_row_again).
template <bool kL1EvictLast = false, typename VecT>
__device__ __forceinline__ VecT load_evict_last(const VecT* p) {
  static_assert(sizeof(VecT) == 16, "16-byte vectors");
#if __CUDA_ARCH__ >= 800
  uint4 r;
  if constexpr (kL1EvictLast) {
    asm("{\n\t.reg .b64 policy;\n\t"
        "createpolicy.fractional.L2::evict_last.b64 policy, 1.0;\n\t"
        "ld.global.L1::evict_last.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], policy;\n\t}"
        : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
        : "l"(p));
  } else {
    asm("{\n\t.reg .b64 policy;\n\t"
        "createpolicy.fractional.L2::evict_last.b64 policy, 1.0;\n\t"
        "ld.global.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], policy;\n\t}"
        : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
        : "l"(p));
  }
  VecT v;
  memcpy(&v, &r, sizeof(v));
  return v;
#else
  return *p;
#endif
}

// The weight through the read-only path, said rather than inferred: the
// prefetch's asm volatile once cost the weight its inferred ld.global.nc (v13).
// (CUDA 13.0 infers it next to load_evict_last's asm too, which is not
// volatile; the builds measured in v37 load it this way.)
template <typename VecT>
__device__ __forceinline__ VecT load_read_only(const VecT* p) {
  static_assert(sizeof(VecT) == 16, "16-byte vectors");
  const uint4 r = __ldg(reinterpret_cast<const uint4*>(p));
  VecT v;
  memcpy(&v, &r, sizeof(v));
  return v;
}

// The weight as a kEvictLastX build loads it (load_read_only), else plainly.
template <bool kEvictLastX, typename VecT>
__device__ __forceinline__ VecT load_weight(const VecT* p) {
  if constexpr (kEvictLastX) {
    return load_read_only(p);
  } else {
    return *p;
  }
}

// x and the residual read as streamed (kStreamAdd): ld.global.cs, the lines the
// L1 and the L2 evict first, so that the stored residual sum stays in the L2 for
// its second read (see stream_add_planned).
template <typename VecT>
__device__ __forceinline__ VecT load_streaming(const VecT* p) {
  static_assert(sizeof(VecT) == 16, "16-byte vectors");
  const uint4 r = __ldcs(reinterpret_cast<const uint4*>(p));
  VecT v;
  memcpy(&v, &r, sizeof(v));
  return v;
}

// x read a second time for the output (kReread) instead of held in registers
// across the reduction: a plain load, so the line the first read left in the L1
// is found there (the first read's values are dead by then, and the volatile asm
// keeps the compiler from merging the two reads back into one and holding it).
// kL1EvictFirst (past the L2, where the first read was L1::evict_last): the line,
// read for the last time, is the L1's first to go, the rows still to be re-read
// staying (Triton's evict_last / evict_first loads carry these L1 priorities).
template <bool kL1EvictFirst = false, typename VecT>
__device__ __forceinline__ VecT load_row_again(const VecT* p) {
  static_assert(sizeof(VecT) == 16, "16-byte vectors");
  uint4 r;
  if constexpr (kL1EvictFirst) {
    asm volatile("ld.global.L1::evict_first.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
                 : "l"(p));
  } else {
    asm volatile("ld.global.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
                 : "l"(p));
  }
  VecT v;
  memcpy(&v, &r, sizeof(v));
  return v;
}

// The 16-bit 8-warp blocks whose latency build runs unchecked (kFull; see
// fixed_warps_built): the fused add at C = 1 and 2, rms_norm at C = 1.
constexpr bool unchecked_8_warp_block(bool add, int c) { return c == 1 || (add && c == 2); }

// Those kernels guard their weight load. Unchecked, two things the compiler
// did had made them slower than the checked ones (NOTES.md, v20):
// - an unpredicated weight load is the same for every row, so it was hoisted
//   out of the row loop, and ptxas hoisted the weight's unpacking to float
//   after it, ahead of the x and residual loads: those then waited for the
//   weight's L2 round trip. A bound check on the weight load (always true in a
//   full row) keeps the load, and its unpacking, in the loop;
// - under the 1024-thread launch bound (64 registers) ptxas moved one weight
//   load past the sum of squares; the block's own 256 threads let every load
//   issue first.
// Both are the compiler's choices, not guarantees (the guard is loop-invariant
// too): re-read these kernels' SASS when the toolchain changes.
template <typename T, int C, bool kAdd, bool kFewRows, int kWarps, bool kFull>
constexpr bool weight_guarded_build() {
  return sizeof(T) == 2 && kFewRows && kFull && kWarps == 8 && unchecked_8_warp_block(kAdd, C);
}

// Builds that load their weight after the block reduction instead of with x:
// - the fused add at 4 vectors per thread (float32 rows of 8K-16K, 16-bit
//   rows of 16K-32K), which holds three inputs: the late weight keeps it
//   under the 64 registers of a 1024-thread block (float32 spilled on sm_120
//   otherwise);
// - float32 rms_norm's unchecked latency kernels at 4 vectors and 8 or 16
//   warps (hidden 4096 and 8192). Loaded with x, the weight's loads issue
//   first (their address needs no row) and the x loads after them; loaded
//   after the reduction, the weight measured faster. H100, 1-128 rows, three
//   runs: faster at 14 of 16 shapes by 0.4-2.5% (9 of them by more than the
//   0.9% the unchanged kernels moved; 128 x 4096: 2.73 -> 2.66 us), level at
//   4 x 4096, 0.6% slower at 64 x 8192 (NOTES.md v21). Why is not
//   established: an always-true guard on the weight load that depends on the
//   row, which put the x loads first and the weight's before the barrier, was
//   level for float32 (and up to 8% slower for 16-bit), so the x loads' head
//   start is not the gain. At 32 warps (hidden 16384) and for 16-bit kernels
//   the late weight was slower (v15, an H100, an older kernel, 1-128 rows; on
//   sm_90+ fp16 and float32 take it there: latency_late_weight_build). Measured
//   on sm_90 only, built for every
//   arch. The order is ptxas's: after the barrier the load stays put, but
//   re-read the SASS when the toolchain changes.
template <typename T, int C, bool kAdd, bool kFewRows, int kWarps, bool kFull>
constexpr bool late_weight_build() {
  if (kAdd) return C == 4;
  return sizeof(T) == 4 && C == 4 && kFewRows && kFull && (kWarps == 8 || kWarps == 16);
}

// The latency blocks of full rows that load their weight late as well, on
// sm_90+:
// - the fused add at 2 vectors a thread: 16-bit at 16 and 32 warps (hidden 8192
//   and 16384), float32 at 32 (hidden 8192). Loaded with x, the weight's loads
//   issued first and were held across the reduction (16-bit: 58-59 registers
//   on sm_90); loaded late, ptxas issues them after x's and the residual's,
//   still ahead of the block's barrier (the weight is read-only), at 48-51
//   registers (float32 38 either way);
// - rms_norm's 32-warp blocks (hidden 16384) in fp16 and float32, not bf16
//   (sm_90 registers: fp16 56 -> 45, float32 55 -> 63).
// Unlike late_weight_build's kernels these keep the latency build for a batch
// of one wave of blocks past one an SM (latency_build_in_one_wave): 256 rows of
// 8192 were among the fused add's gains. Each measured on an H200, the two
// builds taking turns in three call patterns (same tensors, rotating, with a
// consumer), bits checked:
// - v43 (NOTES.md v43), the fused add at hidden 8192: 128 and 256 rows 1.7-6.6%
//   faster in 16-bit, 128 rows 0.9-1.7% in float32 (at 256 rows its
//   1024-thread blocks are past one wave); the unchanged controls moved at most
//   0.5%.
// - v44 (NOTES.md v44), the fused add's 16-bit 32-warp blocks at 72, 96, 128
//   and 132 rows (24 cells, 27 measurements): faster in all, by 0.1-3.3% in
//   bf16 and 1.1-4.5% in fp16, 25 by more than 1%; the controls moved at most
//   0.5%.
// - v45 (NOTES.md v45), rms_norm's 32-warp blocks at the same rows (exp77, two
//   rounds; % from its CSV): fp16 0.1-2.8% faster in all 12 cells (against
//   Liger, from up to 3.4% behind to at most 1.5%); float32 0.1-4.6% faster
//   rotating and with a consumer, 0.0-0.5% slower on the same tensors (small,
//   but in all 4 cells, and 0.8% in a sweep); bf16 slower in 11 of 12
//   cells, by up to 2.8%, so it keeps the weight early. The controls moved at
//   most 0.5%. In sweeps at hidden 16384 beside v44's: 128 rows fp16
//   1.7-2.9% faster, float32 1.4-1.6% rotating and 0.8% slower on the same
//   tensors, where the unchanged rows moved -1.6 to +0.9%.
// - Kept early: the guarded 8-warp blocks (hidden 4096: the late weight, in the
//   runtime-warp-count build, 0.2-12.6% slower, v43); the fused add's float32
//   at 8 and 16 warps (hidden 2048-4096), a trade (v44: 2.8-2.9% slower on the
//   same tensors, 0.4-1.2% faster rotating and 0.6-0.9% with a consumer);
//   rms_norm's other latency blocks (bf16 512 x 4096 1.9-3.9% slower, v44).
//   Outside this rule, v44 found the cluster kernel 5-39% slower with the
//   weight late.
// sm_90+ only, where few rows run as clusters: on a 132-SM H200 1-66 rows do,
// and these blocks take 67-264 rows (the fused add's 16-bit 8192), 67-132 (the
// 1024-thread blocks: 16384, and the fused add's float32 8192). Below sm_90
// every latency batch from 1 row would take them, and v15 (H100, an older
// kernel, the same tensors) had the late weight at the fused add's 16-bit
// hidden 8192 8-11% slower at 1-16 rows and 3-6% at 128. An H100 runs this
// sm_90 code, unmeasured since (v15's loss at 128 rows is inside its range); so
// are sm_100 and sm_120, and an sm_90 device whose clusters do not fit (a MIG
// slice). The value differs between nvcc's host and device passes, so only
// device code may read it.
template <typename T, int C, bool kAdd, bool kFewRows, int kWarps, bool kFull>
constexpr bool latency_late_weight_build() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
  return false;
#else
  if (!kFewRows || !kFull) return false;
  if (kAdd) {
    return C == 2 &&
           ((sizeof(T) == 2 && (kWarps == 16 || kWarps == 32)) || (sizeof(T) == 4 && kWarps == 32));
  }
  return kWarps == 32 &&
         ((std::is_same_v<T, __half> && C == 2) || (std::is_same_v<T, float> && C == 4));
#endif
}

template <typename T, int C, bool kAdd, bool kFewRows, int kWarps, bool kFull>
constexpr int single_pass_max_threads() {
  return weight_guarded_build<T, C, kAdd, kFewRows, kWarps, kFull>() ? kWarps * 32
                                                                     : kSinglePassMaxThreads;
}

// The grid is min(rows, 2^30) blocks, so every block has a first row: the
// loop tests the bound only after it, and the first loads do not wait for it.
// kPrefetch (large-batch builds, launched when RowPrefetch::plan says so):
// after issuing its own loads, the block of a row below prefetch.rows_below
// asks the L2 for the x (and residual) row prefetch.bytes_ahead further on,
// one line per thread, which keeps more DRAM reads in flight than the
// resident blocks' own loads do; once its own row is read it sets that row's
// lines back to evict_normal (demote_l2). A build of its own, so that launches without
// it run the kernel as it was: the inline asm costs the weight its inferred
// ld.global.nc and moves loads, which made rows held in L2 up to 10% slower
// (NOTES.md, v13).
// kWarps: the block's warp count when it is fixed at compile time (see
// launch_with_warps), else 0 (read from blockDim). kFull: every thread's C
// vectors are in the row, so nothing is bounds-checked (fixed_warps_built).
// kHalves: C = 4 adding in the order of C = 2 at twice the threads
// (sum_squares_halves), so a plan may run a C = 2 row as either.
// kEvictLastX (past the L2, evict_last_x_planned): x, and the fused add's
// residual, read evict_last (load_evict_last); rows from prefetch.demote_from
// set back to normal once every warp of the block has read them.
// kReread (reread_planned: float32 rms_norm in full 1024-thread blocks): x read
// again for the output (load_row_again) instead of held across the reduction,
// and the weight loaded then, so a block fits 32 registers and an SM holds two;
// its evict_last rows are set back to normal after the second read.
// kStreamAdd (stream_add_planned: the 16-bit fused add in 1024-thread rows, a call
// moving 3/4 to 7/4 of the L2): x and the residual read as streamed
// (load_streaming), the stored residual sum read again for the output instead of
// held across the reduction, and the weight loaded then, so a block fits 32
// registers and an SM holds two.
template <typename T, int C, bool kAdd, bool kFewRows, int kWarps, bool kFull, bool kPrefetch,
          bool kHalves = false, bool kEvictLastX = false, bool kReread = false,
          bool kStreamAdd = false>
__global__ void __launch_bounds__(
    single_pass_max_threads<T, C, kAdd, kFewRows, kWarps, kFull>(),
    kReread || kStreamAdd ? kRereadMinBlocks
                          : single_pass_kernel_min_blocks<T, C, kAdd, kFewRows, kFull, kPrefetch>())
    rms_norm_fwd_single_pass_kernel(T* __restrict__ out, T* __restrict__ residual_out,
                                    const T* __restrict__ x, const T* __restrict__ residual,
                                    const T* __restrict__ weight, int64_t rows, int hidden,
                                    typename Acc<T>::type inv_hidden, typename Acc<T>::type eps,
                                    RowPrefetch prefetch) {
  using A = typename Acc<T>::type;
  constexpr int V = kVec16<T>;
  using VecT = Vec<T, V>;
  constexpr bool kEarlyWeight = !kReread && !kStreamAdd &&
                                !late_weight_build<T, C, kAdd, kFewRows, kWarps, kFull>() &&
                                !latency_late_weight_build<T, C, kAdd, kFewRows, kWarps, kFull>();
  constexpr bool kGuardWeight = weight_guarded_build<T, C, kAdd, kFewRows, kWarps, kFull>();
  static_assert(!kReread || (sizeof(T) == 4 && C == 4 && !kAdd && !kFewRows && kWarps == 32 &&
                             kFull && !kPrefetch && !kHalves),
                "float32 rms_norm rows of full 1024-thread blocks (reread_planned)");
  // The guard tests threadIdx.x, not each vector's index: it is there for the
  // compiler (weight_guarded_build), and only a full row may skip the checks.
  static_assert(!kGuardWeight || (kFull && kEarlyWeight && kWarps > 0));
  static_assert(!kHalves || (C == 4 && kWarps <= 16), "C = 2 blocks of up to 32 warps");
  static_assert(!kEvictLastX || (!kPrefetch && !kFewRows && (!kAdd || C <= 2)), "past the L2");
  static_assert(!kStreamAdd || (kAdd && sizeof(T) == 2 && C == 2 && kWarps == 32 && !kFewRows &&
                                !kPrefetch && !kHalves && !kEvictLastX && !kReread),
                "the 16-bit fused add in 1024-thread rows (stream_add_planned)");
  __shared__ A scratch[2][32];
  const int nvec = hidden / V;
  const int stride = kWarps > 0 ? kWarps * 32 : static_cast<int>(blockDim.x);
  const VecT* w = reinterpret_cast<const VecT*>(weight);
  int parity = 0;
  int64_t row = blockIdx.x;
  do {
    const int64_t offset = row * hidden;
    const VecT* xr = reinterpret_cast<const VecT*>(x + offset);
    VecT xv[C], rv[C], wv[C];
#pragma unroll
    for (int c = 0; c < C; ++c) {
      const int i = threadIdx.x + c * stride;
      if (kFull || i < nvec) {
        if constexpr (kStreamAdd) {
          xv[c] = load_streaming(xr + i);
        } else {
          xv[c] = kEvictLastX ? load_evict_last</*kL1EvictLast=*/kReread>(xr + i) : xr[i];
        }
        if constexpr (kAdd) {
          const VecT* rr = reinterpret_cast<const VecT*>(residual + offset);
          if constexpr (kStreamAdd) {
            rv[c] = load_streaming(rr + i);
          } else {
            rv[c] = kEvictLastX ? load_evict_last(rr + i) : rr[i];
          }
        }
        if constexpr (kEarlyWeight && !kGuardWeight) {
          wv[c] = load_weight<kEvictLastX>(w + i);
        }
      }
      if constexpr (kGuardWeight) {
        if (static_cast<int>(threadIdx.x) < nvec) {  // always: the row is full
          wv[c] = load_weight<kEvictLastX>(w + i);
        }
      }
    }
    if constexpr (kPrefetch) {
      // A row has fewer 128-byte lines than the block has threads (at most 4
      // vectors of 16 bytes a thread): one prefetch per thread and tensor.
      const unsigned line = threadIdx.x * 128u;
      if (row < prefetch.rows_below && line < hidden * sizeof(T)) {
        prefetch_l2(reinterpret_cast<const char*>(xr) + prefetch.bytes_ahead + line);
        if constexpr (kAdd) {
          prefetch_l2(reinterpret_cast<const char*>(residual + offset) + prefetch.bytes_ahead +
                      line);
        }
      }
    }
    if constexpr (kAdd) {
#pragma unroll
      for (int c = 0; c < C; ++c) {
        const int i = threadIdx.x + c * stride;
        if (kFull || i < nvec) {
          // residual_out is rounded to the dtype, and the norm is of that value.
          add_rounded(xv[c], rv[c]);
          reinterpret_cast<VecT*>(residual_out + offset)[i] = xv[c];
          keep_packed(xv[c]);  // the rounded sum, re-read as stored
        }
      }
    }
    A sum_sq{};
    A sum_hi{};  // kHalves: the second half's sum
    if constexpr (kHalves) {
      sum_squares_halves</*kPairs=*/!kAdd, A, VecT, kFull>(
          xv, nvec, stride, static_cast<int>(threadIdx.x), sum_sq, sum_hi);
    } else {
      sum_sq = sum_squares_tree</*kPairs=*/!kAdd, A, VecT, C, kFull>(xv, nvec, stride,
                                                                     static_cast<int>(threadIdx.x));
    }
    if constexpr (kPrefetch) {
      // The row's loads are done (their values summed): its lines, which a
      // block further back prefetched as evict_last, go back to normal.
      const unsigned row_bytes = hidden * sizeof(T);
      demote_l2(xr, row_bytes);
      if constexpr (kAdd) demote_l2(residual + offset, row_bytes);
    }
    if constexpr (kHalves) {
      sum_sq = block_sum_halves<kWarps>(sum_sq, sum_hi, scratch, parity);
    } else {
      sum_sq = block_sum_one_barrier<kFewRows, kWarps>(sum_sq, scratch, parity);
    }
    if constexpr (kEvictLastX && !kReread) {
      // Every warp's evict_last loads of the row have returned by now (their
      // squares are summed across the block: a barrier, or a one-warp block's
      // shuffles), so no load still in flight can mark a demoted line again.
      demote_row<kAdd>(x, residual, offset, hidden, row, prefetch.demote_from);
    }
    const A rstd = inv_rms(sum_sq, inv_hidden, eps);
    VecT* outr = reinterpret_cast<VecT*>(out + offset);
#pragma unroll
    for (int c = 0; c < C; ++c) {
      const int i = threadIdx.x + c * stride;
      if (kFull || i < nvec) {
        if constexpr (kReread) xv[c] = load_row_again</*kL1EvictFirst=*/kEvictLastX>(xr + i);
        if constexpr (kStreamAdd) {
          // The sum this thread stored above: the volatile asm (so the compiler
          // neither forwards the stored registers nor drops the load) stays after
          // the store, as neither moves across the reduction's barrier.
          xv[c] = load_row_again(reinterpret_cast<const VecT*>(residual_out + offset) + i);
        }
        keep_packed(xv[c]);
        if constexpr (kEarlyWeight) {
          keep_packed(wv[c]);
        } else {
          wv[c] = load_weight<kEvictLastX>(w + i);
        }
        outr[i] = normed(xv[c], rstd, wv[c]);
      }
    }
    // After the second read too, which then still finds the row evict_last (the
    // order measured, NOTES.md v39; the second read is plain and marks nothing).
    if constexpr (kEvictLastX && kReread) {
      demote_row<kAdd>(x, residual, offset, hidden, row, prefetch.demote_from);
    }
    row += gridDim.x;
    parity ^= 1;
  } while (row < rows);
}

// ---- few long rows: one row across a cluster of blocks (sm_90+) -----------
// At a few rows the single-pass kernel runs one block per row on as many SMs,
// and one SM moves the whole row (cluster_split has the numbers).
// Here the row's block of the single-pass plan (its threads, C vectors each)
// is split over the K blocks of a thread block cluster (on their own SMs at a
// few rows; split_a_wave_and_tail's batches put several on one SM):
// block r holds threads [r T/K, (r+1) T/K) of it, so every thread loads and
// sums the same vectors as in the single-pass kernel, and the warps' sums are
// added in that kernel's order (its second level, block_sum_runtime_warps,
// for the same warp count): a row gets the same bits in any launch plan.
// Each warp sends its sum to every block of the cluster (st.async into the
// block's shared memory, counted by its mbarrier), so no block reads another's
// memory and none has to wait for the others before it exits. The cluster
// barrier only orders the mbarriers' setup before the first send; its arrive
// is issued before the loads, so the wait after them costs next to nothing.
// (A release/acquire cluster barrier between the sums and their reads cost
// 0.4-0.8 us a launch on an H100, the exchange here 0.24-0.37; NOTES.md v18.)
// Every block loads its weight with its x (unlike the single-pass fused add at
// C = 4): its blocks are half the row's threads or fewer (a 512-thread launch
// bound), so it has the registers (70-72 for the 16-bit fused add at C = 4 on
// sm_90+, CUDA 13.0).
__device__ __forceinline__ unsigned cluster_rank() {
  unsigned r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}
__device__ __forceinline__ unsigned cluster_blocks() {
  unsigned n;
  asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(n));
  return n;
}
__device__ __forceinline__ unsigned shared_address(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// The cluster shape is part of the kernel (__cluster_dims__: a launch a little
// faster than one that sets it at run time), for the archs that have clusters;
// for the others the kernel is a stub that traps. A build without sm_90+ code
// (say 8.0+PTX on an H100) runs that stub on an sm_90+ GPU: clusters_fit
// checks the loaded kernel's cluster width, so the plan never launches it.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define FUSEDOPS_CLUSTER_DIMS(k) __cluster_dims__(k, 1, 1)
#else
#define FUSEDOPS_CLUSTER_DIMS(k)
#endif

template <typename T, int C, bool kAdd, int K>
// At most 512 threads a block (K >= 2), one block an SM: the register cap is
// ptxas's to choose up to 128 (without the minimum, sm_100 held the bf16 C = 2
// kernel to 32 registers and spilled).
__global__ void FUSEDOPS_CLUSTER_DIMS(K) __launch_bounds__(kSinglePassMaxThreads / 2, 1)
    rms_norm_fwd_cluster_kernel(T* __restrict__ out, T* __restrict__ residual_out,
                                const T* __restrict__ x, const T* __restrict__ residual,
                                const T* __restrict__ weight, int hidden, int row_threads,
                                float inv_hidden, float eps) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  static_assert(!std::is_same_v<T, double>, "float accumulation");
  // Launched without its cluster the mbarrier would wait forever: fail instead.
  if (cluster_blocks() != K) __trap();
  constexpr int V = kVec16<T>;
  using VecT = Vec<T, V>;
  __shared__ float warp_sums[32];
  __shared__ alignas(8) uint64_t received;  // mbarrier: every warp's sum has arrived
  const int warps = row_threads >> 5;
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(shared_address(&received)));
    asm volatile(
        "mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(shared_address(&received)),
        "r"(warps * 4));
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory");
  const unsigned rank = cluster_rank();
  const int tid = static_cast<int>(rank * blockDim.x + threadIdx.x);
  const int nvec = hidden / V;
  const int64_t offset = static_cast<int64_t>(blockIdx.x / K) * hidden;
  const VecT* xr = reinterpret_cast<const VecT*>(x + offset);
  const VecT* w = reinterpret_cast<const VecT*>(weight);
  VecT xv[C], rv[C], wv[C];
#pragma unroll
  for (int c = 0; c < C; ++c) {
    const int i = tid + c * row_threads;
    if (i < nvec) {
      xv[c] = xr[i];
      if constexpr (kAdd) rv[c] = reinterpret_cast<const VecT*>(residual + offset)[i];
      wv[c] = w[i];
    }
  }
  if constexpr (kAdd) {
#pragma unroll
    for (int c = 0; c < C; ++c) {
      const int i = tid + c * row_threads;
      if (i < nvec) {
        add_rounded(xv[c], rv[c]);
        reinterpret_cast<VecT*>(residual_out + offset)[i] = xv[c];
      }
    }
  }
  const float sum_sq = warp_sum(
      sum_squares_tree</*kPairs=*/!kAdd, float, VecT, C, false>(xv, nvec, row_threads, tid));
  const int lane = threadIdx.x & 31;
  asm volatile("barrier.cluster.wait.aligned;" ::: "memory");  // every mbarrier is set up
  if (lane < K) {               // lane r sends this warp's sum to block r
    const int slot = tid >> 5;  // the warp's place in the row's block
    unsigned to, bar;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;"
                 : "=r"(to)
                 : "r"(shared_address(&warp_sums[slot])), "r"(lane));
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;"
                 : "=r"(bar)
                 : "r"(shared_address(&received)), "r"(lane));
    asm volatile(
        "st.async.shared::cluster.mbarrier::complete_tx::bytes.b32 [%0], %1, [%2];" ::"r"(to),
        "r"(__float_as_uint(sum_sq)), "r"(bar)
        : "memory");
  }
  unsigned arrived = 0;
  while (!arrived) {
    asm volatile(
        "{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0; selp.u32 %0, 1, 0, "
        "p; }"
        : "=r"(arrived)
        : "r"(shared_address(&received))
        : "memory");
  }
  // The second level of block_sum_runtime_warps<true>: lane j holds warp j's
  // sum (zero past the row's warps), log2(group) rounds.
  const int group = 1 << (32 - __clz(warps - 1));
  const int j = lane & (group - 1);
  float t = j < warps ? warp_sums[j] : 0.0f;
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    if (o < group) t += __shfl_xor_sync(0xffffffffu, t, o);
  }
  const float rstd = inv_rms(t, inv_hidden, eps);
  VecT* outr = reinterpret_cast<VecT*>(out + offset);
#pragma unroll
  for (int c = 0; c < C; ++c) {
    const int i = tid + c * row_threads;
    if (i < nvec) {
      outr[i] = normed(xv[c], rstd, wv[c]);
    }
  }
#else
  __trap();
#endif
}
#undef FUSEDOPS_CLUSTER_DIMS

// Most vectors per thread the single-pass kernel takes: 4, but 2 for the
// fused add of double (its third input spills at 4). Longer rows take the
// two-pass kernel. The 16-bit fused add at 4 (rows of 2049-4096 vectors,
// hidden 16392-32768; the weight loaded late) once spilled too; with CUDA
// 13.0 ptxas it fits in 61-64 registers with no stack on sm_75 to sm_120
// (sm_90+ cluster kernels: 64 fp16, 70-72 bf16). Against the two-pass kernel
// it took there before, on an H100 at 1-65536 rows of hidden 18432-32768
// (NOTES.md v27): faster at 82 of 88 shapes, by 1.7-62% (1 x 32768 bf16:
// 6.98 -> 2.67 us; 65536 x 32768: 19% less), but slower at 256 rows: 16-17%
// at hidden 18432, 10% at 20480, 3-4% at 24576 (not profiled; its registers
// allow one block an SM, but so at 32768, where 256 rows ran 7% faster).
// Such batches of one to two times the SMs now run split over 2-block
// clusters where split_a_wave_and_tail says so.
template <typename T>
constexpr int single_pass_max_c(bool add) {
  return add && sizeof(T) == 8 ? 2 : 4;
}

template <typename T>
bool single_pass_fits(int64_t nvec, bool add) {
  return nvec <= int64_t{single_pass_max_c<T>(add)} * kSinglePassMaxThreads;
}

// The warp counts a block of C vectors per thread can have, as
// launch_fwd_single_pass sizes it: C = 1 takes rows of at most 256 vectors
// (up to 8 warps); C = 2 longer ones (from 8 warps; float32 rms_norm only
// below 1024 vectors, where just 512 fill a block: 8 warps, what its kFull-only
// builds need); C = 4 float32 rms_norm rows of 1024 vectors or more (from 8)
// and other rows of more than 2048 (32).
template <typename T, int C, bool kAdd>
constexpr bool warps_reachable(int warps) {
  const bool float_norm = sizeof(T) == 4 && !kAdd;
  if (C == 1) return warps <= 8;
  if (C == 2) return warps >= 8 && (!float_norm || warps == 8);
  return warps >= (float_norm ? 8 : 32);
}

// The kernels are also built for blocks of 4, 8, 16 and 32 warps with the
// warp count fixed at compile time: the row stride is a constant and the
// second reduction level has no branch per round (the harness's bf16 C = 2
// kernel: 288 -> 256 SASS instructions). Measured on an H100 as wheels,
// 1-1024 rows:
// - 16-bit (NOTES.md, v10; the blocks of power-of-two hidden 1024-32768):
//   rms_norm 1.2-7.9% faster at 31 of 32 shapes (bf16 128x16384 1.1% slower);
//   the fused add faster at hidden 2048 and 16384 but 1-4.5% slower at 1-16
//   rows of 4096 and 8192 (C = 2 with 8 or 16 warps), which keep the runtime
//   count, except the unchecked 8- and 16-warp latency builds below.
// - float32 (NOTES.md, v11), C = 2 and 4 only (power-of-two hidden
//   2048-16384), and only for rows that fill the block exactly (vectors == C x
//   threads), built without per-vector bounds checks as well (kFull): the
//   checks are a select per element and a branch region per vector, which a
//   latency-bound small batch pays in full (sm_90 SASS 5-27% shorter).
//   1.0-5.8% faster than the bounds-checked runtime-count kernel at 20 of 32
//   shapes, one 1.4% slower (the fused add at 1 x 8192). The fixed count alone
//   was slower at some shapes (harness, v10); C = 1 (hidden 512 and 1024) was
//   not measured, so it keeps the checked kernel. kFull with a runtime count is
//   not built: it spilled 16 bytes on sm_100 (fused add, C = 4) and no such
//   block was measured.
// - 16-bit kernels are built with kFull only in the latency build (one
//   block an SM, not held to 32 registers), and only where that measured
//   faster (H100):
//   - the fused add at C = 2 with 16 or 32 warps and rms_norm at C = 2 with
//     32 (v19): 1.2-4.0% faster at 128 rows of hidden 8192-16384. At fewer
//     rows an sm_90+ GPU runs those blocks as clusters; other archs there are
//     unmeasured;
//   - 8-warp blocks, the fused add at C = 1 and 2 and rms_norm at C = 1
//     (v20, with the weight's bound check and 256-thread launch bound of
//     weight_guarded_build): the fused add 1.2-5.2% faster at 1-128 rows of
//     hidden 4096 and up to 2.2% at 2048, rms_norm at 2048 level or up to 1.5%
//     faster. Built that way, rms_norm at C = 2 was slower at 1-128 rows
//     (8 warps, hidden 4096: 0.3-3.7%; 16 warps, 8192: 4.2-6.8%), and with
//     the guard v19's blocks were up to 3.5% slower at 128 rows, so they
//     keep v19's builds.
//   Without the guard every other block was slower unchecked at 1-64 rows,
//   by up to 12.5% (bf16 rms_norm 2 x 8192, v19); C = 4 spilled at 1024
//   threads; and the occupancy builds spilled 48-64 bytes at their register
//   caps and ran up to 2.2x slower at 1024 rows (v11).
// Everything else (double, other warp counts, float32 rows with threads past
// the row or at C = 1) reads blockDim and checks bounds.
template <typename T, int C, bool kAdd, bool kFull, bool kFewRows>
constexpr bool fixed_warps_built(int warps) {
  if (!warps_reachable<T, C, kAdd>(warps)) return false;
  if (sizeof(T) == 4) return kFull && C >= 2;
  if (sizeof(T) != 2) return false;
  if (kFull) {
    return kFewRows && ((C == 2 && warps >= (kAdd ? 16 : 32)) ||
                        (warps == 8 && unchecked_8_warp_block(kAdd, C)));
  }
  return !(kAdd && C == 2 && (warps == 8 || warps == 16));
}

// If the block has kWarps warps: launches the kFull build when the row fills
// the block and one is built, else the checked fixed-count build if built.
// go(kernel, late_weight): late_weight says whether that kernel is one of
// late_weight_build's, which load the weight after the reduction and keep the
// occupancy build past one block an SM (latency_late_weight_build's load it
// late too, but are not counted: they keep the latency build there).
// The fixed-warp-count kEvictLastX builds launch_fwd_single_pass can reach:
// blocks of fewer than 1024 threads, of float32 rms_norm and of the fused add.
// 16-bit rms_norm never reaches one: a C = 2 block past the L2 on sm_90 has an
// even warp count only if it runs kHalves (halves_planned), and a C = 4 row has
// more than 2048 vectors, so 17 warps or more: those take the runtime-warp-count
// build.
template <typename T, bool kAdd, int kWarps>
constexpr bool evict_last_fixed_built() {
  return (kAdd || sizeof(T) == 4) && kWarps * 32 < kSinglePassMaxThreads;
}

template <typename T, int C, bool kAdd, bool kFewRows, bool kPrefetch, int kWarps, bool kEvictLastX,
          typename Go>
bool launch_fixed_warps(int threads, bool full, const Go& go) {
  if (threads != kWarps * 32) return false;
  if constexpr (kEvictLastX && !evict_last_fixed_built<T, kAdd, kWarps>()) {
    return false;  // never planned: not compiled (the else keeps it out)
  } else {
    if constexpr (fixed_warps_built<T, C, kAdd, true, kFewRows>(kWarps)) {
      if (full) {
        go(rms_norm_fwd_single_pass_kernel<T, C, kAdd, kFewRows, kWarps, true, kPrefetch, false,
                                           kEvictLastX>,
           late_weight_build<T, C, kAdd, kFewRows, kWarps, true>());
        return true;
      }
    }
    if constexpr (fixed_warps_built<T, C, kAdd, false, kFewRows>(kWarps)) {
      go(rms_norm_fwd_single_pass_kernel<T, C, kAdd, kFewRows, kWarps, false, kPrefetch, false,
                                         kEvictLastX>,
         late_weight_build<T, C, kAdd, kFewRows, kWarps, false>());
      return true;
    }
    return false;
  }
}

// Which builds prefetch when past_l2_plan asks for it (the others run
// without it at any batch size; neither kHalves build, launched by
// halves_planned and past_l2_plan, ever does):
// - not the fused add at C = 4 (rows of 2049-4096 vectors, blocks of
//   544-1024 threads, the weight loaded late): at float32 hidden 16384 (1024
//   threads, one block an SM) the prefetch ran 0.7-2.9% slower on an H100 and
//   an H200 alike; the other hidden sizes, and 16-bit rows, were not measured
//   with it;
// - not the runtime-warp-count builds held to 32 registers (C = 1, and C = 2
//   without the add), at which the prefetch made the C = 2 builds spill 4-16
//   bytes (16-bit on sm_90, float32 on sm_80; C = 1 did not spill, but is held
//   to the same rule, unmeasured).
template <typename T, int C, bool kAdd>
constexpr bool prefetch_built(bool runtime_warps) {
  if (kAdd && C == 4) return false;
  return !runtime_warps || single_pass_min_blocks<T, C, kAdd, false>() == 1;
}

// full: the row fills the block (vectors == C x threads).
template <typename T, int C, bool kAdd, bool kFewRows, bool kPrefetch, bool kEvictLastX = false,
          typename Go>
void launch_with_warps(int threads, bool full, const Go& go) {
  constexpr bool kFixedPf = kPrefetch && prefetch_built<T, C, kAdd>(false);
  constexpr bool kEl = kEvictLastX;
  if (launch_fixed_warps<T, C, kAdd, kFewRows, kFixedPf, 4, kEl>(threads, full, go) ||
      launch_fixed_warps<T, C, kAdd, kFewRows, kFixedPf, 8, kEl>(threads, full, go) ||
      launch_fixed_warps<T, C, kAdd, kFewRows, kFixedPf, 16, kEl>(threads, full, go) ||
      launch_fixed_warps<T, C, kAdd, kFewRows, kFixedPf, 32, kEl>(threads, full, go)) {
    return;
  }
  constexpr bool kRuntimePf = kPrefetch && prefetch_built<T, C, kAdd>(true);
  go(rms_norm_fwd_single_pass_kernel<T, C, kAdd, kFewRows, 0, false, kRuntimePf, false, kEl>,
     late_weight_build<T, C, kAdd, kFewRows, 0, false>());
}

// Blocks per row for the cluster kernel, 1 for the single-pass kernel.
// Measured on an H100 at 1-64 rows (NOTES.md v18), against the single-pass
// kernel: 1024-thread blocks were 8-39% faster split (bf16 fused add 1 x
// 16384: 3.30 -> 2.12 us, float32 rms_norm 1 x 16384: 3.32 -> 2.55); the
// fused add's 512-thread blocks 1-17% faster (bf16 1 x 8192: 2.42 -> 2.06);
// rms_norm's 640- and 768-thread blocks 3-18% (bf16 1 x 12288: 2.49 -> 2.09),
// but its 512- and 576-thread ones from 3.4% slower to 7% faster (float32
// 1 x 9216, K = 2: 2.56 -> 2.64; bf16 1 x 8192: 2.04 -> 2.06) and 256-thread
// blocks up to 20% slower (float32 1 x 4096: 1.95 -> 2.33). So: the fused add
// from 512 threads; rms_norm from 640 and only with a warp count 4 divides
// (K = 2 alone, as at 576, lost in float32; 704, 832 and 960 unmeasured).
// K: the largest of 4 and 2 whose rows * K blocks fit on the SMs, but 8 up to
// sm_count / 16 rows for the 1024-thread blocks of the fused add (4-7% faster
// than 4) and float32 rms_norm (1-2.7%); 16-bit rms_norm was 0.2-2.7% slower
// with 8 than with 4. K divides the warps, and the device launches clusters
// (sm_90+).
constexpr int kClusterMinThreadsAdd = 512;
constexpr int kClusterMinThreadsNorm = 640;
constexpr int kSplitMinThreadsC2 = 512;  // split_a_wave_and_tail at 2 vectors a thread

template <typename T>
int cluster_split(int64_t rows, int threads, bool add, const DeviceLimits& device) {
  const int min_threads = add ? kClusterMinThreadsAdd : kClusterMinThreadsNorm;
  if (device.cc_major < 9 || threads < min_threads) return 1;
  const int warps = threads / 32;
  if (!add && warps % 4 != 0) return 1;
  const bool eight = threads == kSinglePassMaxThreads && (add || sizeof(T) == 4);
  if (eight && rows * 16 <= device.sm_count) return 8;
  for (const int k : {4, 2}) {
    if (warps % k == 0 && rows * k <= device.sm_count) return k;
  }
  return 1;
}

// How many clusters of k blocks of the kernel, as the driver loaded it, can be
// resident at once on the current device (cudaOccupancyMaxActiveClusters: on
// a full H100 at least one always can; a partitioned device is asked, not
// assumed); 0 if the loaded kernel is not a cluster kernel of k blocks (a
// build without sm_90+ code runs its trapping stub, with no cluster dims).
// Cached per thread, as current_limits is: every few-row forward asks. With
// smem_bytes of dynamic shared memory a block, which asking also allows
// (allow_dynamic_smem).
int resident_clusters(const void* kernel, int block_threads, int k, int smem_bytes = 0) {
  thread_local std::map<std::tuple<const void*, int, int, int>, int> cache;
  const int device = current_device();
  const auto key = std::make_tuple(kernel, block_threads, device, smem_bytes);
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  cudaFuncAttributes attr{};
  check_cuda(cudaFuncGetAttributes(&attr, kernel), "cudaFuncGetAttributes");
  int clusters = 0;
  if (attr.requiredClusterWidth == k) {
    allow_dynamic_smem(kernel, device, smem_bytes);
    cudaLaunchConfig_t config{};  // no cluster attribute: the kernel's own dims apply
    config.gridDim = dim3(static_cast<unsigned>(k));
    config.blockDim = dim3(static_cast<unsigned>(block_threads));
    config.dynamicSmemBytes = static_cast<size_t>(smem_bytes);
    check_cuda(cudaOccupancyMaxActiveClusters(&clusters, kernel, &config),
               "cudaOccupancyMaxActiveClusters");
  }
  return cache.emplace(key, clusters).first->second;
}

bool clusters_fit(const void* kernel, int block_threads, int k) {
  return resident_clusters(kernel, block_threads, k) > 0;
}

// Launches the cluster kernel for c = 2 or 4 vectors per thread and K blocks a
// row; false (nothing launched) if its clusters do not fit the device.
template <typename T, int K>
bool launch_fwd_cluster_k(T* out, T* residual_out, const T* x, const T* residual, const T* weight,
                          int64_t rows, int hidden, int c, int threads, float inv_hidden, float eps,
                          cudaStream_t stream, int smem_bytes) {
  auto go = [&](auto kernel) {
    if (!clusters_fit(reinterpret_cast<const void*>(kernel), threads / K, K)) return false;
    kernel<<<static_cast<unsigned>(rows * K), threads / K, static_cast<size_t>(smem_bytes),
             stream>>>(out, residual_out, x, residual, weight, hidden, threads, inv_hidden, eps);
    return true;
  };
  if (residual != nullptr) {
    if constexpr (single_pass_max_c<T>(true) == 4) {
      if (c == 4) return go(rms_norm_fwd_cluster_kernel<T, 4, true, K>);
    }
    return go(rms_norm_fwd_cluster_kernel<T, 2, true, K>);
  }
  if (c == 2) {
    // float32 rms_norm takes C = 2 only below 1024 vectors, at most 512
    // threads, which cluster_split never splits: no such kernel is built.
    if constexpr (sizeof(T) == 2) return go(rms_norm_fwd_cluster_kernel<T, 2, false, K>);
    return false;
  }
  return go(rms_norm_fwd_cluster_kernel<T, 4, false, K>);
}

// smem_bytes: dynamic shared memory the kernel does not use, which holds fewer
// blocks on an SM (hold_clusters_to).
template <typename T>
bool launch_fwd_cluster(T* out, T* residual_out, const T* x, const T* residual, const T* weight,
                        int64_t rows, int hidden, int c, int threads, int k, float inv_hidden,
                        float eps, cudaStream_t stream, int smem_bytes = 0) {
  switch (k) {
    case 2:
      return launch_fwd_cluster_k<T, 2>(out, residual_out, x, residual, weight, rows, hidden, c,
                                        threads, inv_hidden, eps, stream, smem_bytes);
    case 4:
      return launch_fwd_cluster_k<T, 4>(out, residual_out, x, residual, weight, rows, hidden, c,
                                        threads, inv_hidden, eps, stream, smem_bytes);
    case 8:
      return launch_fwd_cluster_k<T, 8>(out, residual_out, x, residual, weight, rows, hidden, c,
                                        threads, inv_hidden, eps, stream, smem_bytes);
    default:
      return false;  // cluster_split gives 2, 4 or 8
  }
}

// The single-pass kernel a plan's pick would launch, and whether it loads its
// weight late: pick(probe) runs that choice with probe in place of the launch.
struct PickedKernel {
  const void* kernel = nullptr;
  bool late_weight = false;
};

template <typename Pick>
PickedKernel picked_kernel(const Pick& pick) {
  PickedKernel picked;
  pick([&](auto kernel, bool late_weight) {
    picked = {reinterpret_cast<const void*>(kernel), late_weight};
  });
  return picked;
}

// Whether a batch of more rows than SMs takes the latency build (kFewRows)
// instead of the occupancy build: when every row's block of the latency build
// is resident at once (one wave), the occupancy build's register budget buys
// no more blocks in flight, and the latency build's shorter reduction (and
// unchecked blocks) are on each row's path. Both builds add in the same order,
// so the bits do not change. H100, sm_90 builds taking turns (NOTES.md v27):
// at 200-768 rows, 51 shapes took the latency build; 33 ran faster by more
// than 1% (float32 rms_norm 512 x 2048: 3.28 -> 3.02 us; the fp16 fused add
// 256 x 4096: 3.13 -> 3.03), two slower by 1.3-1.7%, inside what the shapes
// that kept their kernel moved (up to 2.6%). Two kinds of block were slower
// so and keep the occupancy build:
// - those that load the weight late (late_weight_build): float32 rms_norm
//   512 x 4096 10% slower, 256 x 8192 3.7% (not latency_late_weight_build's
//   blocks: the fused add's measured faster at 256 rows, and rms_norm's are
//   1024-thread blocks, one an SM, never past the SM count);
// - one vector a thread (the caller's c >= 2; 16-bit hidden 2048): the fused
//   add at 512 rows 1.8-3.3% slower.
// Not for double (unmeasured). pick_latency(probe) runs the latency build's
// choice of kernel with probe in place of the launch.
template <typename PickLatency>
bool latency_build_in_one_wave(int64_t rows, int threads, int sm_count,
                               const PickLatency& pick_latency) {
  const PickedKernel latency = picked_kernel(pick_latency);
  if (latency.late_weight) return false;
  return rows <= resident_blocks(latency.kernel, threads, sm_count);
}

// Dynamic shared memory (the kernel uses none) that evens out the two waves of
// a split launch of `rows` 2-block clusters, of which `resident` fit at once.
// Past one wave by a tail of at least an eighth of one, it runs as a full wave
// and that tail; held to the fewest blocks an SM whose clusters still number
// at least half the rows (shared memory that leaves an SM room for no more),
// as two waves closer in size, the first the larger (fp16 256 x 16384 on an
// H100: 132 + 124 clusters instead of 198 + 58). H100, sm_90 builds taking
// turns (NOTES.md v30), 2 vectors a thread: 18 held shapes of a second call
// (14 at rows the first did not run), hidden 8192-16384, 230-512 rows,
// 1.6-6.2% faster (median 4.2%; fp16 256 x 16384 8.68 -> 8.31 us). Held at
// tails of 2-4 clusters it was 0.7-3.7% slower (132 + 68 clusters where 198 + 2
// had run), and at 4 vectors a thread (fp16 20480, 200-264 rows) 2.2-4.6%
// slower at every tail, so those keep every cluster. 0 where nothing is held,
// or no size of shared memory gives the hold. Cached per thread, as
// resident_clusters.
int hold_clusters_to(const void* kernel, int block_threads, int64_t rows, int resident,
                     const DeviceLimits& device) {
  const int64_t tail = rows - resident;
  if (tail <= 0 || tail > resident || tail * 8 < resident) return 0;
  const int64_t wanted = (rows + 1) / 2;
  thread_local std::map<std::tuple<const void*, int, int, int64_t>, int> cache;
  const int device_index = current_device();
  const auto key = std::make_tuple(kernel, block_threads, device_index, wanted);
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  cudaFuncAttributes attr{};
  check_cuda(cudaFuncGetAttributes(&attr, kernel), "cudaFuncGetAttributes");
  const int most = max_dynamic_smem(attr, device);
  int held_smem = 0;
  // p blocks an SM: the least footprint at which a (p + 1)-th no longer fits.
  for (int64_t p = (2 * wanted + device.sm_count - 1) / device.sm_count;; ++p) {
    const int64_t smem = device.smem_per_sm / (p + 1) + 1 - device.smem_reserved_each -
                         static_cast<int64_t>(attr.sharedSizeBytes);
    if (smem <= 0) break;
    if (smem > most) continue;
    const int held = resident_clusters(kernel, block_threads, 2, static_cast<int>(smem));
    if (held >= resident) break;
    if (held >= wanted) {
      held_smem = static_cast<int>(smem);
      break;
    }
  }
  return cache.emplace(key, held_smem).first->second;
}

// Whether to split (`split`), and the dynamic shared memory its launch takes
// (hold_clusters_to).
struct WaveSplit {
  bool split = false;
  int smem_bytes = 0;
};

// Whether a batch of the 16-bit fused add that is one wave of its single-pass
// blocks and a tail (more rows than fit at once, at most twice as many) runs
// split over 2-block clusters (the cluster kernel, same bits) instead: rows of
// 4 vectors a thread (hidden 16392-32768, blocks of 544-1024 threads), or of 2
// in blocks of 512-1024 threads (hidden 8192-16384). The tail of whole rows
// becomes a tail of half rows. H100, base and split builds taking turns
// (NOTES.md v27-v29):
// - 4 vectors, three calls at hidden 17920-20480 (576-640 threads, one block
//   an SM): 133-200 rows 2.7-24.6% faster in every call (bf16 133 x 18432:
//   7.20 -> 5.54 us); 256-264 rows from 9.8% faster to 7.1% slower (that one
//   fp16 264 x 20480, whose base runs were 15.1 and 16.4 us). There the
//   single-pass kernel had been 3-17% slower at 256 rows than the two-pass one
//   it replaced;
// - 4 vectors at 24 and 32 warps (v28): 133-200 rows 1.6-15.8% faster,
//   256-264 rows 0.1-2.1% slower; at 22-30 warps (v29, one call): 133 rows
//   10.7-17.2% faster, 200 rows 0.9-10.6%, 256-264 rows from 3.6% faster to
//   1.4% slower;
// - 2 vectors, three calls, at 16, 20, 24, 28 and 32 warps: where one
//   block fits an SM (bf16 10240, 12288-16384; 133-264 rows) 133 rows
//   15.2-26.6% faster, 200 rows 4.1-20.3%, 256-264 rows from 13.2% faster to
//   0.5% slower; where two do (8192, fp16 10240; 265-528 rows) 300 rows
//   3.6-10.5% faster, 512-528 rows 1.4-5.0%, 400 rows from 5.5% faster to
//   1.7% slower. Smaller blocks are not split: bf16 4096 (256 threads, four
//   an SM) gave +0.7% at 700 rows and -6.3% at 1024 from one of two runs, and
//   fp16's halves there hold fewer rows;
// - past twice the resident rows (4 vectors, 300 rows) from 3.7% faster to
//   4.1% slower, so the band stops there.
// Split only while the clusters hold as many rows at once as the single-pass
// blocks do: at 32768 bf16's 512-thread halves (72 registers on sm_90) fit
// one an SM, half the rows, and ran 9-17% slower at 160-264 rows. With CUDA
// 13.0 on sm_90 the registers make the rule take even warp counts from 16 at
// 2 vectors and from 18 at 4: bf16 up to 28 warps at 4 vectors (hidden
// 17416-28672), fp16 up to 32 (17416-32768). Odd warp counts have no
// halves. pick_occupancy(probe) runs the occupancy build's choice of kernel
// with probe in place of the launch. At 2 vectors a thread the launch's two
// waves are evened out (hold_clusters_to).
template <typename T, typename PickOccupancy>
WaveSplit split_a_wave_and_tail(int64_t rows, int c, int threads, bool add,
                                const DeviceLimits& device, const PickOccupancy& pick_occupancy) {
  static_assert(sizeof(T) == 2, "measured for the 16-bit fused add only");
  const bool measured_width = c == 4 || (c == 2 && threads >= kSplitMinThreadsC2);
  if (!add || !measured_width || device.cc_major < 9 || (threads / 32) % 2 != 0 ||
      rows <= device.sm_count) {
    return {};
  }
  const int64_t single_rows =
      resident_blocks(picked_kernel(pick_occupancy).kernel, threads, device.sm_count);
  if (rows <= single_rows || rows > 2 * single_rows) return {};
  const void* split =
      c == 4 ? reinterpret_cast<const void*>(rms_norm_fwd_cluster_kernel<T, 4, true, 2>)
             : reinterpret_cast<const void*>(rms_norm_fwd_cluster_kernel<T, 2, true, 2>);
  const int resident = resident_clusters(split, threads / 2, 2);
  if (resident < single_rows) return {};
  return {true, c == 2 ? hold_clusters_to(split, threads / 2, rows, resident, device) : 0};
}

// Where 16-bit rms_norm runs the rows the plan gives C = 2 (an even warp count)
// at C = 4 in half the threads, adding in C = 2's order (kHalves: the same
// bits, so the choice may follow the batch). On an H200, against the C = 2
// kernels, every shape of 133-65536 rows x hidden 4096-16384 in one process
// taking turns (NOTES.md v33):
// - rows past the L2 (against C = 2 with v33's prefetch; C = 4 without it
//   measured 2.2-7.1% faster than with it): 2.8-7.9% faster at hidden 4096,
//   8192, 12288 and 16384 (bf16 16384 x 16384: 279.3 -> 259.9 us), from
//   1.1% slower to 0.5% faster at 10240 (20 warps at C = 2);
// - the occupancy build's batches at C = 2 blocks of 32 warps (hidden 16384):
//   0.6-9.4% faster at 133-1024 rows. Other widths there were mixed (hidden
//   10240 2.6-8.2% slower at 512-2048 rows, 12288 3.9-6.4% faster there but
//   1.8-4.5% slower at 200-256), and the latency build's one-wave batches were
//   mostly faster at C = 2: the caller keeps C = 2 for them (on sm_90 no
//   batch this rule takes is one wave of the latency build, whose 1024-thread
//   blocks fit one an SM, but that rests on the builds' registers).
// Widths past the L2 other than those (e.g. hidden 14336, or 3-6 warps at
// C = 4 below hidden 4096) take it unmeasured. Measured on sm_90 only (an
// H200); other archs keep C = 2. The fused add takes the same build past the
// L2 where its C = 2 blocks leave an SM few warps (past_l2_plan).
// Re-measured in three patterns of calls (NOTES.md, session 57's exp71), v33's
// prefetch gone: level with C = 2 within 0.3% at hidden 4096 and 8192, both reading
// evict_last; 1.5-3.0% faster at 16384, where C = 2's 1024-thread build reads
// without it.
template <typename T>
bool halves_built(int c, int threads, const DeviceLimits& device) {
  return sizeof(T) == 2 && c == 2 && (threads / 32) % 2 == 0 && device.cc_major == 9;
}

template <typename T>
bool halves_planned(bool add, int c, int threads, bool past_l2, const DeviceLimits& device) {
  return !add && halves_built<T>(c, threads, device) &&
         (past_l2 || threads == kSinglePassMaxThreads);
}

// Calls go(kernel) with the kHalves build for a C = 2 plan of 2 * threads
// threads. The fused add takes it only at runtime warp counts (past_l2_plan:
// 10-12 warps on sm_90), so only that build of it is compiled. evict_last_x:
// rms_norm's rows past the L2 (evict_last_x_planned), with plan.demote_from.
template <typename T, bool kAdd, typename Go>
void pick_halves(int threads, bool evict_last_x, const Go& go) {
  if constexpr (kAdd) {
    return go(rms_norm_fwd_single_pass_kernel<T, 4, true, false, 0, false, false, true>);
  } else {
    auto with_warps = [&](auto evict_last) {
      constexpr bool kEl = decltype(evict_last)::value;
      switch (threads / 32) {
        case 4:
          return go(
              rms_norm_fwd_single_pass_kernel<T, 4, false, false, 4, false, false, true, kEl>);
        case 8:
          return go(
              rms_norm_fwd_single_pass_kernel<T, 4, false, false, 8, false, false, true, kEl>);
        case 16:
          return go(
              rms_norm_fwd_single_pass_kernel<T, 4, false, false, 16, false, false, true, kEl>);
        default:
          return go(
              rms_norm_fwd_single_pass_kernel<T, 4, false, false, 0, false, false, true, kEl>);
      }
    };
    if (evict_last_x) return with_warps(std::true_type{});
    return with_warps(std::false_type{});
  }
}

// Launches pick_halves's kernel.
template <typename T, bool kAdd>
void launch_fwd_halves(T* out, T* residual_out, const T* x, const T* residual, const T* weight,
                       int64_t rows, int hidden, typename Acc<T>::type inv_h,
                       typename Acc<T>::type e, unsigned grid, int threads, bool evict_last_x,
                       const RowPrefetch& plan, cudaStream_t stream) {
  pick_halves<T, kAdd>(threads, evict_last_x, [&](auto kernel) {
    kernel<<<grid, threads, 0, stream>>>(out, residual_out, x, residual, weight, rows, hidden,
                                         inv_h, e, plan);
  });
}

// Warps an SM holds of the kernel a plan's pick would launch in blocks of
// `threads` (a multiple of 32).
template <typename Pick>
int warps_per_sm(int threads, const Pick& pick) {
  return blocks_per_sm(picked_kernel(pick).kernel, threads, current_device()) * (threads / 32);
}

// Whether an SM holds two such blocks: the re-reading builds' (kReread, kStreamAdd)
// condition, as the loaded kernel may hold one (kRereadMinBlocks).
template <typename Pick>
bool holds_two_blocks(int threads, const Pick& pick) {
  return warps_per_sm(threads, pick) >= 2 * (threads / 32);
}

// The same for pick_halves's kernel.
template <typename T, bool kAdd>
int halves_warps_per_sm(int threads, bool evict_last_x) {
  return warps_per_sm(threads, [&](const auto& probe) {
    pick_halves<T, kAdd>(threads, evict_last_x, [&](auto kernel) { probe(kernel, false); });
  });
}

// What a batch past the L2 runs, besides 16-bit rms_norm in C = 2's order
// (halves_planned): the L2 prefetch pays only where an SM holds few warps.
// On an H200, the settings taking turns in one process, bits checked, rows
// past the L2 of 1024-65536 x hidden 2048-16384 (NOTES.md v34):
// - without it, every build whose blocks leave an SM 28 warps or more ran
//   faster at every such shape measured: 0.2-7.9%, at least 1.5% from 2048
//   rows (float32 rms_norm 65536 x 8192: 1083.8 -> 1021.7 us; the bf16 fused
//   add 65536 x 16384: 2196.4 -> 2038.2). v13 (H200) and v14 (H100) had
//   measured it faster with the kernels of then;
// - with it, float32 rms_norm ran 7.6-8.7% faster at hidden 10240 (one block
//   of 20 warps an SM) and 1.1-3.1% at 12288 (24 warps), the bf16 fused add
//   0.8-1.8% at 10240 (20 warps); but the fused add at 24 warps an SM ran
//   faster without it (float32 6144: 3.9-5.9%; 16-bit 12288: 1.9-4.2%);
// - the fp16 fused add at 10240 holds 20 warps with the prefetch (55
//   registers) but 40 without (48): 6.1-7.9% faster without;
// - where an SM holds 20 or 24 warps of it (bf16 10240, 16-bit 12288) the
//   16-bit fused add was fastest at C = 4 in C = 2's order (kHalves: 10 or 12
//   warps, no prefetch): 5.3-7.5% faster than with the prefetch at bf16
//   10240, 2.1-7.0% at 12288.
// So where the occupancy build without the prefetch leaves an SM at most
// kFewWarpsPastL2 warps, rms_norm prefetches if that costs no warps and the
// 16-bit fused add at an even warp count runs in C = 2's order at C = 4 on
// sm_90 (also at 22 warps, hidden 10760-11264: unmeasured); everything else,
// the fused add included, runs the occupancy build without the prefetch.
// Measured on sm_90 only (an H200, 2026-11-28); other archs apply the rule to
// their own builds' occupancy, unmeasured.
constexpr int kFewWarpsPastL2 = 24;

enum class PastL2 { kPlain, kPrefetch, kHalves };

// plain: the warps an SM holds of the occupancy build without the prefetch.
template <typename T, typename PickPrefetch>
PastL2 past_l2_plan(bool add, int c, int threads, const DeviceLimits& device, int plain,
                    const PickPrefetch& pick_prefetch) {
  if (plain > kFewWarpsPastL2) return PastL2::kPlain;
  if (add) return halves_built<T>(c, threads, device) ? PastL2::kHalves : PastL2::kPlain;
  return warps_per_sm(threads, pick_prefetch) == plain ? PastL2::kPrefetch : PastL2::kPlain;
}

// Where a batch past the L2 reads x, and the fused add's residual, evict_last
// (kEvictLastX, load_evict_last, the last L2 of rows set back to normal). On an
// H200, settings taking turns in one process, bits equal, 4096-65536 rows x
// hidden 2048-16384 past the L2. rms_norm (NOTES.md v37):
// - the kHalves builds (16-bit hidden 4096, 8192, 16384 at 4, 8 and 16 warps):
//   3.8-4.4% faster at hidden 4096 and 8192 from 16384 rows (2.1% at 4096
//   rows), 1.7-2.3% at 16384 (0.9-1.6% at 4096 rows);
// - float32 at C = 2 (hidden 2048, 8 warps) and C = 4 (4096 and 8192, 8 and 16
//   warps): 2.4-4.4% faster;
// - 16-bit C = 1 (hidden 2048, 8 warps): 1.0-2.2% slower from 16384 rows;
//   float32 C = 4 in 1024-thread blocks (hidden 16384, one block an SM):
//   2.4-2.7% slower (reread_planned runs those rows, evict_last with them).
// The fused add (NOTES.md v38), both tensors read evict_last and demoted:
// - 16-bit C = 1 (hidden 2048, 8 warps): 1.7-2.0% faster from 16384 rows;
// - 16-bit C = 2 (4096 and 8192, 8 and 16 warps): 2.7-4.9% faster;
// - float32 C = 2 (2048 and 4096, 8 and 16 warps): 3.0-4.4% faster (1.0% at
//   4096 x 2048, just past the L2);
// - the victim probe (demote before the barrier): four copies of 12 MiB after
//   bf16 16384 x 8192 took 24.5 us instead of 24.0 (after float32 16384 x 2048:
//   24.0 both ways).
// - in 1024-thread blocks at C = 2 (16-bit hidden 16384, float32 8192), the
//   runtime-warp-count build (sm_90, CUDA 13.0: 56 registers for 16-bit against the
//   plain build's 55, one block an SM either way; float32 47 against 32, one block an
//   SM instead of two), in three patterns of calls (NOTES.md v42): 0.5-3.5% slower
//   at 1024 rows (reads 16/15 of the L2), 0.1-1.2% faster at 1536 (16-bit), level to
//   1.5% faster at 2048, 1.1-2.9% faster at 4096 and 1.8-4.3% at 16384 (bf16 16384 x
//   16384: 509.5 -> 497.7 us).
// So rms_norm at C >= 2 and the fused add at C <= 2, and not where past_l2_plan
// prefetches (its build marks its own lines) or runs the fused add in C = 2's
// order; rows whose C = 2 plan fills 1024-thread blocks only where the reads are
// more than 3/2 of the L2 (evict_last_pays).
// Other widths take it unmeasured where evict_last_keeps_warps allows: kHalves
// at other warp counts (e.g. 10 at hidden 10240), C = 2 at odd warp counts,
// 16-bit rms_norm C = 4 past hidden 16384 (25-31 warps; 19-24 prefetch),
// float32 rms_norm C = 2 at other than 8 warps and C = 4 at 9-15, 17-18 and
// 25-31 (19-24 prefetch), the fused add at C = 1 below 8 warps and at C = 2 at
// other even warp counts (e.g. float32 hidden 6144, 24 warps). The fused add at C = 4
// (in blocks below 1024 threads: 16-bit hidden 16392-31744, float32 8196-15872;
// unmeasured), double and archs other than sm_90 never take it.
template <typename T>
bool evict_last_x_planned(bool add, int c, int block_threads, const DeviceLimits& device) {
  return sizeof(T) <= 4 && device.cc_major == 9 && (add ? c <= 2 : c >= 2) &&
         (block_threads < kSinglePassMaxThreads || (add && c == 2));
}

// Rows whose C = 2 plan fills 1024-thread blocks (32 KB a tensor: 16-bit hidden
// 16384, float32 8192) read evict_last only where the call reads more than 3/2 of
// the L2. Just past it evict_last was slower there, in three patterns of calls on an
// H200 (NOTES.md v42): the fused add's 1024-thread build 0.5-3.5% at 1024 rows (reads
// 16/15 of the L2; faster from 1536, 8/5), 16-bit rms_norm's kHalves build 1.1-3.6%
// at 2048 rows of 16384 (16/15); from 1.1% slower to 1.2% faster at 3072 (8/5) and
// from 0.6% slower to 1.2% faster at 4096 (32/15); 0.2-1.7% faster at 6144 and 1.3-2.0%
// at 16384. Where between 16/15 and 8/5 it turns is unmeasured. Narrower rows pay
// just past the L2 (the bf16 fused add at 2048 x 8192, reads 16/15: 2.1-2.8% faster on
// the same and on rotating tensors, 0.5% slower when each output is summed). rms_norm
// takes the fused add's threshold: within 1.2% either way at 8/5 and 32/15.
// c2_threads: the threads of the row's C = 2 plan; reads: the bytes the call reads.
inline bool evict_last_pays(int c2_threads, int64_t reads, const DeviceLimits& device) {
  return c2_threads < kSinglePassMaxThreads || 2 * reads > 3 * int64_t{device.l2_bytes};
}

// And only where its build leaves an SM the warps of the plain one, or more than
// kFewWarpsPastL2. The evict_last builds take more registers at some widths
// (sm_90, CUDA 13.0): the 16-bit fused add's runtime-warp-count build 56 against
// 48 (fp16) and 52 (bf16), 16-bit rms_norm's kHalves builds 59-62 against 55-56.
// Where that costs warps but leaves more than kFewWarpsPastL2 it measured faster
// all the same (the fp16 fused add at 8 warps: 4 blocks an SM instead of 5,
// 4.0-4.9% faster, exp57; kHalves at 4 warps, 8 blocks instead of 9, v37). Where
// it would leave kFewWarpsPastL2 or fewer, the plain build runs: the fp16 fused
// add at 19-21 warps (hidden 9224-10752: one block instead of two, the loss v34
// measured 6.1-7.9% slower with the prefetch), kHalves at 11-12 warps
// (hidden 10760-11264 and 11784-12288: 22-24 warps instead of 33-36), 16-bit
// rms_norm at C = 4 in 17-18 warps (hidden 16392-18432: one block instead of
// two). None of those was measured with evict_last.
inline bool evict_last_keeps_warps(int evict_last_warps, int plain_warps) {
  return evict_last_warps >= plain_warps || evict_last_warps > kFewWarpsPastL2;
}

// Where float32 rms_norm runs the kReread build: rows that fill 1024-thread
// blocks at 4 vectors a thread (hidden 16384), in batches of more rows than SMs.
// Holding the row (55 registers) leaves an SM one such block, 32 of its 64
// warps; inductor's kernel for the shape holds two in 32 registers, reads x
// evict_last and again from the L1, and ran 5.6% faster (ncu at 16384 x 16384:
// 501 us against 531, the same DRAM bytes, the DRAM at 88.9% of its peak against
// 84.0%; NOTES.md v38). On an H200, the builds taking turns in one process,
// bits checked (NOTES.md v39), against the held row:
// - re-read, x read plainly: 2.3% and 2.9% faster at 256 and 512 rows (which the
//   L2 holds), level at 1024 and 2048, 1.2-2.3% faster at 4096-65536;
// - re-read with x read evict_last (kEvictLastX, demoted after the second
//   read): 6.7% slower at 256 rows, 0.9% faster at 512, level at 1024 (+0.5%),
//   1.3-4.0% faster at 2048-65536 (16384 x 16384: 534.5 -> 513.6 us; inductor's
//   502.7);
// - four copies of 12 MiB after 16384 x 16384 took 23.20 us after the held row,
//   23.18 after the re-read with evict_last, 22.93 after the plain one.
// (v35 had measured the plain re-read level to 1.5% slower, and v37 evict_last on
// the held row 2.4-2.7% slower.) So the re-read, with evict_last past the L2. There
// its first read also asks the L1 to keep the line (L1::evict_last) and its second
// read to drop it first (L1::evict_first), as inductor's loads do: 0.5% faster at
// 1024 rows, 1.8-2.8% at 2048-65536 (16384 x 16384: 516.0 -> 505.5 us; inductor's
// 504.3), the copies after it at 23.90 us against 23.71 (NOTES.md v40). The same
// hints within the L2 (256 and 512 rows) ran 0.5% and 3.1% slower: not taken. The
// other widths at 4 vectors a thread (hidden 12292-16380, blocks of 25-32 warps)
// keep the held row, unmeasured; measured on sm_90 only, and taken only where the
// loaded kernel holds two blocks an SM (kRereadMinBlocks: a build without sm_90
// code, say 8.0+PTX JIT-compiled for an H100, holds one).
template <typename T>
bool reread_planned(bool add, int c, int threads, bool full, const DeviceLimits& device) {
  return std::is_same_v<T, float> && !add && c == 4 && threads == kSinglePassMaxThreads && full &&
         device.cc_major == 9;
}

// The 16-bit fused add in rows of 1024 threads at 2 vectors a thread (hidden
// 15880-16384) holds its row in 52-55 registers, one block an SM. Where what the call
// reads and writes is more than 3/4 of the L2 and at most 7/4 of it (rows 361-840 on
// an H200) and no other plan took it, kStreamAdd reads x and the residual as streamed
// (ld.global.cs), and reads the stored residual sum back for the output, as
// inductor's fused add does: 32 registers, two blocks an SM. Measured on an H200
// (NOTES.md v41), the builds taking turns in one process, bits checked, in three
// patterns of calls: on the same tensors (the sweep's), rotating over 4 sets of
// tensors, and rotating with each output summed by the next op. Against the
// plain build at 496, 512, 544 and 576 rows, bf16 and fp16: 2.4-9.4% faster, 0.4-5.3%
// and 2.3-4.4% (hidden 16384 only). Each half alone did not pay: the streamed loads were 1.2-2.3%
// slower rotating (v40 had shipped them alone, by the same-tensor pattern only:
// 2.0-4.3% faster there, 1.3-2.9% slower rotating at five other shapes), the
// re-read with plain loads 0.6-2.4% slower at 512 rows, 2.2-8.1% slower at 384 and
// 608-1024 rows, and at 1024 rows of hidden 8192 (512-thread blocks) 2.8-3.8%. v41 took
// the build from past the L2 to 6/5 of it (rows 481-576). v42 timed it at 256-16384 rows
// against the plain build (the same patterns, bf16 and fp16; NOTES.md v42):
// - 384-832 rows (4/5 to 26/15 of the L2): 0.6-3.8% faster when each output is summed,
//   from 0.4% slower to 7.8% faster on the same tensors and on rotating ones (448 rows:
//   2.6-7.8% faster in all three); at 512 rows, where both settings ran this build, the
//   two differed by 0.1-0.8%;
// - 320 rows (2/3): 7.8-11.2% slower on the same tensors; 256 level;
// - 896 rows (28/15): 1.4-2.2% slower on the same and rotating tensors; 1024-16384 rows
//   0.8-6.2% slower on them.
// Our reading, not measured: the stored sum stays in the L2 for its second read only
// while the streamed inputs leave it room. sm_90 only (an H100's band, rows 301-700,
// unmeasured), and taken only where the loaded kernel holds two blocks an SM
// (kRereadMinBlocks).
template <typename T>
bool stream_add_planned(int64_t rows, int64_t hidden, bool add, int c, int threads,
                        const DeviceLimits& device) {
  if (sizeof(T) != 2 || !add || c != 2 || threads != kSinglePassMaxThreads) return false;
  const int64_t moved = rows * hidden * static_cast<int64_t>(sizeof(T)) * 4;
  const int64_t l2 = device.l2_bytes;
  return device.cc_major == 9 && l2 > 0 && 4 * moved > 3 * l2 && 4 * moved <= 7 * l2;
}

// 1 or kSinglePassPreferC vectors per thread (4 for long float32 rms_norm rows),
// doubled while the row would need more than 1024 threads; the caller checked
// single_pass_fits.
template <typename T>
void launch_fwd_single_pass(T* out, T* residual_out, const T* x, const T* residual, const T* weight,
                            int64_t rows, int64_t hidden, double eps, cudaStream_t stream) {
  using A = typename Acc<T>::type;
  const int64_t nvec = hidden / kVec16<T>;
  int c = nvec <= kSinglePassOneVecMax ? 1 : kSinglePassPreferC;
  if (sizeof(T) == 4 && residual == nullptr && nvec >= kFloatFourVecMin) c = 4;
  while (nvec > int64_t{c} * kSinglePassMaxThreads) c *= 2;
  const int threads = static_cast<int>(std::max<int64_t>(32, ((nvec + c - 1) / c + 31) / 32 * 32));
  const unsigned grid = static_cast<unsigned>(row_grid(rows));
  const int h = static_cast<int>(hidden);
  const A e = static_cast<A>(eps);
  const A inv_h = static_cast<A>(1.0 / static_cast<double>(hidden));
  const DeviceLimits& device = current_limits();
  const RowPrefetch prefetch = RowPrefetch::plan(rows, hidden * static_cast<int64_t>(sizeof(T)),
                                                 residual != nullptr ? 2 : 1, device.l2_bytes);
  auto go = [&](auto kernel, bool /*late_weight*/) {
    kernel<<<grid, threads, 0, stream>>>(out, residual_out, x, residual, weight, rows, h, inv_h, e,
                                         prefetch);
  };
  const bool full = nvec == int64_t{c} * threads;  // no thread slot past the row
  auto pick = [&](auto few_rows, auto prefetching, const auto& launch) {
    constexpr bool kFew = decltype(few_rows)::value;
    constexpr bool kPf = decltype(prefetching)::value;
    if (residual != nullptr) {
      if (c == 1) return launch_with_warps<T, 1, true, kFew, kPf>(threads, full, launch);
      if constexpr (single_pass_max_c<T>(true) == 4) {
        if (c == 4) return launch_with_warps<T, 4, true, kFew, kPf>(threads, full, launch);
      }
      // c == 2: single_pass_fits
      return launch_with_warps<T, 2, true, kFew, kPf>(threads, full, launch);
    }
    switch (c) {
      case 1:
        return launch_with_warps<T, 1, false, kFew, kPf>(threads, full, launch);
      case 2:
        return launch_with_warps<T, 2, false, kFew, kPf>(threads, full, launch);
      default:
        return launch_with_warps<T, 4, false, kFew, kPf>(threads, full, launch);
    }
  };
  // The plain occupancy plan: what runs where no other plan does, and what the
  // other plans' builds are weighed against.
  auto pick_plain = [&](const auto& launch) {
    return pick(std::false_type{}, std::false_type{}, launch);
  };
  // At most one block per SM: the latency build (see single_pass_min_blocks),
  // or its blocks split over clusters where that is faster.
  if (rows <= device.sm_count) {
    if constexpr (!std::is_same_v<T, double>) {  // double: no float accumulation
      const int k = cluster_split<T>(rows, threads, residual != nullptr, device);
      if (k > 1 && launch_fwd_cluster<T>(out, residual_out, x, residual, weight, rows, h, c,
                                         threads, k, inv_h, e, stream)) {
        return;
      }
    }
    return pick(std::true_type{}, std::false_type{}, go);
  }
  if constexpr (sizeof(T) == 2) {
    const WaveSplit split =
        split_a_wave_and_tail<T>(rows, c, threads, residual != nullptr, device, pick_plain);
    if (split.split && launch_fwd_cluster<T>(out, residual_out, x, residual, weight, rows, h, c,
                                             threads, 2, inv_h, e, stream, split.smem_bytes)) {
      return;
    }
  }
  const bool past_l2 = prefetch.rows_below > 0;
  const int64_t reads =
      rows * hidden * static_cast<int64_t>(sizeof(T)) * (residual != nullptr ? 2 : 1);
  if constexpr (std::is_same_v<T, float>) {
    auto pick_reread = [&](const auto& launch) {
      if (past_l2) {
        return launch(
            rms_norm_fwd_single_pass_kernel<T, 4, false, false, 32, true, false, false, true, true>,
            true);
      }
      return launch(
          rms_norm_fwd_single_pass_kernel<T, 4, false, false, 32, true, false, false, false, true>,
          true);
    };
    if (reread_planned<T>(residual != nullptr, c, threads, full, device) &&
        holds_two_blocks(threads, pick_reread)) {
      return pick_reread(go);
    }
  }
  if (halves_planned<T>(residual != nullptr, c, threads, past_l2, device) &&
      !latency_build_in_one_wave(rows, threads, device.sm_count, [&](const auto& probe) {
        pick(std::true_type{}, std::false_type{}, probe);
      })) {
    if constexpr (sizeof(T) == 2) {
      bool evict_last_x = past_l2 && evict_last_x_planned<T>(false, 4, threads / 2, device) &&
                          evict_last_pays(threads, reads, device);
      if (evict_last_x) {
        evict_last_x = evict_last_keeps_warps(halves_warps_per_sm<T, false>(threads / 2, true),
                                              halves_warps_per_sm<T, false>(threads / 2, false));
      }
      return launch_fwd_halves<T, false>(out, nullptr, x, nullptr, weight, rows, h, inv_h, e, grid,
                                         threads / 2, evict_last_x, prefetch, stream);
    }
  }
  if (past_l2) {
    const int plain = warps_per_sm(threads, pick_plain);
    const PastL2 plan = past_l2_plan<T>(
        residual != nullptr, c, threads, device, plain,
        [&](const auto& probe) { pick(std::false_type{}, std::true_type{}, probe); });
    if (plan == PastL2::kHalves) {
      if constexpr (sizeof(T) == 2) {
        return launch_fwd_halves<T, true>(out, residual_out, x, residual, weight, rows, h, inv_h, e,
                                          grid, threads / 2, false, RowPrefetch{}, stream);
      }
    }
    if (plan == PastL2::kPrefetch) return pick(std::false_type{}, std::true_type{}, go);
    if constexpr (sizeof(T) <= 4) {
      if (evict_last_x_planned<T>(residual != nullptr, c, threads, device) &&
          evict_last_pays(threads, reads, device)) {
        // evict_last_x_planned: the fused add at C = 1 or 2, rms_norm at 2 or 4
        auto pick_evict_last = [&](const auto& launch) {
          if (residual != nullptr) {
            if (c == 1) {
              return launch_with_warps<T, 1, true, false, false, true>(threads, full, launch);
            }
            return launch_with_warps<T, 2, true, false, false, true>(threads, full, launch);
          }
          if (c == 2) {
            return launch_with_warps<T, 2, false, false, false, true>(threads, full, launch);
          }
          return launch_with_warps<T, 4, false, false, false, true>(threads, full, launch);
        };
        if (evict_last_keeps_warps(warps_per_sm(threads, pick_evict_last), plain)) {
          return pick_evict_last(go);
        }
      }
    }
    return pick_plain(go);
  }
  if (!std::is_same_v<T, double> && c >= 2 &&
      latency_build_in_one_wave(rows, threads, device.sm_count, [&](const auto& probe) {
        pick(std::true_type{}, std::false_type{}, probe);
      })) {
    return pick(std::true_type{}, std::false_type{}, go);
  }
  if constexpr (sizeof(T) == 2) {
    // The 32-warp build that checks its bounds: 16-bit fused add rows of 1024
    // threads take no kFull build outside the latency plan (fixed_warps_built).
    auto pick_stream_add = [&](const auto& launch) {
      return launch(rms_norm_fwd_single_pass_kernel<T, 2, true, false, 32, false, false, false,
                                                    false, false, true>,
                    true);
    };
    if (stream_add_planned<T>(rows, hidden, residual != nullptr, c, threads, device) &&
        holds_two_blocks(threads, pick_stream_add)) {
      return pick_stream_add(go);
    }
  }
  return pick_plain(go);
}

template <typename T>
void launch_fwd(T* out, T* residual_out, const T* x, const T* residual, const T* weight,
                int64_t rows, int64_t hidden, double eps, cudaStream_t stream) {
  constexpr int V = kVec16<T>;
  const bool vectorised = hidden % V == 0 && aligned16(out) && aligned16(x) && aligned16(weight) &&
                          (residual == nullptr || (aligned16(residual) && aligned16(residual_out)));
  // Measured on an H100 (benchmarks/NOTES.md, v7): the single-pass kernel is
  // as fast as or faster than v5 and v6 at every shape it takes; v6's
  // two-pass kernel is kept for rows too long for it.
  if (vectorised && single_pass_fits<T>(hidden / V, residual != nullptr)) {
    launch_fwd_single_pass<T>(out, residual_out, x, residual, weight, rows, hidden, eps, stream);
  } else if (vectorised) {
    launch_fwd_two_pass<T, V>(out, residual_out, x, residual, weight, rows, hidden, eps, stream);
  } else {
    launch_fwd_v<T, 1>(out, residual_out, x, residual, weight, rows, hidden, eps, stream);
  }
  check_launch("rms_norm forward kernel launch");
}

// ---- backward ------------------------------------------------------------
// y = x * rstd * w, rstd = (mean(x^2) + eps)^-1/2
// dx = rstd * w * dy - x * rstd^3 * mean(w * dy * x)  [+ grad_extra]
// dw = sum over rows of dy * x * rstd

// The end of a backward block: thread threadIdx.x's weight-gradient sums,
// V per vector i = threadIdx.x + c * stride, go to the block's partial row
// (partial_row[i * V .. i * V + V)) as whole vectors of A: two 16-byte stores
// per bf16 vector where element-wise stores (a warp's 32 floats 32 bytes
// apart, eight times over) made the L2 merge eight partial writes into each
// sector. At one row per block that store was most of the kernel (bf16, 1
// row of 4096: ncu, benchmarks/NOTES.md). A grid of one block holds the whole
// gradient: grad_weight is then given, and gets it in T directly, with no
// sum_partials launch after. Same bits as that launch: sum_partials adds the
// one partial to zeros, and `+ A(0)` does the same here (the sums start at +0
// and so are never -0; a NaN stays a NaN either way). The partial rows are
// whole vectors of A (32 bytes for bf16): launch_bwd checks the scratch is
// 32-byte aligned before it picks a vectorised plan.
template <typename T, typename A, int V, int C>
__device__ __forceinline__ void store_dw(const A (&dw)[C][V], A* __restrict__ partial_row,
                                         T* __restrict__ grad_weight, int64_t nvec, int stride) {
#pragma unroll
  for (int c = 0; c < C; ++c) {
    const int64_t i = threadIdx.x + static_cast<int64_t>(c) * stride;
    if (i < nvec) {
      if (grad_weight != nullptr) {
        Vec<T, V> g;
#pragma unroll
        for (int k = 0; k < V; ++k) g.v[k] = Cast<T>::from(dw[c][k] + A(0));
        reinterpret_cast<Vec<T, V>*>(grad_weight)[i] = g;
      } else {
        Vec<A, V> sums;
#pragma unroll
        for (int k = 0; k < V; ++k) sums.v[k] = dw[c][k];
        reinterpret_cast<Vec<A, V>*>(partial_row)[i] = sums;
      }
    }
  }
}

// v4 backward, the register kernel: rows of at most C*T vectors.
// partial[blockIdx.x, :] receives this block's share of dw (store_dw).
// On sm_75 ptxas squeezed <bf16, 8, 2> to 64 registers and spilled 20
// bytes; the minimum-blocks hint stops that. It is given on sm_75 only, so
// the v4 kernels on sm_80+ keep the register counts they were measured with.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
#define FUSEDOPS_V4_BWD_BOUNDS __launch_bounds__(kBwdMaxThreads, 1)
#else
#define FUSEDOPS_V4_BWD_BOUNDS __launch_bounds__(kBwdMaxThreads)
#endif
template <typename T, int V, int C>
__global__ void FUSEDOPS_V4_BWD_BOUNDS rms_norm_bwd_kernel(
    T* __restrict__ grad_x, typename Acc<T>::type* __restrict__ partial,
    T* __restrict__ grad_weight, const T* __restrict__ grad_out, const T* __restrict__ grad_extra,
    const T* __restrict__ x, const T* __restrict__ weight, int64_t rows, int64_t hidden,
    typename Acc<T>::type eps) {
  using A = typename Acc<T>::type;
  using VecT = Vec<T, V>;
  __shared__ A scratch[32];
  const int64_t nvec = hidden / V;
  const A n = static_cast<A>(hidden);

  const VecT* w = reinterpret_cast<const VecT*>(weight);
  A dw[C][V];
#pragma unroll
  for (int c = 0; c < C; ++c)
#pragma unroll
    for (int k = 0; k < V; ++k) dw[c][k] = 0;
  auto row_ptr = [&](const T* base, int64_t row) {
    return reinterpret_cast<const VecT*>(base + row * hidden);
  };

  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    VecT xc[C], dyc[C];
    load_row<VecT, C>(xc, dyc, row_ptr(x, row), row_ptr(grad_out, row), nvec);
    A sums[2] = {0, 0};  // sum x^2, sum w*dy*x
#pragma unroll
    for (int c = 0; c < C; ++c) {
      const int64_t i = threadIdx.x + static_cast<int64_t>(c) * blockDim.x;
      if (i < nvec) {
        const VecT wv = w[i];
#pragma unroll
        for (int k = 0; k < V; ++k) {
          const A xf = to_acc<A>(xc[c].v[k]);
          sums[0] += xf * xf;
          sums[1] += to_acc<A>(dyc[c].v[k]) * to_acc<A>(wv.v[k]) * xf;
        }
      }
    }
    // Issue the next row's loads before the barrier (NOTES.md v3).

    block_sum2(sums, scratch);
    const A rstd = A(1) / sqrt(sums[0] / n + eps);
    const A coef = rstd * rstd * rstd * sums[1] / n;
#pragma unroll
    for (int c = 0; c < C; ++c) {
      const int64_t i = threadIdx.x + static_cast<int64_t>(c) * blockDim.x;
      if (i < nvec) {
        const VecT wv = w[i];
        VecT extra;
        if (grad_extra != nullptr) extra = row_ptr(grad_extra, row)[i];
        VecT g;
#pragma unroll
        for (int k = 0; k < V; ++k) {
          const A xf = to_acc<A>(xc[c].v[k]);
          const A dy = to_acc<A>(dyc[c].v[k]);
          A gx = rstd * dy * to_acc<A>(wv.v[k]) - coef * xf;
          if (grad_extra != nullptr) gx += to_acc<A>(extra.v[k]);
          g.v[k] = Cast<T>::from(gx);
          dw[c][k] += dy * xf * rstd;
        }
        reinterpret_cast<VecT*>(grad_x + row * hidden)[i] = g;
      }
    }
  }
  store_dw<T, A, V, C>(dw, partial + static_cast<int64_t>(blockIdx.x) * hidden, grad_weight, nvec,
                       blockDim.x);
}

// v5 backward: rows staged in shared memory by cp.async, as in the v5
// forward. Stage layout: x, dy, then grad_extra when given (nvec vectors
// each). Thread t owns vectors t + c*T, c < C, of every row: it copies them,
// reads them back, and keeps their weight-gradient sums in dw (C*V floats; the
// row data itself never lives in registers for long).
// partial[blockIdx.x, :] receives this block's share of dw (store_dw).
// __launch_bounds__(..., 1): without the minimum-blocks hint ptxas squeezed
// C = 4 (and float C = 8) to 64 registers and spilled a few bytes; with it,
// it takes the ~90 registers it needs (occupancy here is set by shared memory).
template <typename T, int C>
__global__ void __launch_bounds__(kStagedMaxThreads, 1)
    rms_norm_bwd_staged_kernel(T* __restrict__ grad_x, typename Acc<T>::type* __restrict__ partial,
                               T* __restrict__ grad_weight, const T* __restrict__ grad_out,
                               const T* __restrict__ grad_extra, const T* __restrict__ x,
                               const T* __restrict__ weight, int64_t rows, int hidden, int stages,
                               typename Acc<T>::type eps) {
  using A = typename Acc<T>::type;
  constexpr int V = kVec16<T>;
  using VecT = Vec<T, V>;
  extern __shared__ uint4 staged_smem[];
  __shared__ A scratch[32];
  const bool extra = grad_extra != nullptr;
  const int nvec = hidden / V;
  const int stage_vecs = (extra ? 3 : 2) * nvec;
  const A n = static_cast<A>(hidden);
  VecT* const smem = reinterpret_cast<VecT*>(staged_smem);
  const VecT* w = reinterpret_cast<const VecT*>(weight);
  const int64_t my_rows = (rows - blockIdx.x + gridDim.x - 1) / gridDim.x;  // grid <= rows

  A dw[C][V];
#pragma unroll
  for (int c = 0; c < C; ++c)
#pragma unroll
    for (int j = 0; j < V; ++j) dw[c][j] = 0;

  // Requests row k into stage `buf`; one commit group per row, empty past
  // the last row so the wait count stays fixed.
  auto request = [&](int64_t k, int buf) {
    if (k < my_rows) {
      const int64_t offset = (blockIdx.x + k * gridDim.x) * hidden;
      const VecT* xg = reinterpret_cast<const VecT*>(x + offset);
      const VecT* dyg = reinterpret_cast<const VecT*>(grad_out + offset);
      const VecT* eg = extra ? reinterpret_cast<const VecT*>(grad_extra + offset) : nullptr;
      VecT* st = smem + buf * stage_vecs;
#pragma unroll
      for (int c = 0; c < C; ++c) {
        const int i = threadIdx.x + c * blockDim.x;
        if (i < nvec) {
          cp_async16(st + i, xg + i);
          cp_async16(st + nvec + i, dyg + i);
          if (extra) cp_async16(st + 2 * nvec + i, eg + i);
        }
      }
    }
    cp_async_commit();
  };

  for (int k = 0; k < stages - 1; ++k) request(k, k);
  int buf = 0;                // stage of row k
  int next_buf = stages - 1;  // stage of row k + stages - 1
  for (int64_t k = 0; k < my_rows; ++k) {
    cp_async_wait(stages - 2);  // row k's group (this thread's copies) has landed
    const VecT* st = smem + buf * stage_vecs;
    A sums[2] = {0, 0};  // sum x^2, sum w*dy*x
#pragma unroll
    for (int c = 0; c < C; ++c) {
      const int i = threadIdx.x + c * blockDim.x;
      if (i < nvec) {
        const VecT xv = st[i];
        const VecT dyv = st[nvec + i];
        const VecT wv = w[i];
#pragma unroll
        for (int j = 0; j < V; ++j) {
          const A xf = to_acc<A>(xv.v[j]);
          sums[0] += xf * xf;
          sums[1] += to_acc<A>(dyv.v[j]) * to_acc<A>(wv.v[j]) * xf;
        }
      }
    }
    block_sum2(sums, scratch);
    // Refill the stage row k - 1 used; its last reads came before the
    // barriers in block_sum2.
    request(k + stages - 1, next_buf);
    const A rstd = A(1) / sqrt(sums[0] / n + eps);
    const A coef = rstd * rstd * rstd * sums[1] / n;
    VecT* gxr = reinterpret_cast<VecT*>(grad_x + (blockIdx.x + k * gridDim.x) * hidden);
#pragma unroll
    for (int c = 0; c < C; ++c) {
      const int i = threadIdx.x + c * blockDim.x;
      if (i < nvec) {
        const VecT xv = st[i];
        const VecT dyv = st[nvec + i];
        const VecT wv = w[i];
        VecT ev;
        if (extra) ev = st[2 * nvec + i];
        VecT g;
#pragma unroll
        for (int j = 0; j < V; ++j) {
          const A xf = to_acc<A>(xv.v[j]);
          const A dy = to_acc<A>(dyv.v[j]);
          A gx = rstd * dy * to_acc<A>(wv.v[j]) - coef * xf;
          if (extra) gx += to_acc<A>(ev.v[j]);
          g.v[j] = Cast<T>::from(gx);
          dw[c][j] += dy * xf * rstd;
        }
        gxr[i] = g;
      }
    }
    buf = buf + 1 == stages ? 0 : buf + 1;
    next_buf = next_buf + 1 == stages ? 0 : next_buf + 1;
  }
  store_dw<T, A, V, C>(dw, partial + static_cast<int64_t>(blockIdx.x) * hidden, grad_weight, nvec,
                       blockDim.x);
}

// Long double rows (too long to stage: hidden 4K-8K; fp32 8K-16K took it
// too until the C = 8 register kernel) in the v6 forward's manner: a
// persistent grid, one row at a time, nothing of the row held across the
// reduction. Pass 1 reads x, dy and w for the two sums; pass 2 re-reads them
// (the block's row, from L2) for dx and adds this thread's dw terms, which
// stay in registers for all the block's rows (C * V accumulators) and end in
// the block's partial row. Before it these rows took three kernels with
// element-wise loads, the weight gradient re-reading x and dy from memory
// (fp32 16384 x 16384 on an H100: 2.90 ms, 1.68 ms with this kernel;
// benchmarks/RESULTS.md). As in the staged and register kernels, each dw
// accumulator adds rows / grid terms in A; the fallback's column sums, which
// may run over ~10^5 rows, flush to double.
constexpr int kBwdTwoPassC = 8;
constexpr int kBwdTwoPassMaxThreads = 512;

template <typename T>
__global__ void __launch_bounds__(kBwdTwoPassMaxThreads)
    rms_norm_bwd_two_pass_kernel(T* __restrict__ grad_x,
                                 typename Acc<T>::type* __restrict__ partial,
                                 T* __restrict__ grad_weight, const T* __restrict__ grad_out,
                                 const T* __restrict__ grad_extra, const T* __restrict__ x,
                                 const T* __restrict__ weight, int64_t rows, int hidden,
                                 typename Acc<T>::type eps) {
  using A = typename Acc<T>::type;
  constexpr int V = kVec16<T>;
  constexpr int C = kBwdTwoPassC;
  using VecT = Vec<T, V>;
  __shared__ A scratch[32];
  const int nvec = hidden / V;
  const A n = static_cast<A>(hidden);
  const VecT* w = reinterpret_cast<const VecT*>(weight);
  A dw[C][V];
#pragma unroll
  for (int c = 0; c < C; ++c)
#pragma unroll
    for (int k = 0; k < V; ++k) dw[c][k] = 0;

  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const int64_t offset = row * hidden;
    const VecT* xr = reinterpret_cast<const VecT*>(x + offset);
    const VecT* dyr = reinterpret_cast<const VecT*>(grad_out + offset);
    A sums[2] = {0, 0};  // sum x^2, sum w*dy*x
#pragma unroll
    for (int c = 0; c < C; ++c) {
      const int i = threadIdx.x + c * blockDim.x;
      if (i < nvec) {
        const VecT xv = xr[i], dyv = dyr[i], wv = w[i];
#pragma unroll
        for (int k = 0; k < V; ++k) {
          const A xf = to_acc<A>(xv.v[k]);
          sums[0] += xf * xf;
          sums[1] += to_acc<A>(dyv.v[k]) * to_acc<A>(wv.v[k]) * xf;
        }
      }
    }
    block_sum2(sums, scratch);
    const A rstd = A(1) / sqrt(sums[0] / n + eps);
    const A coef = rstd * rstd * rstd * sums[1] / n;
    VecT* gxr = reinterpret_cast<VecT*>(grad_x + offset);
#pragma unroll
    for (int c = 0; c < C; ++c) {
      const int i = threadIdx.x + c * blockDim.x;
      if (i < nvec) {
        const VecT xv = xr[i], dyv = dyr[i], wv = w[i];
        VecT ev;
        if (grad_extra != nullptr) ev = reinterpret_cast<const VecT*>(grad_extra + offset)[i];
        VecT g;
#pragma unroll
        for (int k = 0; k < V; ++k) {
          const A xf = to_acc<A>(xv.v[k]);
          const A dy = to_acc<A>(dyv.v[k]);
          A gx = rstd * dy * to_acc<A>(wv.v[k]) - coef * xf;
          if (grad_extra != nullptr) gx += to_acc<A>(ev.v[k]);
          g.v[k] = Cast<T>::from(gx);
          dw[c][k] += dy * xf * rstd;
        }
        gxr[i] = g;
      }
    }
  }
  store_dw<T, A, V, C>(dw, partial + static_cast<int64_t>(blockIdx.x) * hidden, grad_weight, nvec,
                       blockDim.x);
}

// Long fp32 rows (2049-4096 vectors, hidden 8196-16384) keep the row in the
// register kernel at C = 8: x, dy and the dw sums take 32 registers each,
// ptxas allocates 128 (the cap for 512 threads) and spills nothing on sm_75,
// 80, 90, 100 and 120; on sm_86 (which sm_89 GPUs run too) it spills 8 bytes
// (ptxas -v, CUDA 13.0), not measured on such a GPU. One block of 9-16 warps
// per SM. It replaced the two-pass kernel there, whose second pass
// re-read x and dy, mostly from DRAM: H100, fp32 4096 rows, 12288 301 -> 220
// us, 16384 429 -> 288; measured on the H100 only (benchmarks/RESULTS.md).
// Double would take the same registers (16-byte vectors, 8-byte sums) but was
// not measured at C = 8, so it keeps the two-pass kernel.
constexpr int kBwdLongRowC = 8;
template <typename T, int V>
constexpr bool bwd_long_row_built() {
  return std::is_same_v<T, float> && V > 1;
}

// Rows the two-pass kernel takes: whole 16-byte vectors, at most C * 512 of
// them, with at most 32 registers of dw accumulators: double (fp32 takes the
// register kernel above; the 16-bit types' 64 would spill, so their rows over
// 16384 keep the fallback).
template <typename T>
constexpr bool bwd_two_pass_built() {
  return !bwd_long_row_built<T, kVec16<T>>() &&
         kBwdTwoPassC * kVec16<T> * sizeof(typename Acc<T>::type) <= 128;
}

// Terms a float running sum takes before it is added into a double, so no
// float sum covers more than 64 terms; the double add every 64 terms is a
// small cost (not measured) even where doubles run at 1/64 of the float rate.
constexpr int kFlushTerms = 64;

// Fallback for rows too long for registers: dx one block per row (re-reading
// from L2), rstd saved for the column-sum kernel below.
// Launched with 1024 threads: the bound keeps ptxas at <= 64 registers.
template <typename T>
__global__ void __launch_bounds__(1024)
    rms_norm_bwd_dx_kernel(T* __restrict__ grad_x, typename Acc<T>::type* __restrict__ rstd_out,
                           const T* __restrict__ grad_out, const T* __restrict__ grad_extra,
                           const T* __restrict__ x, const T* __restrict__ weight, int64_t rows,
                           int64_t hidden, typename Acc<T>::type eps) {
  using A = typename Acc<T>::type;
  __shared__ A scratch[32];
  const A n = static_cast<A>(hidden);
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T* xr = x + row * hidden;
    const T* dyr = grad_out + row * hidden;
    // Rows here are long (up to 2^31 elements, hidden / 1024 terms per thread):
    // as in the two-pass forward, kFlushTerms terms are summed in A, then
    // added into a double.
    double totals[2] = {0, 0};
    A sums[2] = {0, 0};
    int terms = 0;
    for (int64_t i = threadIdx.x; i < hidden; i += blockDim.x) {
      const A xf = to_acc<A>(xr[i]);
      sums[0] += xf * xf;
      sums[1] += to_acc<A>(dyr[i]) * to_acc<A>(weight[i]) * xf;
      if (++terms == kFlushTerms) {
        totals[0] += static_cast<double>(sums[0]);
        totals[1] += static_cast<double>(sums[1]);
        sums[0] = sums[1] = 0;
        terms = 0;
      }
    }
    sums[0] = static_cast<A>(totals[0] + static_cast<double>(sums[0]));
    sums[1] = static_cast<A>(totals[1] + static_cast<double>(sums[1]));
    block_sum2(sums, scratch);
    const A rstd = A(1) / sqrt(sums[0] / n + eps);
    const A coef = rstd * rstd * rstd * sums[1] / n;
    if (threadIdx.x == 0) rstd_out[row] = rstd;
    for (int64_t i = threadIdx.x; i < hidden; i += blockDim.x) {
      A gx = rstd * to_acc<A>(dyr[i]) * to_acc<A>(weight[i]) - coef * to_acc<A>(xr[i]);
      if (grad_extra != nullptr) gx += to_acc<A>(grad_extra[row * hidden + i]);
      grad_x[row * hidden + i] = Cast<T>::from(gx);
    }
  }
}

constexpr int kColsPerBlock = 256;

// partial[chunk, col] = sum over the chunk's rows of dy * x * rstd.
template <typename T>
__global__ void rms_norm_dw_partial_kernel(typename Acc<T>::type* __restrict__ partial,
                                           const T* __restrict__ grad_out, const T* __restrict__ x,
                                           const typename Acc<T>::type* __restrict__ rstd,
                                           int64_t rows, int64_t hidden, int64_t rows_per_chunk) {
  using A = typename Acc<T>::type;
  const int64_t col = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (col >= hidden) return;
  const int64_t begin = static_cast<int64_t>(blockIdx.y) * rows_per_chunk;
  const int64_t end = min(rows, begin + rows_per_chunk);
  // A chunk can be ~10^5 rows: the same float-then-double running sum as above.
  double total = 0;
  A acc = 0;
  int terms = 0;
  for (int64_t r = begin; r < end; ++r) {
    acc += to_acc<A>(grad_out[r * hidden + col]) * to_acc<A>(x[r * hidden + col]) * rstd[r];
    if (++terms == kFlushTerms) {
      total += static_cast<double>(acc);
      acc = 0;
      terms = 0;
    }
  }
  partial[blockIdx.y * hidden + col] = static_cast<A>(total + static_cast<double>(acc));
}

// grad_weight[col] = sum_p partial[p, col]. A block takes 32 columns; its 32
// warps split the partial rows, then combine through shared memory in a fixed
// order, so the result is deterministic.
constexpr int kSumCols = 32;
constexpr int kSumSplit = 32;

template <typename T>
__global__ void sum_partials_kernel(T* __restrict__ grad_weight,
                                    const typename Acc<T>::type* __restrict__ partial,
                                    int64_t num_partials, int64_t hidden) {
  using A = typename Acc<T>::type;
  __shared__ A acc_s[kSumSplit][kSumCols];
  const int64_t col = static_cast<int64_t>(blockIdx.x) * kSumCols + threadIdx.x;
  A acc = 0;
  if (col < hidden) {
#pragma unroll 4
    for (int64_t p = threadIdx.y; p < num_partials; p += kSumSplit)
      acc += partial[p * hidden + col];
  }
  acc_s[threadIdx.y][threadIdx.x] = acc;
  __syncthreads();
  if (threadIdx.y == 0 && col < hidden) {
    A total = 0;
#pragma unroll
    for (int s = 0; s < kSumSplit; ++s) total += acc_s[s][threadIdx.x];
    grad_weight[col] = Cast<T>::from(total);
  }
}

struct BwdPlan {
  RowPlan row;
  bool vectorised;
  StagedPlan staged;  // staged.threads > 0: the v5 kernel, with staged_c vectors per thread
  int staged_c;
  int two_pass_threads;  // > 0: rms_norm_bwd_two_pass_kernel with this many threads
  int64_t num_partials;
  int64_t grid;            // fused kernel blocks (== num_partials) or dx-kernel blocks
  int64_t rows_per_chunk;  // fallback only

  // One kernel (staged, two-pass or register), not the three-kernel fallback.
  bool fused() const { return staged.threads > 0 || two_pass_threads > 0 || row.cached; }
  // A one-block grid of a fused kernel writes grad_weight itself (store_dw):
  // no partial rows, no scratch, no sum_partials launch.
  bool writes_grad_weight() const { return fused() && num_partials == 1; }
};

// The one place that maps C (vectors per thread) to the backward register
// kernel: plan_bwd sizes the persistent grid for the kernel this picks, and
// launch_bwd_fused launches that same kernel. f gets the kernel (a function
// pointer), like the forward's go.
template <typename T, int V, typename F>
void with_bwd_kernel(int c, F&& f) {
  if constexpr (bwd_long_row_built<T, V>()) {
    if (c == kBwdLongRowC) return f(rms_norm_bwd_kernel<T, V, kBwdLongRowC>);
  }
  switch (c) {
    case 1:
      return f(rms_norm_bwd_kernel<T, V, 1>);
    case 2:
      return f(rms_norm_bwd_kernel<T, V, 2>);
    case 4:
      return f(rms_norm_bwd_kernel<T, V, 4>);
    default:
      // plan_bwd gives C = 8 only where it is built; anything else is a bug here.
      throw std::logic_error("fusedops: no rms_norm backward register kernel for this C");
  }
}

template <typename T, int V>
const void* bwd_kernel_for(int c) {
  const void* kernel = nullptr;
  with_bwd_kernel<T, V>(c, [&](auto k) { kernel = reinterpret_cast<const void*>(k); });
  return kernel;
}

// The same for the staged kernel: plan_bwd's plan_staged and launch_bwd_staged
// both go through this one switch.
template <typename T, typename F>
void with_bwd_staged_kernel(int c, F&& f) {
  switch (c) {
    case 1:
      return f(rms_norm_bwd_staged_kernel<T, 1>);
    case 2:
      return f(rms_norm_bwd_staged_kernel<T, 2>);
    default:
      return f(rms_norm_bwd_staged_kernel<T, 4>);
  }
}

template <typename T>
const void* bwd_staged_kernel_for(int c) {
  const void* kernel = nullptr;
  with_bwd_staged_kernel<T>(c, [&](auto k) { kernel = reinterpret_cast<const void*>(k); });
  return kernel;
}

// v5 backward: C = 1, 2 or 4 vectors per thread, 256 threads (512 for rows
// over 1024 vectors). C = 8 would cover rows up to 4096 vectors (bf16 hidden
// up to ~28K still fits two stages), but its 64 dw floats spill on sm_75 at 512
// threads; those rows take the v4 path.
constexpr int kBwdStagedMaxC = 4;
constexpr int64_t kBwdStagedMaxVecs = int64_t{kBwdStagedMaxC} * kStagedMaxThreads;

// Each staged block gets at least this many rows when rows are few. Each
// block writes one float partial row of dw that sum_partials_kernel reads
// back: 8 * hidden bytes of extra traffic per block, against 3 * 2 * hidden
// bytes per bf16 row it processes. With >= 8 rows a block that costs <= 17%
// extra (4096 x 2048 bf16: 512 partials instead of ~900), and the pipeline
// fill (about one row's latency) is paid over 8 rows; the grid still has at
// least one block per SM, so small problems keep every SM busy.
constexpr int64_t kMinRowsPerStagedBlock = 8;

// The two-pass kernel's grid gets the same floor when its blocks are 16 warps
// (double rows over 7680). Its partial rows are long (64 KB at 8192 doubles),
// and with a block per row past the SM count one is written and re-read for
// every row. Measured when fp32 still took this kernel: fp32 16384 went from
// 39.2 to 32.0 us at 256 rows on an H100 (29.8 -> 27.9 on an H200), 116.6 ->
// 100.3 at 1024 (H200: 83.7 -> 84.6). With 12-warp blocks (fp32 12288) one
// block per SM hid too little latency on the H200: 1024 rows 62.5 -> 70.4 us.
// benchmarks/RESULTS.md.
constexpr int64_t kMinRowsPerTwoPassBlock = 8;
constexpr int kTwoPassFloorMinThreads = 512;
static_assert(kTwoPassFloorMinThreads <= kBwdTwoPassMaxThreads,
              "the two-pass floor would never apply");

// A fused backward's grid: at most `resident` blocks, at most one per row, and
// at least `min_rows` rows a block once that still leaves a block per SM.
int64_t floored_grid(int64_t rows, int64_t resident, int sm_count, int64_t min_rows) {
  const int64_t enough = std::max<int64_t>(sm_count, (rows + min_rows - 1) / min_rows);
  return std::max<int64_t>(1, std::min({rows, resident, enough}));
}

template <typename T>
BwdPlan plan_bwd(int64_t rows, int64_t hidden, int sm_count, bool aligned, bool has_extra) {
  constexpr int V = kVec16<T>;
  BwdPlan p{};
  p.vectorised = aligned && hidden % V == 0;
  const int64_t nvec = p.vectorised ? hidden / V : hidden;
  if (p.vectorised && nvec <= kBwdStagedMaxVecs) {
    int c = 1;
    while (c < kBwdStagedMaxC && nvec > int64_t{c} * 256) c *= 2;  // then T = nvec / c <= 512
    const int threads =
        static_cast<int>(std::max<int64_t>(32, ((nvec + c - 1) / c + 31) / 32 * 32));
    const int64_t stage_bytes = nvec * 16 * (has_extra ? 3 : 2);
    p.staged = plan_staged(bwd_staged_kernel_for<T>(c), threads, stage_bytes, current_device());
    p.staged_c = c;
  }
  if (p.staged.threads > 0) {
    const int64_t resident = static_cast<int64_t>(sm_count) * p.staged.blocks_per_sm;
    p.grid = floored_grid(rows, resident, sm_count, kMinRowsPerStagedBlock);
    p.num_partials = p.grid;
    return p;
  }
  p.row = plan_row(nvec, kBwdMaxThreads);
  if constexpr (bwd_long_row_built<T, V>()) {
    // Cached from here on: the register kernel's persistent grid below.
    if (!p.row.cached && p.vectorised && nvec <= int64_t{kBwdLongRowC} * kBwdMaxThreads) {
      const int threads =
          static_cast<int>(((nvec + kBwdLongRowC - 1) / kBwdLongRowC + 31) / 32 * 32);
      p.row = RowPlan{kBwdLongRowC, threads, true};
    }
  }
  if constexpr (bwd_two_pass_built<T>()) {
    if (!p.row.cached && p.vectorised && nvec <= int64_t{kBwdTwoPassC} * kBwdTwoPassMaxThreads) {
      p.two_pass_threads =
          static_cast<int>(((nvec + kBwdTwoPassC - 1) / kBwdTwoPassC + 31) / 32 * 32);
      const void* kernel = reinterpret_cast<const void*>(rms_norm_bwd_two_pass_kernel<T>);
      const int64_t resident = resident_blocks(kernel, p.two_pass_threads, sm_count);
      const bool floor = p.two_pass_threads >= kTwoPassFloorMinThreads;
      p.grid = floored_grid(rows, resident, sm_count, floor ? kMinRowsPerTwoPassBlock : 1);
      p.num_partials = p.grid;
      return p;
    }
  }
  if (p.row.cached) {
    const void* kernel = p.vectorised ? bwd_kernel_for<T, V>(p.row.vecs_per_thread)
                                      : bwd_kernel_for<T, 1>(p.row.vecs_per_thread);
    p.grid = persistent_grid(kernel, p.row.threads, rows, sm_count);
    p.num_partials = p.grid;
  } else {
    p.grid = row_grid(rows);
    const int64_t col_blocks = (hidden + kColsPerBlock - 1) / kColsPerBlock;
    const int64_t chunks =
        std::max<int64_t>(1, std::min<int64_t>(rows, (sm_count * 8) / col_blocks + 1));
    p.rows_per_chunk = (rows + chunks - 1) / chunks;
    p.num_partials = (rows + p.rows_per_chunk - 1) / p.rows_per_chunk;
  }
  return p;
}

template <typename T>
int64_t bwd_scratch_bytes(int64_t rows, int64_t hidden, int sm_count) {
  using A = typename Acc<T>::type;
  if (rows == 0 || hidden == 0) return 0;
  // The plan depends on pointer alignment and on whether grad_extra is
  // given, both unknown here: size for the largest of the four plans. A
  // one-block grid of a fused kernel writes grad_weight itself (launch_bwd)
  // and needs none; only where all four plans are that (one row of at most
  // 2048 elements: longer unaligned rows take the fallback) is the size 0 and
  // the op allocates nothing.
  auto bytes = [&](const BwdPlan& b) {
    if (b.writes_grad_weight()) return int64_t{0};
    return static_cast<int64_t>(sizeof(A)) * (b.num_partials * hidden + (b.fused() ? 0 : rows));
  };
  int64_t most = 0;
  for (const bool aligned : {true, false}) {
    for (const bool extra : {true, false}) {
      most = std::max(most, bytes(plan_bwd<T>(rows, hidden, sm_count, aligned, extra)));
    }
  }
  return most;
}

template <typename T>
void launch_bwd_staged(const BwdPlan& p, T* grad_x, typename Acc<T>::type* partial, T* grad_weight,
                       const T* grad_out, const T* grad_extra, const T* x, const T* weight,
                       int64_t rows, int64_t hidden, typename Acc<T>::type eps,
                       cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>(p.grid));
  const int threads = p.staged.threads;
  const size_t smem = static_cast<size_t>(p.staged.smem_bytes);
  const int h = static_cast<int>(hidden);
  const int stages = p.staged.stages;
  with_bwd_staged_kernel<T>(p.staged_c, [&](auto kernel) {
    kernel<<<grid, threads, smem, stream>>>(grad_x, partial, grad_weight, grad_out, grad_extra, x,
                                            weight, rows, h, stages, eps);
  });
}

template <typename T, int V>
void launch_bwd_fused(const BwdPlan& p, T* grad_x, typename Acc<T>::type* partial, T* grad_weight,
                      const T* grad_out, const T* grad_extra, const T* x, const T* weight,
                      int64_t rows, int64_t hidden, typename Acc<T>::type eps,
                      cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>(p.grid));
  with_bwd_kernel<T, V>(p.row.vecs_per_thread, [&](auto kernel) {
    kernel<<<grid, p.row.threads, 0, stream>>>(grad_x, partial, grad_weight, grad_out, grad_extra,
                                               x, weight, rows, hidden, eps);
  });
}

template <typename T>
void launch_bwd(T* grad_x, T* grad_weight, const T* grad_out, const T* grad_extra, const T* x,
                const T* weight, int64_t rows, int64_t hidden, double eps, void* scratch,
                int sm_count, cudaStream_t stream) {
  using A = typename Acc<T>::type;
  constexpr int V = kVec16<T>;
  if (hidden == 0) return;
  // The scratch (partial rows of Vec<A, V>, up to 32 bytes) comes from torch's
  // caching allocator, 512-byte aligned; another allocator may give less.
  const bool aligned = aligned16(grad_x) && aligned16(grad_weight) && aligned16(grad_out) &&
                       aligned16(x) && aligned16(weight) &&
                       (grad_extra == nullptr || aligned16(grad_extra)) &&
                       reinterpret_cast<uintptr_t>(scratch) % 32 == 0;
  const BwdPlan p = plan_bwd<T>(rows, hidden, sm_count, aligned, grad_extra != nullptr);
  A* partial = static_cast<A*>(scratch);
  const A eps_a = static_cast<A>(eps);
  T* const direct = rows > 0 && p.writes_grad_weight() ? grad_weight : nullptr;
  if (rows > 0) {
    if (p.staged.threads > 0) {
      launch_bwd_staged<T>(p, grad_x, partial, direct, grad_out, grad_extra, x, weight, rows,
                           hidden, eps_a, stream);
    } else if (p.two_pass_threads > 0) {
      // plan_bwd sets two_pass_threads only where the kernel is built.
      if constexpr (bwd_two_pass_built<T>()) {
        rms_norm_bwd_two_pass_kernel<T>
            <<<static_cast<unsigned>(p.grid), p.two_pass_threads, 0, stream>>>(
                grad_x, partial, direct, grad_out, grad_extra, x, weight, rows,
                static_cast<int>(hidden), eps_a);
      }
    } else if (p.row.cached && p.vectorised) {
      launch_bwd_fused<T, V>(p, grad_x, partial, direct, grad_out, grad_extra, x, weight, rows,
                             hidden, eps_a, stream);
    } else if (p.row.cached) {
      launch_bwd_fused<T, 1>(p, grad_x, partial, direct, grad_out, grad_extra, x, weight, rows,
                             hidden, eps_a, stream);
    } else {
      A* rstd = partial + p.num_partials * hidden;
      rms_norm_bwd_dx_kernel<T><<<static_cast<unsigned>(p.grid), 1024, 0, stream>>>(
          grad_x, rstd, grad_out, grad_extra, x, weight, rows, hidden, eps_a);
      check_launch("rms_norm backward (dx) kernel launch");
      const dim3 grid(static_cast<unsigned>((hidden + kColsPerBlock - 1) / kColsPerBlock),
                      static_cast<unsigned>(p.num_partials));
      rms_norm_dw_partial_kernel<T><<<grid, kColsPerBlock, 0, stream>>>(
          partial, grad_out, x, rstd, rows, hidden, p.rows_per_chunk);
    }
    check_launch("rms_norm backward kernel launch");
  }
  if (direct != nullptr) return;
  const int64_t num_partials = rows > 0 ? p.num_partials : 0;
  const dim3 sum_grid(static_cast<unsigned>((hidden + kSumCols - 1) / kSumCols));
  sum_partials_kernel<T><<<sum_grid, dim3(kSumCols, kSumSplit), 0, stream>>>(grad_weight, partial,
                                                                             num_partials, hidden);
  check_launch("rms_norm backward (weight reduction) kernel launch");
}

}  // namespace
}  // namespace cuda

void rms_norm_cuda(DType dtype, void* out, const void* x, const void* weight, int64_t rows,
                   int64_t hidden, double eps, void* stream) {
  if (rows == 0 || hidden == 0) return;
  FUSEDOPS_CUDA_DISPATCH(dtype, [&] {
    cuda::launch_fwd<scalar_t>(
        static_cast<scalar_t*>(out), nullptr, static_cast<const scalar_t*>(x), nullptr,
        static_cast<const scalar_t*>(weight), rows, hidden, eps, static_cast<cudaStream_t>(stream));
  });
}

void fused_add_rms_norm_cuda(DType dtype, void* out, void* residual_out, const void* x,
                             const void* residual, const void* weight, int64_t rows, int64_t hidden,
                             double eps, void* stream) {
  if (rows == 0 || hidden == 0) return;
  FUSEDOPS_CUDA_DISPATCH(dtype, [&] {
    cuda::launch_fwd<scalar_t>(
        static_cast<scalar_t*>(out), static_cast<scalar_t*>(residual_out),
        static_cast<const scalar_t*>(x), static_cast<const scalar_t*>(residual),
        static_cast<const scalar_t*>(weight), rows, hidden, eps, static_cast<cudaStream_t>(stream));
  });
}

int64_t rms_norm_backward_cuda_scratch_bytes(DType dtype, int64_t rows, int64_t hidden,
                                             int device_sm_count) {
  return FUSEDOPS_CUDA_DISPATCH(
      dtype, [&] { return cuda::bwd_scratch_bytes<scalar_t>(rows, hidden, device_sm_count); });
}

void rms_norm_backward_cuda(DType dtype, void* grad_x, void* grad_weight, const void* grad_out,
                            const void* grad_extra, const void* x, const void* weight, int64_t rows,
                            int64_t hidden, double eps, void* scratch, int device_sm_count,
                            void* stream) {
  FUSEDOPS_CUDA_DISPATCH(dtype, [&] {
    cuda::launch_bwd<scalar_t>(
        static_cast<scalar_t*>(grad_x), static_cast<scalar_t*>(grad_weight),
        static_cast<const scalar_t*>(grad_out), static_cast<const scalar_t*>(grad_extra),
        static_cast<const scalar_t*>(x), static_cast<const scalar_t*>(weight), rows, hidden, eps,
        scratch, device_sm_count, static_cast<cudaStream_t>(stream));
  });
}

int cuda_sm_count(int device) { return cuda::device_limits(device).sm_count; }

}  // namespace fusedops::kernels
