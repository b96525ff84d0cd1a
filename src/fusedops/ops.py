"""The Python face of the ops: typed wrappers, fake kernels, autograd.

Schemas and real kernels live in C++ (csrc/ops). Here each op gets
1. a typed, documented wrapper,
2. a fake kernel (`register_fake`) whose `torch._check`s mirror the C++
   checks, so torch.compile and FakeTensor see the same errors and shapes,
3. an autograd formula built from fusedops's own backward ops, so the
   backward is fused too and compiles.

Autograd is a `torch.autograd.Function` per op (forward, setup_context,
backward, jvp, vmap), applied by the wrappers (`_call`) and by the op's
Autograd kernel for direct torch.ops calls. torch's `register_autograd` makes a
Function without `setup_context` or `jvp`, which torch.func refuses and
forward-mode AD silently gets a zero tangent from. The backward ops have
Functions too, whose derivatives (and every jvp) are torch-op formulas in
`_formulas.py`, so double backward and higher orders are exact.
`register_vmap` gives each op a batching rule. docs/RELIABILITY.md lists the
cases and their tests.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable

import torch
import torch.autograd.forward_ad as _forward_ad
from torch import Tensor

from . import _compat, _formulas

_FLOAT_DTYPES = (torch.float32, torch.float16, torch.bfloat16, torch.float64)
_ops = torch.ops.fusedops
# Every Python registration (fake, autograd, vmap) goes through this one
# Library: a reload of this module drops the old object and its registrations
# with it, so importlib.reload re-registers cleanly.
_LIB = torch.library.Library("fusedops", "IMPL")


# ---- GPU architecture check --------------------------------------------------
# "no kernel image is available" is the worst error a wheel can give; instead,
# the first CUDA call on each device checks the wheel's arch list once.
_checked_devices: set[int] = set()


def _check_arch(t: Tensor) -> None:
    # getattr: a non-tensor x (None) goes on to the op's own check, which names it.
    if not getattr(t, "is_cuda", False) or _is_compiling():
        return
    index = t.get_device()  # an int: cheaper than t.device.index on every call
    if index in _checked_devices:
        return
    # fusedops.BUILD_INFO is the loaded library's build info (read at call time, so a
    # reload is followed); the PyPI wheel's top-level _build_info has no archs.
    arch_list = sys.modules["fusedops"].BUILD_INFO["arch_list"]
    verdict = _compat.arch_coverage(torch.cuda.get_device_capability(index), arch_list)
    if not verdict.covered:
        raise RuntimeError(
            f"fusedops: cannot run on cuda:{index} ({torch.cuda.get_device_name(index)}): "
            f"{verdict.how}. Build for it with TORCH_CUDA_ARCH_LIST, or run "
            "`python -m fusedops doctor`."
        )
    _checked_devices.add(index)


# ---- shared fake-kernel checks (mirror csrc/ops/ops.h) --------------------------
def _check_given(op: str, name: str, t: Tensor | None) -> None:
    # The dispatcher passes None for a `Tensor` argument through (C++ sees an
    # undefined tensor); the first check of each argument calls this one.
    torch._check(t is not None, lambda: f"fusedops.{op}: expected {name} to be a tensor, got None")


def _check_dtype(op: str, name: str, t: Tensor) -> None:
    _check_given(op, name, t)
    torch._check(
        t.dtype in _FLOAT_DTYPES,
        lambda: (
            f"fusedops.{op}: expected {name} to have dtype float32, float16, bfloat16 or "
            f"float64, got {t.dtype}"
        ),
    )


def _check_like(op: str, name: str, t: Tensor, ref_name: str, ref: Tensor, shape: bool) -> None:
    _check_given(op, name, t)
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


def _check_norm(
    op: str,
    x: Tensor,
    weight: Tensor,
    eps: float,
    *,
    x_batched: bool = False,
    weight_dim: int | None = None,
) -> None:
    """Under vmap the shapes checked are one sample's: x batch-first (`x_batched`),
    weight batched along `weight_dim` (None: not batched)."""
    _check_dtype(op, "x", x)
    x_shape = x.shape[1:] if x_batched else x.shape
    torch._check(
        len(x_shape) >= 1, lambda: f"fusedops.{op}: expected x to have at least 1 dimension"
    )
    _check_like(op, "weight", weight, "x", x, shape=False)
    w_shape = weight.shape
    if weight_dim is not None:
        w_shape = w_shape[:weight_dim] + w_shape[weight_dim + 1 :]
    torch._check(
        len(w_shape) == 1 and w_shape[0] == x_shape[-1],
        lambda: (
            f"fusedops.{op}: expected weight to have shape [{x_shape[-1]}] (the last "
            f"dimension of x), got {list(w_shape)}"
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


# ---- autograd and vmap plumbing --------------------------------------------------
_BELOW_AUTOGRAD = torch._C._AutoDispatchBelowAutograd
_grad_enabled = torch.is_grad_enabled
_any_requires_grad = torch._C._any_requires_grad
_transforms_active = torch._C._are_functorch_transforms_active
_is_compiling = torch.compiler.is_compiling
_unwrap_if_dead = torch._C._functorch.unwrap_if_dead


def _needs_autograd(args: tuple) -> bool:
    """Whether a call outside torch.func must record a derivative.

    Reverse mode needs it only when an input requires grad; forward-mode AD
    whenever it is active (a dual tensor need not require grad). The common
    no-grad call skips autograd entirely.
    """
    return (_grad_enabled() and _any_requires_grad(*args)) or _forward_ad._current_level >= 0


def _save(ctx, *tensors: Tensor) -> None:
    """Save `tensors` for backward, and for jvp when a jvp can follow.

    jvp runs only under forward-mode AD, torch.func.jvp and jacfwd included
    (they open a dual level too); outside it `save_for_forward` would be a
    Python call per op call for nothing.
    """
    ctx.save_for_backward(*tensors)
    if _forward_ad._current_level >= 0:
        ctx.save_for_forward(*tensors)


def _cxx_apply(function: type[torch.autograd.Function]) -> Callable:
    """`function.apply` without torch's Python layer, for use outside torch.func.

    Before torch 2.12, `Function.apply` is a Python classmethod that checks for
    setup_context, looks for torch.func transforms and unwraps dead functorch
    wrappers before the C++ apply (`_FunctionBase.apply`): about 6 µs a call on
    torch 2.11, a third of a CPU rms_norm call with requires_grad. Outside
    torch.func a ctx-style Function needs only the unwrapping, which
    `_unwrapping` does. Falls back to `function.apply` on a torch without
    that C++ base.
    """
    base = getattr(torch._C, "_FunctionBase", None)
    descriptor = vars(base).get("apply") if base is not None else None
    if descriptor is None or not issubclass(function, base):
        return function.apply
    return descriptor.__get__(None, function)


class _Function(torch.autograd.Function):
    """Base of the ops' Functions; each subclass names its op (`op`) and
    writes setup_context, backward, jvp and vmap.

    The base gives each subclass its forward (the op below autograd) and
    `ctx_style`, the same Function with the context in forward, which
    `autograd_apply` applies outside torch.func (see `_autograd_apply`):
    torch (before 2.12) binds the arguments of a setup_context-style Function
    through inspect.signature on every call. Both forwards call the op's C++
    entry (`OpOverload._op`) directly: the OpOverload's Python `__call__` is a
    frame per call that does nothing here.
    """

    op: torch._ops.OpOverload
    ctx_style: type[torch.autograd.Function]
    autograd_apply: Callable

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        cxx_op = cls.op._op
        setup_context = cls.setup_context

        def forward(*args):
            # Without the guard the call would come back to the Autograd
            # kernel while forward AD is active.
            with _BELOW_AUTOGRAD():
                return cxx_op(*args)

        def forward_with_ctx(ctx, *args):
            with _BELOW_AUTOGRAD():
                output = cxx_op(*args)
            setup_context(ctx, args, output)
            return output

        cls.forward = staticmethod(forward)
        cls.ctx_style = type(
            f"{cls.__name__}CtxStyle",
            (torch.autograd.Function,),
            {
                "forward": staticmethod(forward_with_ctx),
                "backward": staticmethod(cls.backward),
                "jvp": staticmethod(cls.jvp),
            },
        )
        types = [str(argument.type) for argument in cls.op._schema.arguments]
        tensor_args = types.count("Tensor")
        # The ops take their tensors first, then floats.
        assert types[:tensor_args] == ["Tensor"] * tensor_args, types
        cls.autograd_apply = staticmethod(_autograd_apply(cls.ctx_style, tensor_args))


# From torch 2.12 `Function.apply` is the C++ apply itself, which binds the
# arguments, handles torch.func and unwraps dead functorch wrappers on its own.
_TORCH_APPLY_IS_CXX = vars(torch.autograd.Function).get("apply") is vars(
    getattr(torch._C, "_FunctionBase", object)
).get("apply", False)


def _autograd_apply(function: type[torch.autograd.Function], tensor_args: int) -> Callable:
    """How the wrappers apply a ctx-style Function outside torch.func: torch's own
    apply where it is the C++ one already (unwrapping again in Python cost about
    0.3 µs a call on a CPU with torch 2.14, benchmarks/RESULTS.md), else its C++
    apply after `_unwrapping`. tests/faults/test_autodiff.py's vjp-pullback test
    guards the unwrapping; only a torch < 2.12 (the GPU job's 2.11) runs it
    through `_unwrapping`, since a newer apply unwraps whatever came before it."""
    if _TORCH_APPLY_IS_CXX:
        return function.apply
    return _unwrapping(_cxx_apply(function), tensor_args)


def _unwrapping(apply: Callable, tensor_args: int) -> Callable:
    """`apply` with its first `tensor_args` arguments unwrapped if they are dead
    functorch wrappers (a tensor saved inside torch.func.vjp, whose pullback
    runs after it), as torch's Function.apply does: the dispatcher unwraps
    those for every op, but a Function records its graph above the dispatcher.
    Like torch's, only tensors are unwrapped: anything else (weight=None) goes
    on to the op, whose own check rejects it. Spelled out per count: a generic
    slice-and-map costs 1.5 µs a call, more than the unwrapping itself.
    """

    unwrap = _unwrap_if_dead
    if tensor_args == 1:
        return lambda a, *rest: apply(unwrap(a) if isinstance(a, Tensor) else a, *rest)
    if tensor_args == 2:
        return lambda a, b, *rest: apply(
            unwrap(a) if isinstance(a, Tensor) else a,
            unwrap(b) if isinstance(b, Tensor) else b,
            *rest,
        )
    if tensor_args == 3:
        return lambda a, b, c, *rest: apply(
            unwrap(a) if isinstance(a, Tensor) else a,
            unwrap(b) if isinstance(b, Tensor) else b,
            unwrap(c) if isinstance(c, Tensor) else c,
            *rest,
        )
    if tensor_args == 4:
        return lambda a, b, c, d, *rest: apply(
            unwrap(a) if isinstance(a, Tensor) else a,
            unwrap(b) if isinstance(b, Tensor) else b,
            unwrap(c) if isinstance(c, Tensor) else c,
            unwrap(d) if isinstance(d, Tensor) else d,
            *rest,
        )
    raise ValueError(f"no unwrapping apply for {tensor_args} tensor arguments")


def _call(function: type[_Function], op: torch._ops.OpOverload, *args):
    """Every Python call of a fusedops op goes here (wrappers, backwards, vmap rules).

    An autograd.Function must be applied from Python, above the dispatcher: that
    is where torch.func's transforms see it. Under torch.compile the op itself is
    traced and AOTAutograd differentiates it through the Autograd kernel.
    The common cases come first and cost a few attribute reads: a no-grad call
    goes straight to the C++ op below autograd (the dispatcher would otherwise
    run the Python Autograd kernel), a call with requires_grad to `autograd_apply`.
    `op` is `function.op`, passed in because dynamo cannot read attributes of an
    autograd.Function class while tracing.
    """
    if not _is_compiling() and not _transforms_active():  # dynamo folds the first to True
        # _needs_autograd(args), inlined: one Python frame less per call.
        if (_grad_enabled() and _any_requires_grad(*args)) or _forward_ad._current_level >= 0:
            return function.autograd_apply(*args)
        with _BELOW_AUTOGRAD():
            return op._op(*args)
    if _is_compiling():
        return op(*args)
    if _top_transform_is_functionalize():
        # torch.func.functionalize has no rule for autograd.Functions; the op
        # is functional already, and the Autograd kernel serves it.
        return op(*args)
    return function.apply(*args)


def _top_transform_is_functionalize() -> bool:
    top = torch._C._functorch.peek_interpreter_stack()
    return top is not None and top.key() == torch._C._functorch.TransformType.Functionalize


def _register_autograd(
    name: str, function: type[_Function], formula: Callable, check: Callable
) -> None:
    """The Autograd kernel of fusedops::name, for callers of torch.ops.fusedops.name.

    Under a torch.func transform the dispatcher reaches this kernel inside the
    transform, where an autograd.Function cannot be applied; there the op is
    computed by `formula` (the same math in torch ops, float32 accumulation),
    which the transform differentiates itself, after `check` (the fake kernel:
    the C++ checks, which the formula would skip).
    """
    op = getattr(_ops, name).default
    # The dispatcher drops trailing arguments equal to their defaults; put them back.
    defaults = tuple(arg.default_value for arg in op._schema.arguments)
    after_autograd = torch._C._after_autograd_keyset

    def kernel(keyset: torch._C.DispatchKeySet, *args):
        if len(args) < len(defaults):
            args = args + defaults[len(args) :]
        if torch._C._are_functorch_transforms_active():
            check(*args)
            return formula(*args)
        if _needs_autograd(args):
            return function.autograd_apply(*args)
        with torch._C._AutoDispatchBelowAutograd():
            return op.redispatch(keyset & after_autograd, *args)

    _LIB.impl(name, kernel, "Autograd", with_keyset=True)


def _batch_first(t: Tensor, dim: int | None, size: int) -> Tensor:
    """The vmapped dimension moved to the front (expanded if t is not batched)."""
    return t.movedim(dim, 0) if dim is not None else t.expand(size, *t.shape)


def _batched_weight(weight: Tensor, dim: int | None, size: int, ndim: int) -> Tensor:
    """A [B, N] weight shaped to broadcast against a batch-first [B, ..., N] input."""
    w = _batch_first(weight, dim, size)
    return w.reshape(size, *([1] * (ndim - 2)), w.shape[-1])


def _raw_call(function: type[_Function], op: torch._ops.OpOverload, *args):
    # In a register_vmap rule functorch has already entered the vmap layer: the
    # op call goes on through the dispatcher to the next layer (autograd, or an
    # outer transform), where no Function may be applied.
    return op(*args)


def _register_vmap(name: str, rule: Callable) -> None:
    """The batching rule of torch.ops.fusedops.name; the Functions use the same rules."""
    torch.library.register_vmap(f"fusedops::{name}", functools.partial(rule, _raw_call), lib=_LIB)


# ---- rms_norm ------------------------------------------------------------------
def rms_norm(x: Tensor, weight: Tensor, eps: float = 1e-6) -> Tensor:
    """RMSNorm over the last dimension: ``x / sqrt(mean(x**2, -1) + eps) * weight``.

    Accumulates in float32 (float64 for float64 inputs) and returns x's dtype;
    matches ``torch.nn.functional.rms_norm(x, (x.shape[-1],), weight, eps)``.
    Differentiable to any order, in forward mode too, and under torch.func.

    Args:
        x: ``[..., hidden]``, float32/float16/bfloat16/float64, any strides.
        weight: ``[hidden]``, same dtype and device as x.
        eps: added to the mean square; must be >= 0.
    """
    _check_arch(x)
    return _call(_RmsNorm, _ops.rms_norm.default, x, weight, eps)


@torch.library.register_fake("fusedops::rms_norm", lib=_LIB)
def _rms_norm_fake(x: Tensor, weight: Tensor, eps: float = 1e-6) -> Tensor:
    _check_norm("rms_norm", x, weight, eps)
    return _empty_like(x)


def _rms_norm_vmap(call: Callable, info, in_dims, x: Tensor, weight: Tensor, eps: float = 1e-6):
    x_dim, w_dim = in_dims[0], in_dims[1]
    x = _batch_first(x, x_dim, info.batch_size)
    if w_dim is None:  # rows are independent: the batch is more rows
        return call(_RmsNorm, _ops.rms_norm.default, x, weight, eps), 0
    _check_norm("rms_norm", x, weight, eps, x_batched=True, weight_dim=w_dim)
    weight = _batched_weight(weight, w_dim, info.batch_size, x.dim())
    return _formulas.rms_norm(x, weight, eps), 0


class _RmsNorm(_Function):
    op = _ops.rms_norm.default

    @staticmethod
    def setup_context(ctx, inputs, output) -> None:
        x, weight, eps = inputs
        _save(ctx, x, weight)
        ctx.eps = eps

    @staticmethod
    def backward(ctx, grad: Tensor):
        x, weight = ctx.saved_tensors
        grad_x, grad_weight = _call(
            _RmsNormBackward, _ops.rms_norm_backward.default, grad, x, weight, ctx.eps
        )
        return grad_x, grad_weight, None

    @staticmethod
    def jvp(ctx, x_t: Tensor | None, weight_t: Tensor | None, _eps_t: None) -> Tensor:
        x, weight = ctx.saved_tensors
        return _formulas.rms_norm_jvp(x, weight, ctx.eps, x_t, weight_t)

    vmap = staticmethod(functools.partial(_rms_norm_vmap, _call))


@torch.library.register_fake("fusedops::rms_norm_backward", lib=_LIB)
def _rms_norm_backward_fake(grad_out: Tensor, x: Tensor, weight: Tensor, eps: float):
    _check_norm("rms_norm_backward", x, weight, eps)
    _check_like("rms_norm_backward", "grad_out", grad_out, "x", x, shape=True)
    return _empty_like(x), _empty_like(weight)


def _rms_norm_backward_vmap(
    call: Callable, info, in_dims, grad_out: Tensor, x: Tensor, weight: Tensor, eps
):
    # The fused kernel sums the weight gradient over every row, batch included;
    # under vmap each batch entry needs its own sum, so use the formula.
    g_dim, x_dim, w_dim = in_dims[:3]
    size = info.batch_size
    g, x = _batch_first(grad_out, g_dim, size), _batch_first(x, x_dim, size)
    _check_norm("rms_norm_backward", x, weight, eps, x_batched=True, weight_dim=w_dim)
    _check_like("rms_norm_backward", "grad_out", g, "x", x, shape=True)
    weight = _batched_weight(weight, w_dim, size, x.dim()) if w_dim is not None else weight
    return _formulas.rms_norm_backward(g, x, weight, eps, keep=1), (0, 0)


class _RmsNormBackward(_Function):
    op = _ops.rms_norm_backward.default

    @staticmethod
    def setup_context(ctx, inputs, output) -> None:
        grad_out, x, weight, eps = inputs
        _save(ctx, grad_out, x, weight)
        ctx.eps = eps

    @staticmethod
    def backward(ctx, grad_grad_x: Tensor, grad_grad_weight: Tensor):
        grad_out, x, weight = ctx.saved_tensors
        return (
            *_formulas.rms_norm_backward_vjp(
                grad_out, x, weight, ctx.eps, grad_grad_x, grad_grad_weight
            ),
            None,
        )

    @staticmethod
    def jvp(ctx, grad_out_t, x_t, weight_t, _eps_t):
        grad_out, x, weight = ctx.saved_tensors
        return _formulas.rms_norm_backward_jvp(
            grad_out, x, weight, ctx.eps, grad_out_t, x_t, weight_t
        )

    vmap = staticmethod(functools.partial(_rms_norm_backward_vmap, _call))


_register_autograd("rms_norm", _RmsNorm, _formulas.rms_norm, _rms_norm_fake)
_register_autograd(
    "rms_norm_backward", _RmsNormBackward, _formulas.rms_norm_backward, _rms_norm_backward_fake
)
_register_vmap("rms_norm", _rms_norm_vmap)
_register_vmap("rms_norm_backward", _rms_norm_backward_vmap)


# ---- fused_add_rms_norm ------------------------------------------------------
def fused_add_rms_norm(
    x: Tensor, residual: Tensor, weight: Tensor, eps: float = 1e-6
) -> tuple[Tensor, Tensor]:
    """Residual add then RMSNorm, in one pass: returns ``(out, residual_out)``.

    ``residual_out = x + residual`` (rounded to x's dtype) and
    ``out = rms_norm(residual_out, weight, eps)``. Functional: no input is
    modified. Differentiable to any order, in forward mode too, and under
    torch.func.

    Args:
        x, residual: ``[..., hidden]``, same shape, dtype and device.
        weight: ``[hidden]``.
        eps: added to the mean square; must be >= 0.
    """
    _check_arch(x)
    return _call(_FusedAddRmsNorm, _ops.fused_add_rms_norm.default, x, residual, weight, eps)


@torch.library.register_fake("fusedops::fused_add_rms_norm", lib=_LIB)
def _fused_add_rms_norm_fake(x: Tensor, residual: Tensor, weight: Tensor, eps: float = 1e-6):
    _check_norm("fused_add_rms_norm", x, weight, eps)
    _check_like("fused_add_rms_norm", "residual", residual, "x", x, shape=True)
    return _empty_like(x), _empty_like(x)


def _fused_add_vmap(
    call: Callable, info, in_dims, x: Tensor, residual: Tensor, weight: Tensor, eps: float = 1e-6
):
    x_dim, r_dim, w_dim = in_dims[:3]
    size = info.batch_size
    x, residual = _batch_first(x, x_dim, size), _batch_first(residual, r_dim, size)
    if w_dim is None:
        outputs = call(_FusedAddRmsNorm, _ops.fused_add_rms_norm.default, x, residual, weight, eps)
        return outputs, (0, 0)
    _check_norm("fused_add_rms_norm", x, weight, eps, x_batched=True, weight_dim=w_dim)
    _check_like("fused_add_rms_norm", "residual", residual, "x", x, shape=True)
    residual_out = x + residual
    weight = _batched_weight(weight, w_dim, size, x.dim())
    return (_formulas.rms_norm(residual_out, weight, eps), residual_out), (0, 0)


class _FusedAddRmsNorm(_Function):
    op = _ops.fused_add_rms_norm.default

    @staticmethod
    def setup_context(ctx, inputs, output) -> None:
        _, _, weight, eps = inputs
        _, residual_out = output
        _save(ctx, residual_out, weight)
        ctx.eps = eps

    @staticmethod
    def backward(ctx, grad_out: Tensor, grad_residual_out: Tensor):
        residual_out, weight = ctx.saved_tensors
        grad_sum, grad_weight = _call(
            _FusedAddRmsNormBackward,
            _ops.fused_add_rms_norm_backward.default,
            grad_out,
            grad_residual_out,
            residual_out,
            weight,
            ctx.eps,
        )
        # d(x + residual)/dx = d/dresidual = identity: both get the same gradient.
        return grad_sum, grad_sum, grad_weight, None

    @staticmethod
    def jvp(ctx, x_t, residual_t, weight_t, _eps_t):
        residual_out, weight = ctx.saved_tensors
        if x_t is None or residual_t is None:
            sum_t = x_t if residual_t is None else residual_t
        else:
            sum_t = x_t + residual_t
        if sum_t is None:
            sum_t = torch.zeros_like(residual_out)
        out_t = _formulas.rms_norm_jvp(residual_out, weight, ctx.eps, sum_t, weight_t)
        return out_t, sum_t.to(residual_out.dtype)

    vmap = staticmethod(functools.partial(_fused_add_vmap, _call))


@torch.library.register_fake("fusedops::fused_add_rms_norm_backward", lib=_LIB)
def _fused_add_backward_fake(
    grad_out: Tensor, grad_residual_out: Tensor, residual_out: Tensor, weight: Tensor, eps: float
):
    op = "fused_add_rms_norm_backward"
    _check_norm(op, residual_out, weight, eps)
    _check_like(op, "grad_out", grad_out, "x", residual_out, shape=True)
    _check_like(op, "grad_residual_out", grad_residual_out, "x", residual_out, shape=True)
    return _empty_like(residual_out), _empty_like(weight)


def _fused_add_backward_vmap(
    call: Callable, info, in_dims, grad_out, grad_residual_out, residual_out, weight, eps: float
):
    g_dim, gr_dim, s_dim, w_dim = in_dims[:4]
    size = info.batch_size
    g, s = _batch_first(grad_out, g_dim, size), _batch_first(residual_out, s_dim, size)
    gr = _batch_first(grad_residual_out, gr_dim, size)
    op = "fused_add_rms_norm_backward"
    _check_norm(op, s, weight, eps, x_batched=True, weight_dim=w_dim)
    _check_like(op, "grad_out", g, "x", s, shape=True)
    _check_like(op, "grad_residual_out", gr, "x", s, shape=True)
    weight = _batched_weight(weight, w_dim, size, s.dim()) if w_dim is not None else weight
    grad_x, grad_weight = _formulas.rms_norm_backward(g, s, weight, eps, keep=1)
    return (grad_x + gr, grad_weight), (0, 0)


class _FusedAddRmsNormBackward(_Function):
    op = _ops.fused_add_rms_norm_backward.default

    @staticmethod
    def setup_context(ctx, inputs, output) -> None:
        grad_out, _, residual_out, weight, eps = inputs
        _save(ctx, grad_out, residual_out, weight)
        ctx.eps = eps

    @staticmethod
    def backward(ctx, grad_grad_sum: Tensor, grad_grad_weight: Tensor):
        grad_out, residual_out, weight = ctx.saved_tensors
        grad_g, grad_s, grad_w = _formulas.rms_norm_backward_vjp(
            grad_out, residual_out, weight, ctx.eps, grad_grad_sum, grad_grad_weight
        )
        # grad_sum = rms_norm's grad_x + grad_residual_out: the latter passes straight through.
        return grad_g, grad_grad_sum, grad_s, grad_w, None

    @staticmethod
    def jvp(ctx, grad_out_t, grad_residual_out_t, residual_out_t, weight_t, _eps_t):
        grad_out, residual_out, weight = ctx.saved_tensors
        sum_t, weight_grad_t = _formulas.rms_norm_backward_jvp(
            grad_out, residual_out, weight, ctx.eps, grad_out_t, residual_out_t, weight_t
        )
        if grad_residual_out_t is not None:
            sum_t = sum_t + grad_residual_out_t
        return sum_t, weight_grad_t

    vmap = staticmethod(functools.partial(_fused_add_backward_vmap, _call))


_register_autograd(
    "fused_add_rms_norm", _FusedAddRmsNorm, _formulas.fused_add_rms_norm, _fused_add_rms_norm_fake
)
_register_autograd(
    "fused_add_rms_norm_backward",
    _FusedAddRmsNormBackward,
    _formulas.fused_add_rms_norm_backward,
    _fused_add_backward_fake,
)
_register_vmap("fused_add_rms_norm", _fused_add_vmap)
_register_vmap("fused_add_rms_norm_backward", _fused_add_backward_vmap)


# ---- silu_and_mul ------------------------------------------------------------
def silu_and_mul(x: Tensor) -> Tensor:
    """SwiGLU activation: ``silu(x[..., :d]) * x[..., d:]`` for x of last dim ``2*d``.

    Differentiable to any order, in forward mode too, and under torch.func.

    Args:
        x: ``[..., 2*d]``, float32/float16/bfloat16/float64, any strides.

    Returns:
        ``[..., d]`` in x's dtype.
    """
    if x is None:
        # With no tensor argument the dispatcher finds no kernel to run, and says so
        # in its own words; the op's check never runs.
        raise RuntimeError("fusedops.silu_and_mul: expected x to be a tensor, got None")
    _check_arch(x)
    return _call(_SiluAndMul, _ops.silu_and_mul.default, x)


@torch.library.register_fake("fusedops::silu_and_mul", lib=_LIB)
def _silu_and_mul_fake(x: Tensor) -> Tensor:
    _check_glu("silu_and_mul", x)
    return x.new_empty((*x.shape[:-1], x.shape[-1] // 2))


def _silu_vmap(call: Callable, info, in_dims, x: Tensor):
    x = _batch_first(x, in_dims[0], info.batch_size)
    return call(_SiluAndMul, _ops.silu_and_mul.default, x), 0


class _SiluAndMul(_Function):
    op = _ops.silu_and_mul.default

    @staticmethod
    def setup_context(ctx, inputs, output) -> None:
        (x,) = inputs
        _save(ctx, x)

    @staticmethod
    def backward(ctx, grad: Tensor) -> Tensor:
        (x,) = ctx.saved_tensors
        return _call(_SiluAndMulBackward, _ops.silu_and_mul_backward.default, grad, x)

    @staticmethod
    def jvp(ctx, x_t: Tensor) -> Tensor:
        (x,) = ctx.saved_tensors
        return _formulas.silu_and_mul_jvp(x, x_t)

    vmap = staticmethod(functools.partial(_silu_vmap, _call))


@torch.library.register_fake("fusedops::silu_and_mul_backward", lib=_LIB)
def _silu_backward_fake(grad_out: Tensor, x: Tensor) -> Tensor:
    op = "silu_and_mul_backward"
    _check_glu(op, x)
    _check_given(op, "grad_out", grad_out)
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


def _silu_backward_vmap(call: Callable, info, in_dims, grad_out: Tensor, x: Tensor):
    # No reduction across rows: the batch is more rows for the fused kernel.
    size = info.batch_size
    g, x = _batch_first(grad_out, in_dims[0], size), _batch_first(x, in_dims[1], size)
    return call(_SiluAndMulBackward, _ops.silu_and_mul_backward.default, g, x), 0


class _SiluAndMulBackward(_Function):
    op = _ops.silu_and_mul_backward.default

    @staticmethod
    def setup_context(ctx, inputs, output) -> None:
        grad_out, x = inputs
        _save(ctx, grad_out, x)

    @staticmethod
    def backward(ctx, grad_grad_x: Tensor):
        grad_out, x = ctx.saved_tensors
        return _formulas.silu_and_mul_backward_vjp(grad_out, x, grad_grad_x)

    @staticmethod
    def jvp(ctx, grad_out_t, x_t) -> Tensor:
        grad_out, x = ctx.saved_tensors
        return _formulas.silu_and_mul_backward_jvp(grad_out, x, grad_out_t, x_t)

    vmap = staticmethod(functools.partial(_silu_backward_vmap, _call))


_register_autograd("silu_and_mul", _SiluAndMul, _formulas.silu_and_mul, _silu_and_mul_fake)
_register_autograd(
    "silu_and_mul_backward",
    _SiluAndMulBackward,
    _formulas.silu_and_mul_backward,
    _silu_backward_fake,
)
_register_vmap("silu_and_mul", _silu_vmap)
_register_vmap("silu_and_mul_backward", _silu_backward_vmap)
