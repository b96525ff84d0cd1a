// Every fusedops schema, defined once. classic.cpp and stable.cpp expand this
// list into their registrations, so both ABIs expose identical ops.
//
// X(name, schema): the public ops first, then the backward ops used by the
// autograd formulas in src/fusedops/ops.py.
#pragma once

#define FUSEDOPS_FOR_EACH_OP(X)                                                         \
  X(rms_norm, "rms_norm(Tensor x, Tensor weight, float eps=1e-06) -> Tensor")           \
  X(fused_add_rms_norm,                                                                 \
    "fused_add_rms_norm(Tensor x, Tensor residual, Tensor weight, float eps=1e-06) -> " \
    "(Tensor, Tensor)")                                                                 \
  X(silu_and_mul, "silu_and_mul(Tensor x) -> Tensor")                                   \
  X(rms_norm_backward,                                                                  \
    "rms_norm_backward(Tensor grad_out, Tensor x, Tensor weight, float eps) -> "        \
    "(Tensor, Tensor)")                                                                 \
  X(fused_add_rms_norm_backward,                                                        \
    "fused_add_rms_norm_backward(Tensor grad_out, Tensor grad_residual_out, "           \
    "Tensor residual_out, Tensor weight, float eps) -> (Tensor, Tensor)")               \
  X(silu_and_mul_backward, "silu_and_mul_backward(Tensor grad_out, Tensor x) -> Tensor")
