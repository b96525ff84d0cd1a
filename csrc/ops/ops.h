// The op layer, written once for both ABIs.
//
// Each op checks its inputs, makes them contiguous, allocates outputs, sets
// the device and stream, and calls a kernel from csrc/kernels. It is a
// template over an `Api` adapter that supplies tensor access:
// classic.cpp instantiates it with ATen (at::Tensor), stable.cpp with the
// LibTorch stable ABI (torch::stable::Tensor). The adapter interface is the
// set of static members used below; both adapters are about 80 lines.
#pragma once

#include <cstdint>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "../kernels/kernels.h"

namespace fusedops::ops {

using kernels::DType;

// Builds an error message from its parts and throws it as RuntimeError.
template <typename... Parts>
[[noreturn]] void fail(const char* op, const Parts&... parts) {
  std::ostringstream msg;
  msg << "fusedops." << op << ": ";
  (msg << ... << parts);
  throw std::runtime_error(msg.str());
}

inline std::string shape_str(const std::vector<int64_t>& sizes) {
  std::ostringstream s;
  s << "[";
  for (size_t i = 0; i < sizes.size(); ++i) s << (i ? ", " : "") << sizes[i];
  s << "]";
  return s.str();
}

template <class Api>
struct Ops {
  using Tensor = typename Api::Tensor;

  // ---- checks (the fake kernels in src/fusedops/ops.py mirror these) -----
  // A `Tensor` argument given None arrives as an undefined tensor; every
  // other check would read it. The first check of each argument (check_dtype
  // for x, check_same_device for the rest) calls this one.
  static void check_defined(const char* op, const char* name, const Tensor& t) {
    if (!Api::defined(t)) fail(op, "expected ", name, " to be a tensor, got None");
  }

  static DType check_dtype(const char* op, const char* name, const Tensor& t) {
    check_defined(op, name, t);
    const auto dtype = Api::dtype(t);
    if (!dtype) {
      fail(op, "expected ", name, " to have dtype float32, float16, bfloat16 or float64, got ",
           Api::dtype_str(t));
    }
    return *dtype;
  }

  static void check_same_dtype(const char* op, const char* name, const Tensor& t, const char* ref,
                               const Tensor& r) {
    if (Api::dtype(t) != Api::dtype(r)) {
      fail(op, "expected ", name, " to have the same dtype as ", ref, " (", Api::dtype_str(r),
           "), got ", Api::dtype_str(t));
    }
  }

  static void check_same_device(const char* op, const char* name, const Tensor& t, const char* ref,
                                const Tensor& r) {
    check_defined(op, name, t);
    if (!Api::same_device(t, r)) {
      fail(op, "expected ", name, " to be on the same device as ", ref, " (", Api::device_str(r),
           "), got ", Api::device_str(t));
    }
  }

  static void check_same_shape(const char* op, const char* name, const Tensor& t, const char* ref,
                               const Tensor& r) {
    if (Api::sizes(t) != Api::sizes(r)) {
      fail(op, "expected ", name, " to have the same shape as ", ref, " ", shape_str(Api::sizes(r)),
           ", got ", shape_str(Api::sizes(t)));
    }
  }

  static void check_at_least_1d(const char* op, const char* name, const Tensor& t) {
    if (Api::sizes(t).empty())
      fail(op, "expected ", name, " to have at least 1 dimension, got a scalar");
  }

  static void check_weight(const char* op, const Tensor& weight, const Tensor& x) {
    check_same_device(op, "weight", weight, "x", x);
    check_same_dtype(op, "weight", weight, "x", x);
    const auto xs = Api::sizes(x);
    if (Api::sizes(weight) != std::vector<int64_t>{xs.back()}) {
      fail(op, "expected weight to have shape [", xs.back(), "] (the last dimension of x), got ",
           shape_str(Api::sizes(weight)));
    }
  }

  static void check_eps(const char* op, double eps) {
    if (!(eps >= 0.0)) fail(op, "expected eps to be a non-negative number, got ", eps);
  }

  static DType check_norm_inputs(const char* op, const Tensor& x, const Tensor& weight,
                                 double eps) {
    const DType dtype = check_dtype(op, "x", x);
    check_at_least_1d(op, "x", x);
    check_weight(op, weight, x);
    check_eps(op, eps);
    return dtype;
  }

  static int64_t last_dim(const Tensor& t) { return Api::sizes(t).back(); }
  static int64_t rows_of(const Tensor& t) {
    const int64_t last = last_dim(t);
    return last == 0 ? 0 : Api::numel(t) / last;
  }

  [[noreturn]] static void no_cuda(const char* op) {
    fail(op,
         "got CUDA tensors, but this fusedops build is CPU-only (wheel variant +cpu); "
         "install a +cuXYZ wheel (run `python -m fusedops doctor` for the exact command)");
  }

  // ---- ops ------------------------------------------------------------------
  static Tensor rms_norm(const Tensor& x_in, const Tensor& weight_in, double eps) {
    const char* op = "rms_norm";
    const DType dtype = check_norm_inputs(op, x_in, weight_in, eps);
    const Tensor x = Api::contiguous(x_in);
    const Tensor weight = Api::contiguous(weight_in);
    Tensor out = Api::empty_like(x);
    const int64_t rows = rows_of(x), hidden = last_dim(x);
    if (Api::is_cuda(x)) {
#ifdef FUSEDOPS_WITH_CUDA
      auto guard = Api::device_guard(x);
      kernels::rms_norm_cuda(dtype, Api::data(out), Api::data(x), Api::data(weight), rows, hidden,
                             eps, Api::current_stream(x));
#else
      no_cuda(op);
#endif
    } else {
      kernels::rms_norm_cpu(dtype, Api::data(out), Api::data(x), Api::data(weight), rows, hidden,
                            eps, Api::parallel_for());
    }
    return out;
  }

  static std::tuple<Tensor, Tensor> fused_add_rms_norm(const Tensor& x_in,
                                                       const Tensor& residual_in,
                                                       const Tensor& weight_in, double eps) {
    const char* op = "fused_add_rms_norm";
    const DType dtype = check_norm_inputs(op, x_in, weight_in, eps);
    check_same_device(op, "residual", residual_in, "x", x_in);
    check_same_dtype(op, "residual", residual_in, "x", x_in);
    check_same_shape(op, "residual", residual_in, "x", x_in);
    const Tensor x = Api::contiguous(x_in);
    const Tensor residual = Api::contiguous(residual_in);
    const Tensor weight = Api::contiguous(weight_in);
    Tensor out = Api::empty_like(x);
    Tensor residual_out = Api::empty_like(x);
    const int64_t rows = rows_of(x), hidden = last_dim(x);
    if (Api::is_cuda(x)) {
#ifdef FUSEDOPS_WITH_CUDA
      auto guard = Api::device_guard(x);
      kernels::fused_add_rms_norm_cuda(dtype, Api::data(out), Api::data(residual_out), Api::data(x),
                                       Api::data(residual), Api::data(weight), rows, hidden, eps,
                                       Api::current_stream(x));
#else
      no_cuda(op);
#endif
    } else {
      kernels::fused_add_rms_norm_cpu(dtype, Api::data(out), Api::data(residual_out), Api::data(x),
                                      Api::data(residual), Api::data(weight), rows, hidden, eps,
                                      Api::parallel_for());
    }
    return {out, residual_out};
  }

  // Shared by rms_norm_backward and fused_add_rms_norm_backward: grad_extra,
  // when given, is added to grad_x (the gradient of residual_out).
  static std::tuple<Tensor, Tensor> norm_backward(const char* op, const Tensor& grad_out_in,
                                                  const Tensor* grad_extra_in, const Tensor& x_in,
                                                  const Tensor& weight_in, double eps) {
    const DType dtype = check_norm_inputs(op, x_in, weight_in, eps);
    check_same_device(op, "grad_out", grad_out_in, "x", x_in);
    check_same_dtype(op, "grad_out", grad_out_in, "x", x_in);
    check_same_shape(op, "grad_out", grad_out_in, "x", x_in);
    // std::optional: a default-constructed stable::Tensor allocates a handle.
    std::optional<Tensor> grad_extra;
    if (grad_extra_in != nullptr) {
      check_same_device(op, "grad_residual_out", *grad_extra_in, "x", x_in);
      check_same_dtype(op, "grad_residual_out", *grad_extra_in, "x", x_in);
      check_same_shape(op, "grad_residual_out", *grad_extra_in, "x", x_in);
      grad_extra.emplace(Api::contiguous(*grad_extra_in));
    }
    const void* extra = grad_extra ? Api::data(*grad_extra) : nullptr;
    const Tensor grad_out = Api::contiguous(grad_out_in);
    const Tensor x = Api::contiguous(x_in);
    const Tensor weight = Api::contiguous(weight_in);
    Tensor grad_x = Api::empty_like(x);
    Tensor grad_weight = Api::empty_like(weight);
    const int64_t rows = rows_of(x), hidden = last_dim(x);
    if (Api::is_cuda(x)) {
#ifdef FUSEDOPS_WITH_CUDA
      auto guard = Api::device_guard(x);
      const int sm_count = kernels::cuda_sm_count(Api::device_index(x));
      const int64_t scratch_bytes =
          kernels::rms_norm_backward_cuda_scratch_bytes(dtype, rows, hidden, sm_count);
      // Scratch from torch's caching allocator: no cudaMalloc in the op. The
      // size covers every plan the launch may pick (aligned or not); it is 0,
      // and nothing is allocated, only where all of them are one block (one
      // row of at most 2048 elements).
      std::optional<Tensor> scratch;
      if (scratch_bytes > 0) scratch.emplace(Api::empty_bytes(scratch_bytes, x));
      kernels::rms_norm_backward_cuda(dtype, Api::data(grad_x), Api::data(grad_weight),
                                      Api::data(grad_out), extra, Api::data(x), Api::data(weight),
                                      rows, hidden, eps, scratch ? Api::data(*scratch) : nullptr,
                                      sm_count, Api::current_stream(x));
#else
      no_cuda(op);
#endif
    } else {
      kernels::rms_norm_backward_cpu(dtype, Api::data(grad_x), Api::data(grad_weight),
                                     Api::data(grad_out), extra, Api::data(x), Api::data(weight),
                                     rows, hidden, eps, Api::parallel_for());
    }
    return {grad_x, grad_weight};
  }

  static std::tuple<Tensor, Tensor> rms_norm_backward(const Tensor& grad_out, const Tensor& x,
                                                      const Tensor& weight, double eps) {
    return norm_backward("rms_norm_backward", grad_out, nullptr, x, weight, eps);
  }

  static std::tuple<Tensor, Tensor> fused_add_rms_norm_backward(const Tensor& grad_out,
                                                                const Tensor& grad_residual_out,
                                                                const Tensor& residual_out,
                                                                const Tensor& weight, double eps) {
    return norm_backward("fused_add_rms_norm_backward", grad_out, &grad_residual_out, residual_out,
                         weight, eps);
  }

  static void check_glu_input(const char* op, const Tensor& x) {
    check_at_least_1d(op, "x", x);
    if (last_dim(x) % 2 != 0) {
      fail(op, "expected the last dimension of x to be even (2 * d), got ", last_dim(x));
    }
  }

  static std::vector<int64_t> halved_shape(const Tensor& x) {
    std::vector<int64_t> sizes = Api::sizes(x);
    sizes.back() /= 2;
    return sizes;
  }

  static Tensor silu_and_mul(const Tensor& x_in) {
    const char* op = "silu_and_mul";
    const DType dtype = check_dtype(op, "x", x_in);
    check_glu_input(op, x_in);
    const Tensor x = Api::contiguous(x_in);
    Tensor out = Api::empty(halved_shape(x), x);
    const int64_t d = last_dim(x) / 2;
    const int64_t rows = rows_of(x);
    if (Api::is_cuda(x)) {
#ifdef FUSEDOPS_WITH_CUDA
      auto guard = Api::device_guard(x);
      kernels::silu_and_mul_cuda(dtype, Api::data(out), Api::data(x), rows, d,
                                 Api::current_stream(x));
#else
      no_cuda(op);
#endif
    } else {
      kernels::silu_and_mul_cpu(dtype, Api::data(out), Api::data(x), rows, d, Api::parallel_for());
    }
    return out;
  }

  static Tensor silu_and_mul_backward(const Tensor& grad_out_in, const Tensor& x_in) {
    const char* op = "silu_and_mul_backward";
    const DType dtype = check_dtype(op, "x", x_in);
    check_glu_input(op, x_in);
    check_same_device(op, "grad_out", grad_out_in, "x", x_in);
    check_same_dtype(op, "grad_out", grad_out_in, "x", x_in);
    if (Api::sizes(grad_out_in) != halved_shape(x_in)) {
      fail(op, "expected grad_out to have shape ", shape_str(halved_shape(x_in)),
           " (x's shape with the last dimension halved), got ", shape_str(Api::sizes(grad_out_in)));
    }
    const Tensor x = Api::contiguous(x_in);
    const Tensor grad_out = Api::contiguous(grad_out_in);
    Tensor grad_x = Api::empty_like(x);
    const int64_t d = last_dim(x) / 2;
    const int64_t rows = rows_of(x);
    if (Api::is_cuda(x)) {
#ifdef FUSEDOPS_WITH_CUDA
      auto guard = Api::device_guard(x);
      kernels::silu_and_mul_backward_cuda(dtype, Api::data(grad_x), Api::data(grad_out),
                                          Api::data(x), rows, d, Api::current_stream(x));
#else
      no_cuda(op);
#endif
    } else {
      kernels::silu_and_mul_backward_cpu(dtype, Api::data(grad_x), Api::data(grad_out),
                                         Api::data(x), rows, d, Api::parallel_for());
    }
    return grad_x;
  }
};

}  // namespace fusedops::ops
