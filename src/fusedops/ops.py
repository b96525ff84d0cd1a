"""The Python face of the ops: typed wrappers, fake kernels, autograd.

Schemas and real kernels live in C++ (csrc/ops). Here each op gets
1. a typed, documented wrapper,
2. a fake kernel (`register_fake`) whose `torch._check`s mirror the C++
   checks, so torch.compile and FakeTensor see the same errors and shapes,
3. an autograd formula (`register_autograd`) built from fusedops's own
   backward ops, so the backward is fused too and compiles.
"""

from __future__ import annotations

import torch
from torch import Tensor

from . import _compat
from ._loader import read_build_info

_FLOAT_DTYPES = (torch.float32, torch.float16, torch.bfloat16, torch.float64)
_ops = torch.ops.fusedops


# ---- GPU architecture check --------------------------------------------------
# "no kernel image is available" is the worst error a wheel can give; instead,
# the first CUDA call on each device checks the wheel's arch list once.
_checked_devices: set[int] = set()


def _check_arch(t: Tensor) -> None:
    if not t.is_cuda or torch.compiler.is_compiling():
        return
    index = t.device.index if t.device.index is not None else torch.cuda.current_device()
    if index in _checked_devices:
        return
    info = read_build_info()
    verdict = _compat.arch_coverage(torch.cuda.get_device_capability(index), info["arch_list"])
    if not verdict.covered:
        raise RuntimeError(
            f"fusedops: cannot run on cuda:{index} ({torch.cuda.get_device_name(index)}): "
            f"{verdict.how}. Build for it with TORCH_CUDA_ARCH_LIST, or run "
            "`python -m fusedops doctor`."
        )
    _checked_devices.add(index)


# ---- shared fake-kernel checks (mirror csrc/ops/ops.h) --------------------------
def _check_dtype(op: str, name: str, t: Tensor) -> None:
    torch._check(
        t.dtype in _FLOAT_DTYPES,
        lambda: (
            f"fusedops.{op}: expected {name} to have dtype float32, float16, bfloat16 or "
            f"float64, got {t.dtype}"
        ),
    )


def _check_like(op: str, name: str, t: Tensor, ref_name: str, ref: Tensor, shape: bool) -> None:
    torch._check(
        t.device == ref.device,
        lambda: (
            f"fusedops.{op}: expected {name} to be on the same device as {ref_name} "
            f"({ref.device}), got {t.device}"
        ),
    )
    torch._check(
        t.dtype == ref.dtype,
        lambda: (
            f"fusedops.{op}: expected {name} to have the same dtype as {ref_name} "
            f"({ref.dtype}), got {t.dtype}"
        ),
    )
    if shape:
        torch._check(
            t.shape == ref.shape,
            lambda: (
                f"fusedops.{op}: expected {name} to have the same shape as {ref_name} "
                f"{list(ref.shape)}, got {list(t.shape)}"
            ),
        )


def _check_norm(op: str, x: Tensor, weight: Tensor, eps: float) -> None:
    _check_dtype(op, "x", x)
    torch._check(x.dim() >= 1, lambda: f"fusedops.{op}: expected x to have at least 1 dimension")
    _check_like(op, "weight", weight, "x", x, shape=False)
    torch._check(
        weight.dim() == 1 and weight.shape[0] == x.shape[-1],
        lambda: (
            f"fusedops.{op}: expected weight to have shape [{x.shape[-1]}] (the last "
            f"dimension of x), got {list(weight.shape)}"
        ),
    )
    torch._check(eps >= 0, lambda: f"fusedops.{op}: expected eps to be non-negative, got {eps}")


def _check_glu(op: str, x: Tensor) -> None:
    _check_dtype(op, "x", x)
    torch._check(x.dim() >= 1, lambda: f"fusedops.{op}: expected x to have at least 1 dimension")
    torch._check(
        x.shape[-1] % 2 == 0,
        lambda: (
            f"fusedops.{op}: expected the last dimension of x to be even (2 * d), got {x.shape[-1]}"
        ),
    )


def _empty_like(t: Tensor) -> Tensor:
    # The C++ ops return contiguous tensors whatever the input strides.
    return torch.empty(t.shape, dtype=t.dtype, device=t.device)


# ---- rms_norm ------------------------------------------------------------------
def rms_norm(x: Tensor, weight: Tensor, eps: float = 1e-6) -> Tensor:
    """RMSNorm over the last dimension: ``x / sqrt(mean(x**2, -1) + eps) * weight``.

    Accumulates in float32 (float64 for float64 inputs) and returns x's dtype;
    matches ``torch.nn.functional.rms_norm(x, (x.shape[-1],), weight, eps)``.

    Args:
        x: ``[..., hidden]``, float32/float16/bfloat16/float64, any strides.
        weight: ``[hidden]``, same dtype and device as x.
        eps: added to the mean square; must be >= 0.
    """
    _check_arch(x)
    return _ops.rms_norm.default(x, weight, eps)


@torch.library.register_fake("fusedops::rms_norm")
def _rms_norm_fake(x: Tensor, weight: Tensor, eps: float = 1e-6) -> Tensor:
    _check_norm("rms_norm", x, weight, eps)
    return _empty_like(x)


def _rms_norm_setup(ctx, inputs, output) -> None:
    x, weight, eps = inputs
    ctx.save_for_backward(x, weight)
    ctx.eps = eps


def _rms_norm_backward(ctx, grad: Tensor):
    x, weight = ctx.saved_tensors
    grad_x, grad_weight = _ops.rms_norm_backward.default(grad, x, weight, ctx.eps)
    return grad_x, grad_weight, None


torch.library.register_autograd(
    "fusedops::rms_norm", _rms_norm_backward, setup_context=_rms_norm_setup
)


@torch.library.register_fake("fusedops::rms_norm_backward")
def _rms_norm_backward_fake(grad_out: Tensor, x: Tensor, weight: Tensor, eps: float):
    _check_norm("rms_norm_backward", x, weight, eps)
    _check_like("rms_norm_backward", "grad_out", grad_out, "x", x, shape=True)
    return _empty_like(x), _empty_like(weight)


# ---- fused_add_rms_norm ------------------------------------------------------
def fused_add_rms_norm(
    x: Tensor, residual: Tensor, weight: Tensor, eps: float = 1e-6
) -> tuple[Tensor, Tensor]:
    """Residual add then RMSNorm, in one pass: returns ``(out, residual_out)``.

    ``residual_out = x + residual`` (rounded to x's dtype) and
    ``out = rms_norm(residual_out, weight, eps)``. Functional: no input is
    modified.

    Args:
        x, residual: ``[..., hidden]``, same shape, dtype and device.
        weight: ``[hidden]``.
        eps: added to the mean square; must be >= 0.
    """
    _check_arch(x)
    return _ops.fused_add_rms_norm.default(x, residual, weight, eps)


@torch.library.register_fake("fusedops::fused_add_rms_norm")
def _fused_add_rms_norm_fake(x: Tensor, residual: Tensor, weight: Tensor, eps: float = 1e-6):
    _check_norm("fused_add_rms_norm", x, weight, eps)
    _check_like("fused_add_rms_norm", "residual", residual, "x", x, shape=True)
    return _empty_like(x), _empty_like(x)


def _fused_add_setup(ctx, inputs, output) -> None:
    _, _, weight, eps = inputs
    _, residual_out = output
    ctx.save_for_backward(residual_out, weight)
    ctx.eps = eps


def _fused_add_backward(ctx, grad_out: Tensor, grad_residual_out: Tensor):
    residual_out, weight = ctx.saved_tensors
    grad_sum, grad_weight = _ops.fused_add_rms_norm_backward.default(
        grad_out, grad_residual_out, residual_out, weight, ctx.eps
    )
    # d(x + residual)/dx = d/dresidual = identity: both get the same gradient.
    return grad_sum, grad_sum, grad_weight, None


torch.library.register_autograd(
    "fusedops::fused_add_rms_norm", _fused_add_backward, setup_context=_fused_add_setup
)


@torch.library.register_fake("fusedops::fused_add_rms_norm_backward")
def _fused_add_backward_fake(
    grad_out: Tensor, grad_residual_out: Tensor, residual_out: Tensor, weight: Tensor, eps: float
):
    op = "fused_add_rms_norm_backward"
    _check_norm(op, residual_out, weight, eps)
    _check_like(op, "grad_out", grad_out, "x", residual_out, shape=True)
    _check_like(op, "grad_residual_out", grad_residual_out, "x", residual_out, shape=True)
    return _empty_like(residual_out), _empty_like(weight)


# ---- silu_and_mul ------------------------------------------------------------
def silu_and_mul(x: Tensor) -> Tensor:
    """SwiGLU activation: ``silu(x[..., :d]) * x[..., d:]`` for x of last dim ``2*d``.

    Args:
        x: ``[..., 2*d]``, float32/float16/bfloat16/float64, any strides.

    Returns:
        ``[..., d]`` in x's dtype.
    """
    _check_arch(x)
    return _ops.silu_and_mul.default(x)


@torch.library.register_fake("fusedops::silu_and_mul")
def _silu_and_mul_fake(x: Tensor) -> Tensor:
    _check_glu("silu_and_mul", x)
    return x.new_empty((*x.shape[:-1], x.shape[-1] // 2))


def _silu_setup(ctx, inputs, output) -> None:
    (x,) = inputs
    ctx.save_for_backward(x)


def _silu_backward(ctx, grad: Tensor):
    (x,) = ctx.saved_tensors
    return _ops.silu_and_mul_backward.default(grad, x)


torch.library.register_autograd("fusedops::silu_and_mul", _silu_backward, setup_context=_silu_setup)


@torch.library.register_fake("fusedops::silu_and_mul_backward")
def _silu_backward_fake(grad_out: Tensor, x: Tensor) -> Tensor:
    op = "silu_and_mul_backward"
    _check_glu(op, x)
    torch._check(grad_out.device == x.device, lambda: f"fusedops.{op}: grad_out device mismatch")
    torch._check(grad_out.dtype == x.dtype, lambda: f"fusedops.{op}: grad_out dtype mismatch")
    torch._check(
        grad_out.shape == (*x.shape[:-1], x.shape[-1] // 2),
        lambda: (
            f"fusedops.{op}: expected grad_out to have shape "
            f"{[*x.shape[:-1], x.shape[-1] // 2]}, got {list(grad_out.shape)}"
        ),
    )
    return _empty_like(x)
