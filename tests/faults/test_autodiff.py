"""Autodiff beyond first order: each case the ops once got silently wrong.

Before: double backward came back None (rms_norm, silu_and_mul) or wrong
(fused_add_rms_norm), torch.func.jvp gave a zero tangent, forward-mode AD a
None tangent, and torch.func.grad/vjp/jacrev failed inside torch. Each test
compares with float64 references written here in plain torch ops (they share
no code with fusedops), differentiated by torch itself.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

import pytest
import torch
import torch.autograd.forward_ad as fwAD
from torch.func import functionalize, grad, hessian, jacfwd, jacrev, jvp, vjp, vmap

import fusedops

ops = torch.ops.fusedops
DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)]
EPS = 1e-6
F64 = dict(rtol=1e-9, atol=1e-10)


def ref_rms_norm(x: torch.Tensor, w: torch.Tensor, eps: float = EPS) -> torch.Tensor:
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w


def ref_fused_add(x, r, w, eps: float = EPS):
    s = x + r
    return ref_rms_norm(s, w, eps), s


def ref_silu_and_mul(x: torch.Tensor) -> torch.Tensor:
    a, b = x.chunk(2, dim=-1)
    return torch.nn.functional.silu(a) * b


def t(*shape: int, device: str, seed: int, dtype=torch.float64, grad=False) -> torch.Tensor:
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=gen, dtype=dtype).to(device).requires_grad_(grad)


# op name -> (fusedops function, float64 reference, input shapes)
CASES: dict[str, tuple[Callable, Callable, list[tuple[int, ...]]]] = {
    "rms_norm": (fusedops.rms_norm, ref_rms_norm, [(3, 8), (8,)]),
    "fused_add_rms_norm": (fusedops.fused_add_rms_norm, ref_fused_add, [(3, 8), (3, 8), (8,)]),
    "silu_and_mul": (fusedops.silu_and_mul, ref_silu_and_mul, [(3, 8)]),
}


def inputs(name: str, device: str, grad: bool = True, dtype=torch.float64):
    return [
        t(*shape, device=device, seed=i, dtype=dtype, grad=grad)
        for i, shape in enumerate(CASES[name][2])
    ]


def scalar(out) -> torch.Tensor:
    """A scalar that depends non-linearly on every output (so second derivatives are not trivial)."""
    outs = out if isinstance(out, tuple) else (out,)
    return sum((o * o * (k + 1)).sum() for k, o in enumerate(outs))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", list(CASES))
def test_gradgradcheck(name: str, device: str) -> None:
    fn = CASES[name][0]
    assert torch.autograd.gradcheck(fn, inputs(name, device))
    assert torch.autograd.gradgradcheck(fn, inputs(name, device))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", list(CASES))
def test_second_derivative_matches_reference(name: str, device: str) -> None:
    """Was None for rms_norm and silu_and_mul, 0.5 to 2 off for fused_add_rms_norm."""
    fn, ref, _ = CASES[name]
    results = []
    for f in (fn, ref):
        args = inputs(name, device)
        grads = torch.autograd.grad(scalar(f(*args)), args, create_graph=True)
        second = torch.autograd.grad(sum(g.sum() for g in grads), args, allow_unused=True)
        results.append(second)
    for got, want in zip(*results, strict=True):
        assert got is not None
        torch.testing.assert_close(got, want, **F64)


@pytest.mark.parametrize("name", list(CASES))
def test_third_derivative_matches_reference(name: str) -> None:
    fn, ref, _ = CASES[name]
    results = []
    for f in (fn, ref):
        args = inputs(name, "cpu")
        g1 = torch.autograd.grad(scalar(f(*args)), args, create_graph=True)
        g2 = torch.autograd.grad(sum(g.sum() for g in g1), args, create_graph=True)
        results.append(torch.autograd.grad(sum((g * g).sum() for g in g2), args))
    for got, want in zip(*results, strict=True):
        torch.testing.assert_close(got, want, **F64)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_second_derivative_low_precision(device: str, dtype: torch.dtype) -> None:
    """Half and single precision: within the dtype's tolerance of the float64 answer."""
    x = t(4, 64, device=device, seed=0, dtype=dtype, grad=True)
    w = t(64, device=device, seed=1, dtype=dtype, grad=True)
    (gx,) = torch.autograd.grad(scalar(fusedops.rms_norm(x, w)), x, create_graph=True)
    (hx,) = torch.autograd.grad(gx.sum(), x)
    xd = x.detach().double().requires_grad_()
    wd = w.detach().double()
    (gxd,) = torch.autograd.grad(scalar(ref_rms_norm(xd, wd)), xd, create_graph=True)
    (hxd,) = torch.autograd.grad(gxd.sum(), xd)
    assert hx.dtype == dtype
    tol = 1e-4 if dtype == torch.float32 else 5e-2
    err = (hx.double() - hxd).norm() / hxd.norm()
    assert err < tol, f"relative error {err:.3g}"


@pytest.mark.parametrize("device", DEVICES)
def test_backward_ops_have_autograd(device: str) -> None:
    """The backward ops are differentiable on their own (and pass opcheck with grad)."""
    g, x, r = (t(4, 16, device=device, seed=s, grad=True) for s in (0, 1, 2))
    w = t(16, device=device, seed=3, grad=True)
    gs = t(4, 8, device=device, seed=4, grad=True)
    cases = [
        (ops.rms_norm_backward.default, (g, x, w, EPS)),
        (ops.fused_add_rms_norm_backward.default, (g, r, x, w, EPS)),
        (ops.silu_and_mul_backward.default, (gs, x)),
    ]
    for op, args in cases:
        assert torch.autograd.gradcheck(op, args)
        torch.library.opcheck(op, args)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", list(CASES))
def test_no_untracked_autograd_warning(name: str, device: str) -> None:
    """torch warned 'an autograd kernel was not registered' on every double backward."""
    args = inputs(name, device)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        grads = torch.autograd.grad(scalar(CASES[name][0](*args)), args, create_graph=True)
        torch.autograd.grad(sum(g.sum() for g in grads), args)


# ---- forward mode -----------------------------------------------------------------
def tangents(name: str, device: str) -> list[torch.Tensor]:
    return [t(*shape, device=device, seed=10 + i) for i, shape in enumerate(CASES[name][2])]


def as_tuple(out) -> tuple[torch.Tensor, ...]:
    return out if isinstance(out, tuple) else (out,)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", list(CASES))
def test_func_jvp(name: str, device: str) -> None:
    """Was a zero tangent."""
    fn, ref, _ = CASES[name]
    args, tans = inputs(name, device, grad=False), tangents(name, device)
    out, tangent = jvp(fn, tuple(args), tuple(tans))
    ref_out, ref_tangent = jvp(ref, tuple(args), tuple(tans))
    torch.testing.assert_close(as_tuple(out), as_tuple(ref_out), **F64)
    torch.testing.assert_close(as_tuple(tangent), as_tuple(ref_tangent), **F64)
    assert all(tg.abs().max() > 0 for tg in as_tuple(tangent))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("entry", ["wrapper", "torch.ops"])
def test_forward_ad(name: str, device: str, entry: str) -> None:
    """torch.autograd.forward_ad: the tangent was None."""
    fn, ref, _ = CASES[name]
    if entry == "torch.ops":
        fn = getattr(ops, name).default
    args, tans = inputs(name, device, grad=False), tangents(name, device)
    _, ref_tangent = jvp(ref, tuple(args), tuple(tans))
    with fwAD.dual_level():
        duals = [fwAD.make_dual(a, tg) for a, tg in zip(args, tans, strict=True)]
        got = tuple(fwAD.unpack_dual(o).tangent for o in as_tuple(fn(*duals)))
    assert all(g is not None for g in got)
    torch.testing.assert_close(got, as_tuple(ref_tangent), **F64)


@pytest.mark.parametrize("device", DEVICES)
def test_forward_over_reverse_hessian(device: str) -> None:
    """jacfwd(jacrev(f)) needs the jvp of the backward ops."""
    w = t(8, device=device, seed=1)
    x = t(8, device=device, seed=0)
    for fn, ref in [
        (lambda a: fusedops.rms_norm(a, w).pow(2).sum(), lambda a: ref_rms_norm(a, w).pow(2).sum()),
        (
            lambda a: fusedops.silu_and_mul(a).pow(2).sum(),
            lambda a: ref_silu_and_mul(a).pow(2).sum(),
        ),
        (
            lambda a: fusedops.fused_add_rms_norm(a, x, w)[0].pow(2).sum(),
            lambda a: ref_fused_add(a, x, w)[0].pow(2).sum(),
        ),
    ]:
        torch.testing.assert_close(hessian(fn)(x), hessian(ref)(x), **F64)
        torch.testing.assert_close(jacrev(jacrev(fn))(x), hessian(ref)(x), **F64)


# ---- torch.func ---------------------------------------------------------------------
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("entry", ["wrapper", "torch.ops"])
def test_func_grad_vjp_jacrev_jacfwd(name: str, device: str, entry: str) -> None:
    """grad/vjp/jacrev failed with torch's 'must override the setup_context staticmethod'."""
    fn, ref, _ = CASES[name]
    if entry == "torch.ops":
        fn = getattr(ops, name).default
    args = tuple(inputs(name, device, grad=False))
    argnums = tuple(range(len(args)))

    def loss(f):
        return lambda *a: scalar(f(*a))

    torch.testing.assert_close(
        grad(loss(fn), argnums)(*args), grad(loss(ref), argnums)(*args), **F64
    )
    out, pullback = vjp(fn, *args)
    _ref_out, ref_pullback = vjp(ref, *args)
    cot = tuple(torch.ones_like(o) for o in as_tuple(out))
    cot = cot if isinstance(out, tuple) else cot[0]
    torch.testing.assert_close(pullback(cot), ref_pullback(cot), **F64)
    for transform in (jacrev, jacfwd):
        torch.testing.assert_close(
            transform(fn, argnums)(*args), transform(ref, argnums)(*args), **F64
        )


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", list(CASES))
def test_vjp_pullback_differentiated_after_the_transform(name: str, device: str) -> None:
    """A torch.func.vjp pullback run after vjp returned, differentiated by the
    outer autograd: the backward applies the backward op's Function to tensors
    saved inside the transform, dead functorch wrappers by then. The fast
    autograd path must unwrap them, as torch's Function.apply does."""
    fn, ref, _ = CASES[name]
    grads = []
    for f in (fn, ref):
        args = tuple(inputs(name, device, grad=True))
        out, pullback = vjp(f, *args)
        cot = tuple(
            t(*o.shape, device=device, seed=10 + k, grad=True) for k, o in enumerate(as_tuple(out))
        )
        pulled = pullback(cot if isinstance(out, tuple) else cot[0])
        grads.append(torch.autograd.grad(scalar(pulled), (*cot, *args)))
    torch.testing.assert_close(grads[0], grads[1], **F64)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("entry", ["wrapper", "torch.ops"])
def test_vmap(device: str, entry: str) -> None:
    """vmap over any argument, batched weights included, without the per-sample loop."""
    rms = fusedops.rms_norm if entry == "wrapper" else ops.rms_norm.default
    fused = fusedops.fused_add_rms_norm if entry == "wrapper" else ops.fused_add_rms_norm.default
    silu = fusedops.silu_and_mul if entry == "wrapper" else ops.silu_and_mul.default
    xb = t(5, 3, 8, device=device, seed=0)
    rb = t(5, 3, 8, device=device, seed=1)
    w = t(8, device=device, seed=2)
    wb = t(5, 8, device=device, seed=3)
    cases = [
        (vmap(rms, (0, None)), vmap(ref_rms_norm, (0, None)), (xb, w)),
        (vmap(rms, (1, None)), vmap(ref_rms_norm, (1, None)), (xb, w)),
        (vmap(rms, (0, 0)), vmap(ref_rms_norm, (0, 0)), (xb, wb)),
        (vmap(rms, (None, 0)), vmap(ref_rms_norm, (None, 0)), (xb[0], wb)),
        (vmap(fused, (0, 0, None)), vmap(ref_fused_add, (0, 0, None)), (xb, rb, w)),
        (vmap(fused, (0, None, 0)), vmap(ref_fused_add, (0, None, 0)), (xb, rb[0], wb)),
        (vmap(silu, 0), vmap(ref_silu_and_mul, 0), (xb,)),
        (vmap(silu, 2), vmap(ref_silu_and_mul, 2), (xb.transpose(1, 2).contiguous(),)),
    ]
    with warnings.catch_warnings():
        # torch warns "have not yet implemented the batching rule" on the slow fallback.
        warnings.simplefilter("error")
        for f, ref, args in cases:
            torch.testing.assert_close(f(*args), ref(*args), **F64)


@pytest.mark.parametrize("device", DEVICES)
def test_per_sample_gradients(device: str) -> None:
    """vmap(grad(...)): the weight gradient must be summed per sample, not over the batch."""
    xb = t(5, 3, 8, device=device, seed=0)
    rb = t(5, 3, 8, device=device, seed=1)
    w = t(8, device=device, seed=2)

    def per_sample(f):
        return vmap(grad(lambda w_, x, r: scalar(f(x, r, w_))), (None, 0, 0))(w, xb, rb)

    cases = [
        (lambda x, r, w_: fusedops.rms_norm(x, w_), lambda x, r, w_: ref_rms_norm(x, w_)),
        (lambda x, r, w_: fusedops.fused_add_rms_norm(x, r, w_), ref_fused_add),
        (
            lambda x, r, w_: fusedops.silu_and_mul(x) * w_[:4],
            lambda x, r, w_: ref_silu_and_mul(x) * w_[:4],
        ),
    ]
    for f, ref in cases:
        got = per_sample(f)
        assert got.shape == (5, 8)
        torch.testing.assert_close(got, per_sample(ref), **F64)
    # grad of a vmapped function, and a second derivative under vmap
    loss = lambda f: lambda w_: vmap(f, (0, None))(xb, w_).pow(2).sum()  # noqa: E731
    torch.testing.assert_close(grad(loss(fusedops.rms_norm))(w), grad(loss(ref_rms_norm))(w), **F64)
    torch.testing.assert_close(
        vmap(hessian(lambda a: fusedops.rms_norm(a, w).pow(2).sum()))(xb[0]),
        vmap(hessian(lambda a: ref_rms_norm(a, w).pow(2).sum()))(xb[0]),
        **F64,
    )


@pytest.mark.parametrize("device", DEVICES)
def test_compile_still_differentiates(device: str) -> None:
    """torch.compile(fullgraph=True, dynamic=True): forward and backward against float64."""
    torch._dynamo.reset()

    @torch.compile(fullgraph=True, dynamic=True)
    def f(x, r, w):
        out, s = fusedops.fused_add_rms_norm(x, r, w)
        return fusedops.silu_and_mul(fusedops.rms_norm(out, w).repeat(1, 2)) + s

    def ref(x, r, w):
        out, s = ref_fused_add(x, r, w)
        return ref_silu_and_mul(ref_rms_norm(out, w).repeat(1, 2)) + s

    for rows in (3, 6):
        args = [
            t(rows, 8, device=device, seed=0, grad=True),
            t(rows, 8, device=device, seed=1, grad=True),
            t(8, device=device, seed=2, grad=True),
        ]
        ref_args = [a.detach().clone().requires_grad_() for a in args]
        out, ref_out = f(*args), ref(*ref_args)
        torch.testing.assert_close(out, ref_out, **F64)
        got = torch.autograd.grad(out.pow(2).sum(), args)
        want = torch.autograd.grad(ref_out.pow(2).sum(), ref_args)
        torch.testing.assert_close(got, want, **F64)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("entry", ["wrapper", "torch.ops"])
def test_functionalize(device: str, entry: str) -> None:
    """torch.func.functionalize had no rule for the ops' autograd.Function."""
    rms = fusedops.rms_norm if entry == "wrapper" else ops.rms_norm.default
    fused = fusedops.fused_add_rms_norm if entry == "wrapper" else ops.fused_add_rms_norm.default
    silu = fusedops.silu_and_mul if entry == "wrapper" else ops.silu_and_mul.default
    x, r, w = (
        t(3, 8, device=device, seed=0),
        t(3, 8, device=device, seed=1),
        t(8, device=device, seed=2),
    )
    torch.testing.assert_close(functionalize(rms)(x, w), ref_rms_norm(x, w), **F64)
    torch.testing.assert_close(functionalize(fused)(x, r, w), ref_fused_add(x, r, w), **F64)
    torch.testing.assert_close(functionalize(silu)(x), ref_silu_and_mul(x), **F64)
    torch.testing.assert_close(
        grad(functionalize(lambda a: rms(a, w).pow(2).sum()))(x),
        grad(lambda a: ref_rms_norm(a, w).pow(2).sum())(x),
        **F64,
    )


def _transforms():
    """Each runs f over its arguments under one torch.func transform (or a pair)."""

    def under_grad(f, *args):
        return grad(lambda *a: scalar(f(*a)))(*args)

    def under_jvp(f, *args):
        return jvp(f, args, tuple(torch.ones_like(a) for a in args))

    def under_vmap_all(f, *args):  # every argument batched: the weight too
        return vmap(f)(*(a.unsqueeze(0).expand(2, *a.shape) for a in args))

    def under_vmap_grad(f, *args):
        return vmap(lambda *a: grad(lambda *b: scalar(f(*b)))(*a))(
            *(a.unsqueeze(0).expand(2, *a.shape) for a in args)
        )

    return {
        "grad": under_grad,
        "jvp": under_jvp,
        "vmap": under_vmap_all,
        "vmap(grad)": under_vmap_grad,
    }


BAD_INPUTS = [
    # (op, args as shapes, the message): a weight of one element would broadcast in torch math
    ("rms_norm", [(3, 8), (4,)], "fusedops.rms_norm: expected weight to have shape [8]"),
    ("rms_norm", [(3, 8), (1,)], "fusedops.rms_norm: expected weight to have shape [8]"),
    (
        "fused_add_rms_norm",
        [(3, 8), (3, 8), (1,)],
        "fusedops.fused_add_rms_norm: expected weight to have shape [8]",
    ),
    (
        "fused_add_rms_norm",
        [(3, 8), (1, 8), (8,)],
        "fusedops.fused_add_rms_norm: expected residual to have the same shape as x",
    ),
    (
        "silu_and_mul",
        [(3, 7)],
        "fusedops.silu_and_mul: expected the last dimension of x to be even",
    ),
]


@pytest.mark.parametrize("transform", list(_transforms()))
@pytest.mark.parametrize("entry", ["wrapper", "torch.ops"])
@pytest.mark.parametrize("name, shapes, message", BAD_INPUTS)
def test_bad_input_under_transforms(name, shapes, message, entry, transform) -> None:
    """Inside a transform the ops may run as torch-op formulas: the same checks still apply."""
    fn = getattr(fusedops, name) if entry == "wrapper" else getattr(ops, name).default
    args = [t(*shape, device="cpu", seed=i) for i, shape in enumerate(shapes)]
    with pytest.raises(RuntimeError, match=message.replace("[", r"\[")):
        _transforms()[transform](fn, *args)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("entry", ["wrapper", "torch.ops"])
def test_grad_mode_is_respected(device: str, entry: str) -> None:
    """The no-grad fast path must not drop a graph that is wanted, nor build one that is not."""
    rms = fusedops.rms_norm if entry == "wrapper" else ops.rms_norm.default
    x, w = t(3, 8, device=device, seed=0), t(8, device=device, seed=1)
    xg = x.clone().requires_grad_()
    assert not rms(x, w).requires_grad
    with torch.no_grad():
        assert not rms(xg, w).requires_grad
    with torch.inference_mode():
        torch.testing.assert_close(rms(x, w), ref_rms_norm(x, w), **F64)
    out = rms(xg, w)
    assert out.grad_fn is not None
    (got,) = torch.autograd.grad(scalar(out), xg)
    xr = x.clone().requires_grad_()
    (want,) = torch.autograd.grad(scalar(ref_rms_norm(xr, w)), xr)
    torch.testing.assert_close(got, want, **F64)
    # non-reentrant checkpointing runs the forward again under its own hooks
    ckpt = torch.utils.checkpoint.checkpoint(lambda a: scalar(rms(a, w)), xg, use_reentrant=False)
    torch.testing.assert_close(torch.autograd.grad(ckpt, xg)[0], want, **F64)


# ---- the requires-grad fast path (fusedops.ops._cxx_apply, _unwrapping, _save) --------
class _Double(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a: torch.Tensor) -> torch.Tensor:
        return a * 2

    @staticmethod
    def backward(ctx, grad: torch.Tensor) -> torch.Tensor:
        return grad * 2


def test_cxx_apply_records_the_function_node() -> None:
    apply = fusedops.ops._cxx_apply(_Double)
    a = t(4, device="cpu", seed=0, grad=True)
    out = apply(a)
    assert type(out.grad_fn).__name__ == "_DoubleBackward"
    (got,) = torch.autograd.grad(out.sum(), a)
    torch.testing.assert_close(got, torch.full_like(a, 2.0))


def test_cxx_apply_falls_back_without_the_cxx_base(monkeypatch: pytest.MonkeyPatch) -> None:
    """A torch without `torch._C._FunctionBase` gets Function.apply, not an AttributeError."""
    monkeypatch.delattr(torch._C, "_FunctionBase")
    assert fusedops.ops._cxx_apply(_Double) == _Double.apply


def test_unwrapping_refuses_a_count_it_does_not_spell_out() -> None:
    with pytest.raises(ValueError, match="no unwrapping apply for 5 tensor arguments"):
        fusedops.ops._unwrapping(_Double.apply, 5)


@pytest.mark.parametrize("name", list(CASES))
def test_forward_ad_after_plain_backward(name: str) -> None:
    """save_for_forward is skipped outside forward AD: a Function recorded then must
    still backprop, and one recorded inside dual_level must still give tangents."""
    fn, ref, _ = CASES[name]
    args = inputs(name, "cpu")
    got = torch.autograd.grad(scalar(fn(*args)), args)
    want = torch.autograd.grad(scalar(ref(*args)), args)
    torch.testing.assert_close(got, want, **F64)
    primals = inputs(name, "cpu", grad=False)
    tangents = [torch.ones_like(p) for p in primals]
    with fwAD.dual_level():
        out = fn(*(fwAD.make_dual(p, tg) for p, tg in zip(primals, tangents, strict=True)))
        got_t = [fwAD.unpack_dual(o).tangent for o in as_tuple(out)]
    _, want_t = jvp(ref, tuple(primals), tuple(tangents))
    torch.testing.assert_close(tuple(got_t), as_tuple(want_t), **F64)


@pytest.mark.parametrize("entry", ["wrapper", "torch.ops"])
def test_non_tensor_weight_same_error_with_and_without_grad(entry: str) -> None:
    """weight=None (F.rms_norm accepts it) must get the op's own error on the requires-grad
    path too, not a TypeError from the dead-wrapper unwrapping, and that error names
    the argument."""
    rms = fusedops.rms_norm if entry == "wrapper" else ops.rms_norm.default
    messages = []
    for requires_grad in (False, True):
        x = t(3, 8, device="cpu", seed=0, grad=requires_grad)
        with pytest.raises(RuntimeError) as info:
            rms(x, None)
        messages.append(str(info.value))
    assert messages[0] == messages[1]
    assert "expected weight to be a tensor, got None" in messages[0]
