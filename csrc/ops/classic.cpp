// Classic-ABI bindings: the op layer over ATen, registered with TORCH_LIBRARY.
// One wheel per torch minor and Python (FUSEDOPS_ABI=classic). stable.cpp is
// the same file for the LibTorch stable ABI; keep the two in step.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/library.h>

#ifdef FUSEDOPS_WITH_CUDA
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#endif

#include <optional>
#include <string>
#include <vector>

#include "ops.h"
#include "schemas.h"

namespace fusedops::ops {
namespace {

struct ClassicApi {
  using Tensor = at::Tensor;

  static std::optional<DType> dtype(const Tensor& t) {
    switch (t.scalar_type()) {
      case at::kFloat:
        return DType::kFloat32;
      case at::kHalf:
        return DType::kFloat16;
      case at::kBFloat16:
        return DType::kBFloat16;
      case at::kDouble:
        return DType::kFloat64;
      default:
        return std::nullopt;
    }
  }
  static std::string dtype_str(const Tensor& t) { return c10::toString(t.scalar_type()); }
  static std::string device_str(const Tensor& t) { return t.device().str(); }
  static bool same_device(const Tensor& a, const Tensor& b) { return a.device() == b.device(); }
  static std::vector<int64_t> sizes(const Tensor& t) { return t.sizes().vec(); }
  static bool defined(const Tensor& t) { return t.defined(); }
  static int64_t numel(const Tensor& t) { return t.numel(); }
  static bool is_cuda(const Tensor& t) { return t.is_cuda(); }
  static int device_index(const Tensor& t) { return t.get_device(); }
  static void* data(const Tensor& t) { return t.data_ptr(); }

  static Tensor contiguous(const Tensor& t) { return t.contiguous(); }
  static Tensor empty_like(const Tensor& t) { return at::empty(t.sizes(), t.options()); }
  static Tensor empty(const std::vector<int64_t>& sizes, const Tensor& like) {
    return at::empty(sizes, like.options());
  }
  static Tensor empty_bytes(int64_t bytes, const Tensor& like) {
    return at::empty({bytes}, like.options().dtype(at::kByte));
  }

  static kernels::ParallelFor parallel_for() {
    return [](int64_t n, int64_t grain, const kernels::RangeFn& body) {
      at::parallel_for(0, n, grain, body);
    };
  }

#ifdef FUSEDOPS_WITH_CUDA
  static c10::cuda::CUDAGuard device_guard(const Tensor& t) {
    return c10::cuda::CUDAGuard(t.device());
  }
  static void* current_stream(const Tensor& t) {
    return c10::cuda::getCurrentCUDAStream(t.get_device()).stream();
  }
#endif
};

using ClassicOps = Ops<ClassicApi>;

}  // namespace
}  // namespace fusedops::ops

TORCH_LIBRARY(fusedops, m) {
#define FUSEDOPS_DEF(name, schema) m.def(schema);
  FUSEDOPS_FOR_EACH_OP(FUSEDOPS_DEF)
#undef FUSEDOPS_DEF
}

// The same functions serve CPU and CUDA: they branch on the device, and a
// CPU-only build turns CUDA inputs into a clear error instead of a missing kernel.
#define FUSEDOPS_IMPL(name, schema) m.impl(#name, &fusedops::ops::ClassicOps::name);

TORCH_LIBRARY_IMPL(fusedops, CPU, m){FUSEDOPS_FOR_EACH_OP(FUSEDOPS_IMPL)}

TORCH_LIBRARY_IMPL(fusedops, CUDA, m) {
  FUSEDOPS_FOR_EACH_OP(FUSEDOPS_IMPL)
}
