// The kernel layer: plain C++/CUDA over raw pointers, sizes and a stream.
//
// Nothing here includes a torch header, so the same kernels serve both the
// classic (ATen) and the stable-ABI bindings in csrc/ops/. Every tensor is
// viewed as a contiguous [rows, cols] matrix; the op layer makes it so.
#pragma once

#include <cstdint>
#include <functional>

namespace fusedops::kernels {

// The dtypes every op supports, named once.
enum class DType : int8_t { kFloat32, kFloat16, kBFloat16, kFloat64 };

const char* dtype_name(DType dtype);
// Bytes per element.
int64_t dtype_size(DType dtype);

// Runs body(begin, end) over [0, n) in chunks of at least `grain` items. The
// op layer passes torch's intra-op thread pool so CPU kernels honour
// torch.set_num_threads.
using RangeFn = std::function<void(int64_t, int64_t)>;
using ParallelFor = std::function<void(int64_t n, int64_t grain, const RangeFn& body)>;

// ---- CPU ----------------------------------------------------------------
// Outputs must be memory the op has just allocated for them (csrc/ops does):
// the kernels may advise the OS on its pages (cpu/huge_pages.h).

// out[r, :] = x[r, :] * rsqrt(mean(x[r, :]^2) + eps) * weight
void rms_norm_cpu(DType dtype, void* out, const void* x, const void* weight, int64_t rows,
                  int64_t hidden, double eps, const ParallelFor& parallel);

// residual_out = x + residual; out = rms_norm(residual_out, weight)
void fused_add_rms_norm_cpu(DType dtype, void* out, void* residual_out, const void* x,
                            const void* residual, const void* weight, int64_t rows, int64_t hidden,
                            double eps, const ParallelFor& parallel);

// grad_x (+= grad_extra when given) and grad_weight of y = rms_norm(x, weight).
// grad_extra may be null; it is the gradient that flows straight into x (the
// residual_out gradient of fused_add_rms_norm).
void rms_norm_backward_cpu(DType dtype, void* grad_x, void* grad_weight, const void* grad_out,
                           const void* grad_extra, const void* x, const void* weight, int64_t rows,
                           int64_t hidden, double eps, const ParallelFor& parallel);

// out[r, :] = silu(x[r, :d]) * x[r, d:]
void silu_and_mul_cpu(DType dtype, void* out, const void* x, int64_t rows, int64_t d,
                      const ParallelFor& parallel);

void silu_and_mul_backward_cpu(DType dtype, void* grad_x, const void* grad_out, const void* x,
                               int64_t rows, int64_t d, const ParallelFor& parallel);

// ---- CUDA ---------------------------------------------------------------
// All launch on `stream` (a cudaStream_t) on the current device and throw
// std::runtime_error on a launch error. Scratch memory comes from the caller
// (torch's caching allocator), never from cudaMalloc.
#ifdef FUSEDOPS_WITH_CUDA
void rms_norm_cuda(DType dtype, void* out, const void* x, const void* weight, int64_t rows,
                   int64_t hidden, double eps, void* stream);

void fused_add_rms_norm_cuda(DType dtype, void* out, void* residual_out, const void* x,
                             const void* residual, const void* weight, int64_t rows, int64_t hidden,
                             double eps, void* stream);

// Bytes of float scratch rms_norm_backward_cuda needs (may be 0; the scratch
// pointer may then be null).
int64_t rms_norm_backward_cuda_scratch_bytes(DType dtype, int64_t rows, int64_t hidden,
                                             int device_sm_count);

void rms_norm_backward_cuda(DType dtype, void* grad_x, void* grad_weight, const void* grad_out,
                            const void* grad_extra, const void* x, const void* weight, int64_t rows,
                            int64_t hidden, double eps, void* scratch, int device_sm_count,
                            void* stream);

void silu_and_mul_cuda(DType dtype, void* out, const void* x, int64_t rows, int64_t d,
                       void* stream);

void silu_and_mul_backward_cuda(DType dtype, void* grad_x, const void* grad_out, const void* x,
                                int64_t rows, int64_t d, void* stream);

// Number of SMs of `device` (cached per device).
int cuda_sm_count(int device);
#endif

}  // namespace fusedops::kernels
