// RMSNorm, fused residual-add + RMSNorm and their backward on CUDA.
//
// Forward: one block per row (grid-strided for huge row counts). Each thread
// keeps up to kCache vectors of its row in registers between the reduction
// and the output pass, so a row is read from memory once; longer rows re-read
// the remainder (from L2). Backward: a persistent grid; each block walks a
// strided set of rows and keeps the weight-gradient partial sums for its
// columns in registers, then writes one partial row; a second kernel sums the
// partials. Rows too long for that fall back to a per-row dx kernel plus a
// column-sum kernel.
#include <algorithm>

#include "common.cuh"

namespace fusedops::kernels {
namespace cuda {
namespace {

constexpr int kCache = 4;           // vectors per thread held in registers
constexpr int kMaxThreads = 1024;   // forward block size cap
constexpr int kBwdMaxThreads = 512; // backward: x and dy cached, so fewer threads
constexpr int kColsPerBlock = 256;  // fallback column-sum kernel

int threads_for(int64_t nvec, int max_threads) {
  const int64_t want = (nvec + kCache - 1) / kCache;
  const int64_t rounded = ((want + 31) / 32) * 32;
  return static_cast<int>(std::min<int64_t>(std::max<int64_t>(rounded, 32), max_threads));
}

int grid_for_rows(int64_t rows) { return static_cast<int>(std::min<int64_t>(rows, 1 << 30)); }

template <typename T, int V>
__global__ void rms_norm_fwd_kernel(T* __restrict__ out, T* __restrict__ residual_out,
                                    const T* __restrict__ x, const T* __restrict__ residual,
                                    const T* __restrict__ weight, int64_t rows, int64_t hidden,
                                    typename Acc<T>::type eps) {
  using A = typename Acc<T>::type;
  using VecT = Vec<T, V>;
  __shared__ A scratch[32];
  const bool add = residual != nullptr;
  const int64_t nvec = hidden / V;
  const VecT* w = reinterpret_cast<const VecT*>(weight);

  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const VecT* xr = reinterpret_cast<const VecT*>(x + row * hidden);
    const VecT* rr = add ? reinterpret_cast<const VecT*>(residual + row * hidden) : nullptr;
    VecT* sr = add ? reinterpret_cast<VecT*>(residual_out + row * hidden) : nullptr;
    VecT* outr = reinterpret_cast<VecT*>(out + row * hidden);

    // Pass 1: load (and add the residual), sum of squares.
    VecT cache[kCache];
    A sum_sq = 0;
    auto load_row_vec = [&](int64_t i) {
      VecT v = xr[i];
      if (add) {
        const VecT r = rr[i];
#pragma unroll
        for (int k = 0; k < V; ++k) v.v[k] = Cast<T>::from(to_acc<A>(v.v[k]) + to_acc<A>(r.v[k]));
        sr[i] = v;
      }
#pragma unroll
      for (int k = 0; k < V; ++k) {
        const A f = to_acc<A>(v.v[k]);
        sum_sq += f * f;
      }
      return v;
    };
#pragma unroll
    for (int c = 0; c < kCache; ++c) {
      const int64_t i = threadIdx.x + static_cast<int64_t>(c) * blockDim.x;
      if (i < nvec) cache[c] = load_row_vec(i);
    }
    for (int64_t i = threadIdx.x + static_cast<int64_t>(kCache) * blockDim.x; i < nvec;
         i += blockDim.x) {
      load_row_vec(i);
    }
    sum_sq = block_sum(sum_sq, scratch);
    const A rstd = A(1) / sqrt(sum_sq / static_cast<A>(hidden) + eps);

    // Pass 2: scale and store.
    auto store_vec = [&](int64_t i, const VecT& v) {
      const VecT wv = w[i];
      VecT o;
#pragma unroll
      for (int k = 0; k < V; ++k) o.v[k] = Cast<T>::from(to_acc<A>(v.v[k]) * rstd * to_acc<A>(wv.v[k]));
      outr[i] = o;
    };
#pragma unroll
    for (int c = 0; c < kCache; ++c) {
      const int64_t i = threadIdx.x + static_cast<int64_t>(c) * blockDim.x;
      if (i < nvec) store_vec(i, cache[c]);
    }
    for (int64_t i = threadIdx.x + static_cast<int64_t>(kCache) * blockDim.x; i < nvec;
         i += blockDim.x) {
      // This thread wrote residual_out[i] itself in pass 1, so reading it back is safe.
      store_vec(i, add ? sr[i] : xr[i]);
    }
  }
}

template <typename T>
void launch_fwd(T* out, T* residual_out, const T* x, const T* residual, const T* weight,
                int64_t rows, int64_t hidden, double eps, cudaStream_t stream) {
  using A = typename Acc<T>::type;
  constexpr int V = kVec16<T>;
  const bool vectorised = hidden % V == 0 && aligned16(out) && aligned16(x) && aligned16(weight) &&
                          (residual == nullptr || (aligned16(residual) && aligned16(residual_out)));
  const dim3 grid(grid_for_rows(rows));
  if (vectorised) {
    rms_norm_fwd_kernel<T, V><<<grid, threads_for(hidden / V, kMaxThreads), 0, stream>>>(
        out, residual_out, x, residual, weight, rows, hidden, static_cast<A>(eps));
  } else {
    rms_norm_fwd_kernel<T, 1><<<grid, threads_for(hidden, kMaxThreads), 0, stream>>>(
        out, residual_out, x, residual, weight, rows, hidden, static_cast<A>(eps));
  }
  check_launch("rms_norm forward kernel launch");
}

// ---- backward ------------------------------------------------------------

// Persistent-grid backward for rows of at most kCache * blockDim vectors.
// partial[blockIdx.x, :] receives this block's share of grad_weight.
template <typename T, int V>
__global__ void rms_norm_bwd_kernel(T* __restrict__ grad_x, typename Acc<T>::type* __restrict__ partial,
                                    const T* __restrict__ grad_out, const T* __restrict__ grad_extra,
                                    const T* __restrict__ x, const T* __restrict__ weight,
                                    int64_t rows, int64_t hidden, typename Acc<T>::type eps) {
  using A = typename Acc<T>::type;
  using VecT = Vec<T, V>;
  __shared__ A scratch[32];
  const int64_t nvec = hidden / V;
  const VecT* w = reinterpret_cast<const VecT*>(weight);
  A dw[kCache][V];
#pragma unroll
  for (int c = 0; c < kCache; ++c)
#pragma unroll
    for (int k = 0; k < V; ++k) dw[c][k] = 0;

  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const VecT* xr = reinterpret_cast<const VecT*>(x + row * hidden);
    const VecT* dyr = reinterpret_cast<const VecT*>(grad_out + row * hidden);
    VecT xc[kCache], dyc[kCache];
    A sum_sq = 0, sum_wdyx = 0;
#pragma unroll
    for (int c = 0; c < kCache; ++c) {
      const int64_t i = threadIdx.x + static_cast<int64_t>(c) * blockDim.x;
      if (i < nvec) {
        xc[c] = xr[i];
        dyc[c] = dyr[i];
        const VecT wv = w[i];
#pragma unroll
        for (int k = 0; k < V; ++k) {
          const A xf = to_acc<A>(xc[c].v[k]);
          sum_sq += xf * xf;
          sum_wdyx += to_acc<A>(dyc[c].v[k]) * to_acc<A>(wv.v[k]) * xf;
        }
      }
    }
    // One reduction for both sums would need a pair type; two are cheap here.
    sum_sq = block_sum(sum_sq, scratch);
    sum_wdyx = block_sum(sum_wdyx, scratch);
    const A n = static_cast<A>(hidden);
    const A rstd = A(1) / sqrt(sum_sq / n + eps);
    const A coef = rstd * rstd * rstd * sum_wdyx / n;
#pragma unroll
    for (int c = 0; c < kCache; ++c) {
      const int64_t i = threadIdx.x + static_cast<int64_t>(c) * blockDim.x;
      if (i < nvec) {
        const VecT wv = w[i];
        VecT extra;
        if (grad_extra != nullptr) extra = reinterpret_cast<const VecT*>(grad_extra + row * hidden)[i];
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
  A* pr = partial + static_cast<int64_t>(blockIdx.x) * hidden;
#pragma unroll
  for (int c = 0; c < kCache; ++c) {
    const int64_t i = threadIdx.x + static_cast<int64_t>(c) * blockDim.x;
    if (i < nvec) {
#pragma unroll
      for (int k = 0; k < V; ++k) pr[i * V + k] = dw[c][k];
    }
  }
}

// Fallback for very long rows: grad_x one block per row (re-reading from L2),
// with rstd saved for the column-sum kernel below.
template <typename T>
__global__ void rms_norm_bwd_dx_kernel(T* __restrict__ grad_x, typename Acc<T>::type* __restrict__ rstd_out,
                                       const T* __restrict__ grad_out, const T* __restrict__ grad_extra,
                                       const T* __restrict__ x, const T* __restrict__ weight,
                                       int64_t rows, int64_t hidden, typename Acc<T>::type eps) {
  using A = typename Acc<T>::type;
  __shared__ A scratch[32];
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T* xr = x + row * hidden;
    const T* dyr = grad_out + row * hidden;
    A sum_sq = 0, sum_wdyx = 0;
    for (int64_t i = threadIdx.x; i < hidden; i += blockDim.x) {
      const A xf = to_acc<A>(xr[i]);
      sum_sq += xf * xf;
      sum_wdyx += to_acc<A>(dyr[i]) * to_acc<A>(weight[i]) * xf;
    }
    sum_sq = block_sum(sum_sq, scratch);
    sum_wdyx = block_sum(sum_wdyx, scratch);
    const A n = static_cast<A>(hidden);
    const A rstd = A(1) / sqrt(sum_sq / n + eps);
    const A coef = rstd * rstd * rstd * sum_wdyx / n;
    if (threadIdx.x == 0) rstd_out[row] = rstd;
    for (int64_t i = threadIdx.x; i < hidden; i += blockDim.x) {
      A gx = rstd * to_acc<A>(dyr[i]) * to_acc<A>(weight[i]) - coef * to_acc<A>(xr[i]);
      if (grad_extra != nullptr) gx += to_acc<A>(grad_extra[row * hidden + i]);
      grad_x[row * hidden + i] = Cast<T>::from(gx);
    }
  }
}

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
  A acc = 0;
  for (int64_t r = begin; r < end; ++r) {
    acc += to_acc<A>(grad_out[r * hidden + col]) * to_acc<A>(x[r * hidden + col]) * rstd[r];
  }
  partial[blockIdx.y * hidden + col] = acc;
}

// grad_weight[col] = sum_p partial[p, col], in a fixed order (deterministic).
template <typename T>
__global__ void sum_partials_kernel(T* __restrict__ grad_weight,
                                    const typename Acc<T>::type* __restrict__ partial,
                                    int64_t num_partials, int64_t hidden) {
  using A = typename Acc<T>::type;
  const int64_t col = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (col >= hidden) return;
  A acc = 0;
  for (int64_t p = 0; p < num_partials; ++p) acc += partial[p * hidden + col];
  grad_weight[col] = Cast<T>::from(acc);
}

struct BwdPlan {
  bool fused;          // persistent kernel with register-held dw
  bool vectorised;     // 16-byte accesses
  int threads;
  int64_t grid;        // blocks of the dx kernel (= partial rows when fused)
  int64_t num_partials;
  int64_t rows_per_chunk;  // fallback only
};

template <typename T>
BwdPlan plan_bwd(int64_t rows, int64_t hidden, int sm_count, bool aligned) {
  constexpr int V = kVec16<T>;
  BwdPlan p{};
  p.vectorised = aligned && hidden % V == 0;
  const int64_t nvec = p.vectorised ? hidden / V : hidden;
  p.fused = nvec <= static_cast<int64_t>(kCache) * kBwdMaxThreads;
  if (p.fused) {
    p.threads = threads_for(nvec, kBwdMaxThreads);
    const int64_t blocks_per_sm = std::max<int64_t>(1, 2048 / p.threads);
    p.grid = std::max<int64_t>(1, std::min<int64_t>(rows, sm_count * blocks_per_sm));
    p.num_partials = p.grid;
  } else {
    p.threads = kMaxThreads;
    p.grid = grid_for_rows(rows);
    const int64_t col_blocks = (hidden + kColsPerBlock - 1) / kColsPerBlock;
    const int64_t chunks = std::max<int64_t>(1, std::min<int64_t>(rows, (sm_count * 8) / col_blocks + 1));
    p.rows_per_chunk = (rows + chunks - 1) / chunks;
    p.num_partials = (rows + p.rows_per_chunk - 1) / p.rows_per_chunk;
  }
  return p;
}

template <typename T>
int64_t bwd_scratch_bytes(int64_t rows, int64_t hidden, int sm_count) {
  using A = typename Acc<T>::type;
  if (rows == 0 || hidden == 0) return 0;
  // Alignment only changes the vector width; plan for the aligned case, which
  // needs the most scratch when it decides between the fused and fallback paths.
  const BwdPlan p = plan_bwd<T>(rows, hidden, sm_count, true);
  const BwdPlan q = plan_bwd<T>(rows, hidden, sm_count, false);
  auto bytes = [&](const BwdPlan& b) {
    return static_cast<int64_t>(sizeof(A)) * (b.num_partials * hidden + (b.fused ? 0 : rows));
  };
  return std::max(bytes(p), bytes(q));
}

template <typename T>
void launch_bwd(T* grad_x, T* grad_weight, const T* grad_out, const T* grad_extra, const T* x,
                const T* weight, int64_t rows, int64_t hidden, double eps, void* scratch,
                int sm_count, cudaStream_t stream) {
  using A = typename Acc<T>::type;
  constexpr int V = kVec16<T>;
  if (hidden == 0) return;
  const bool aligned = aligned16(grad_x) && aligned16(grad_out) && aligned16(x) &&
                       aligned16(weight) && (grad_extra == nullptr || aligned16(grad_extra));
  const BwdPlan p = plan_bwd<T>(rows, hidden, sm_count, aligned);
  A* partial = static_cast<A*>(scratch);
  const A eps_a = static_cast<A>(eps);
  if (rows > 0) {
    if (p.fused && p.vectorised) {
      rms_norm_bwd_kernel<T, V><<<p.grid, p.threads, 0, stream>>>(
          grad_x, partial, grad_out, grad_extra, x, weight, rows, hidden, eps_a);
    } else if (p.fused) {
      rms_norm_bwd_kernel<T, 1><<<p.grid, p.threads, 0, stream>>>(
          grad_x, partial, grad_out, grad_extra, x, weight, rows, hidden, eps_a);
    } else {
      A* rstd = partial + p.num_partials * hidden;
      rms_norm_bwd_dx_kernel<T><<<p.grid, p.threads, 0, stream>>>(
          grad_x, rstd, grad_out, grad_extra, x, weight, rows, hidden, eps_a);
      check_launch("rms_norm backward (dx) kernel launch");
      const dim3 grid((hidden + kColsPerBlock - 1) / kColsPerBlock, p.num_partials);
      rms_norm_dw_partial_kernel<T><<<grid, kColsPerBlock, 0, stream>>>(
          partial, grad_out, x, rstd, rows, hidden, p.rows_per_chunk);
    }
    check_launch("rms_norm backward kernel launch");
  }
  const int64_t num_partials = rows > 0 ? p.num_partials : 0;
  sum_partials_kernel<T><<<(hidden + 255) / 256, 256, 0, stream>>>(grad_weight, partial,
                                                                   num_partials, hidden);
  check_launch("rms_norm backward (weight reduction) kernel launch");
}

}  // namespace
}  // namespace cuda

void rms_norm_cuda(DType dtype, void* out, const void* x, const void* weight, int64_t rows,
                   int64_t hidden, double eps, void* stream) {
  if (rows == 0 || hidden == 0) return;
  FUSEDOPS_CUDA_DISPATCH(dtype, [&] {
    cuda::launch_fwd<scalar_t>(static_cast<scalar_t*>(out), nullptr,
                               static_cast<const scalar_t*>(x), nullptr,
                               static_cast<const scalar_t*>(weight), rows, hidden, eps,
                               static_cast<cudaStream_t>(stream));
  });
}

void fused_add_rms_norm_cuda(DType dtype, void* out, void* residual_out, const void* x,
                             const void* residual, const void* weight, int64_t rows,
                             int64_t hidden, double eps, void* stream) {
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
  return FUSEDOPS_CUDA_DISPATCH(dtype, [&] {
    return cuda::bwd_scratch_bytes<scalar_t>(rows, hidden, device_sm_count);
  });
}

void rms_norm_backward_cuda(DType dtype, void* grad_x, void* grad_weight, const void* grad_out,
                            const void* grad_extra, const void* x, const void* weight,
                            int64_t rows, int64_t hidden, double eps, void* scratch,
                            int device_sm_count, void* stream) {
  FUSEDOPS_CUDA_DISPATCH(dtype, [&] {
    cuda::launch_bwd<scalar_t>(
        static_cast<scalar_t*>(grad_x), static_cast<scalar_t*>(grad_weight),
        static_cast<const scalar_t*>(grad_out), static_cast<const scalar_t*>(grad_extra),
        static_cast<const scalar_t*>(x), static_cast<const scalar_t*>(weight), rows, hidden, eps,
        scratch, device_sm_count, static_cast<cudaStream_t>(stream));
  });
}

int cuda_sm_count(int device) {
  // Queried per call: cudaDeviceGetAttribute is a cheap host-side lookup.
  int count = 0;
  cuda::check_cuda(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device),
                   "cudaDeviceGetAttribute(MultiProcessorCount)");
  return count;
}

}  // namespace fusedops::kernels
