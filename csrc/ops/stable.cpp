// Stable-ABI bindings: the op layer over the LibTorch stable ABI, registered
// with STABLE_TORCH_LIBRARY. Built with TORCH_TARGET_VERSION = 2.10, so one
// wheel runs on every torch >= 2.10 (FUSEDOPS_ABI=stable). classic.cpp is the
// same file for ATen; keep the two in step.
#include <torch/csrc/inductor/aoti_torch/c/shim.h>
#include <torch/csrc/stable/accelerator.h>
#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/ops.h>
#include <torch/csrc/stable/tensor.h>
#include <torch/headeronly/core/ScalarType.h>

#include <optional>
#include <string>
#include <vector>

#include "ops.h"
#include "schemas.h"

// torch >= 2.12's headers check shim calls with STABLE_TORCH_ERROR_CODE_CHECK,
// which adds torch's own message to the exception; 2.10 and 2.11 have only the
// header-only TORCH_ERROR_CODE_CHECK. A source build must work on both.
#ifndef STABLE_TORCH_ERROR_CODE_CHECK
#define STABLE_TORCH_ERROR_CODE_CHECK(call) TORCH_ERROR_CODE_CHECK(call)
#endif

namespace fusedops::ops {
namespace {

using torch::headeronly::ScalarType;

struct StableApi {
  using Tensor = torch::stable::Tensor;

  static std::optional<DType> dtype(const Tensor& t) {
    switch (t.scalar_type()) {
      case ScalarType::Float:
        return DType::kFloat32;
      case ScalarType::Half:
        return DType::kFloat16;
      case ScalarType::BFloat16:
        return DType::kBFloat16;
      case ScalarType::Double:
        return DType::kFloat64;
      default:
        return std::nullopt;
    }
  }
  static std::string dtype_str(const Tensor& t) {
    return torch::headeronly::toString(t.scalar_type());
  }
  static std::string device_str(const Tensor& t) {
    return t.is_cuda() ? "cuda:" + std::to_string(t.get_device_index())
                       : (t.is_cpu() ? "cpu" : "other");
  }
  // Device type and index, compared without building strings (every call checks).
  static bool same_device(const Tensor& a, const Tensor& b) {
    int32_t type_a = 0, type_b = 0;
    STABLE_TORCH_ERROR_CODE_CHECK(aoti_torch_get_device_type(a.get(), &type_a));
    STABLE_TORCH_ERROR_CODE_CHECK(aoti_torch_get_device_type(b.get(), &type_b));
    return type_a == type_b && a.get_device_index() == b.get_device_index();
  }
  static std::vector<int64_t> sizes(const Tensor& t) {
    const auto s = t.sizes();
    return std::vector<int64_t>(s.begin(), s.end());
  }
  static bool defined(const Tensor& t) { return t.defined(); }
  static int64_t numel(const Tensor& t) { return t.numel(); }
  static bool is_cuda(const Tensor& t) { return t.is_cuda(); }
  static int device_index(const Tensor& t) { return t.get_device_index(); }
  static void* data(const Tensor& t) { return t.data_ptr(); }

  // torch::stable::contiguous and new_empty are boxed calls through the
  // dispatcher (~1-2 us each, per call of an op that makes three of them);
  // a contiguous input needs no call at all, and an output is one
  // aoti_torch_empty_strided, the C shim the stable headers build on.
  static Tensor contiguous(const Tensor& t) {
    return t.is_contiguous() ? t : torch::stable::contiguous(t);
  }
  static Tensor empty_like(const Tensor& t) { return empty_as(t.sizes(), t, dtype_code(t)); }
  static Tensor empty(const std::vector<int64_t>& sizes, const Tensor& like) {
    return empty_as(sizes, like, dtype_code(like));
  }
  static Tensor empty_bytes(int64_t bytes, const Tensor& like) {
    return empty_as({bytes}, like, aoti_torch_dtype_uint8());
  }

  static kernels::ParallelFor parallel_for() {
    return [](int64_t n, int64_t grain, const kernels::RangeFn& body) {
      torch::stable::parallel_for(0, n, grain, body);
    };
  }

  static int32_t dtype_code(const Tensor& t) {
    int32_t code = 0;
    STABLE_TORCH_ERROR_CODE_CHECK(aoti_torch_get_dtype(t.get(), &code));
    return code;
  }
  // A new contiguous tensor of `sizes` and `dtype` on like's device.
  static Tensor empty_as(torch::headeronly::IntHeaderOnlyArrayRef sizes, const Tensor& like,
                         int32_t dtype) {
    std::vector<int64_t> strides(sizes.size());
    int64_t stride = 1;
    for (size_t i = sizes.size(); i-- > 0;) {
      strides[i] = stride;
      stride *= sizes[i] > 1 ? sizes[i] : 1;
    }
    int32_t device_type = 0;
    STABLE_TORCH_ERROR_CODE_CHECK(aoti_torch_get_device_type(like.get(), &device_type));
    AtenTensorHandle handle = nullptr;
    STABLE_TORCH_ERROR_CODE_CHECK(
        aoti_torch_empty_strided(static_cast<int64_t>(sizes.size()), sizes.data(), strides.data(),
                                 dtype, device_type, like.get_device_index(), &handle));
    return Tensor(handle);
  }

#ifdef FUSEDOPS_WITH_CUDA
  static torch::stable::accelerator::DeviceGuard device_guard(const Tensor& t) {
    return torch::stable::accelerator::DeviceGuard(t.get_device_index());
  }
  static void* current_stream(const Tensor& t) {
    void* stream = nullptr;
    STABLE_TORCH_ERROR_CODE_CHECK(
        aoti_torch_get_current_cuda_stream(t.get_device_index(), &stream));
    return stream;
  }
#endif
};

using StableOps = Ops<StableApi>;

}  // namespace
}  // namespace fusedops::ops

STABLE_TORCH_LIBRARY(fusedops, m) {
#define FUSEDOPS_DEF(name, schema) m.def(schema);
  FUSEDOPS_FOR_EACH_OP(FUSEDOPS_DEF)
#undef FUSEDOPS_DEF
}

// The same functions serve CPU and CUDA: they branch on the device, and a
// CPU-only build turns CUDA inputs into a clear error instead of a missing kernel.
#define FUSEDOPS_IMPL(name, schema) m.impl(#name, TORCH_BOX(&fusedops::ops::StableOps::name));

STABLE_TORCH_LIBRARY_IMPL(fusedops, CPU, m){FUSEDOPS_FOR_EACH_OP(FUSEDOPS_IMPL)}

STABLE_TORCH_LIBRARY_IMPL(fusedops, CUDA, m) {
  FUSEDOPS_FOR_EACH_OP(FUSEDOPS_IMPL)
}
