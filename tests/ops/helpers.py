"""References and tolerances shared by the op tests.

References compute in float64 on the CPU, straight from the documented formulas
(README "The ops"), so they share no code with the kernels under test.
"""

from __future__ import annotations

import platform

import pytest
import torch

DTYPES = [torch.float32, torch.float16, torch.bfloat16, torch.float64]
DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)]

# The CPU kernel builds this machine's wheel has (csrc/kernels/cpu/isa.cpp), the
# names FUSEDOPS_CPU_ISA takes: the x86 ones only on x86.
X86 = platform.machine().lower() in ("x86_64", "amd64")
CPU_ISAS = ["baseline", "avx2", "avx512", "avx512bf16"] if X86 else ["baseline"]

# Relative-to-scale tolerances: one or two units in the last place of the dtype.
TOL = {
    torch.float32: dict(rtol=1e-5, atol=1e-5),
    torch.float16: dict(rtol=2e-3, atol=2e-3),
    torch.bfloat16: dict(rtol=1.6e-2, atol=1.6e-2),
    torch.float64: dict(rtol=1e-12, atol=1e-12),
}
GRAD_TOL = {
    torch.float32: dict(rtol=1e-4, atol=1e-4),
    torch.float16: dict(rtol=1e-2, atol=1e-2),
    torch.bfloat16: dict(rtol=6e-2, atol=6e-2),
    torch.float64: dict(rtol=1e-10, atol=1e-10),
}

# ||actual - expected|| / ||expected|| bounds for reductions.
REL_ERR = {torch.float32: 1e-5, torch.float16: 5e-3, torch.bfloat16: 2e-2, torch.float64: 1e-12}


def assert_rel_err(actual: torch.Tensor, expected: torch.Tensor, max_rel: float) -> None:
    a, e = actual.double().cpu(), expected.double().cpu()
    assert not torch.isnan(a).any(), "NaN in result"
    err = (torch.linalg.vector_norm(a - e) / torch.linalg.vector_norm(e).clamp_min(1e-30)).item()
    assert err <= max_rel, f"relative error {err:.3g} > {max_rel:.3g}"


def ref_rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    xd, wd = x.double().cpu(), weight.double().cpu()
    return xd * torch.rsqrt(xd.pow(2).mean(-1, keepdim=True) + eps) * wd


def ref_silu_and_mul(x: torch.Tensor) -> torch.Tensor:
    xd = x.double().cpu()
    d = xd.shape[-1] // 2
    return torch.nn.functional.silu(xd[..., :d]) * xd[..., d:]


def assert_close(
    actual: torch.Tensor,
    expected: torch.Tensor,
    dtype: torch.dtype,
    grad: bool = False,
    equal_nan: bool = False,
) -> None:
    """actual (of dtype) against expected within dtype's tolerance; equal_nan:
    NaN where expected has NaN, and nowhere else, passes."""
    assert actual.dtype == dtype
    tol = (GRAD_TOL if grad else TOL)[dtype]
    torch.testing.assert_close(
        actual.double().cpu(), expected.double().cpu(), equal_nan=equal_nan, **tol
    )


def randn(*shape: int, dtype: torch.dtype, device: str, seed: int = 0) -> torch.Tensor:
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=gen, dtype=torch.float64).to(dtype=dtype, device=device)


def strided_views(x: torch.Tensor) -> dict[str, torch.Tensor]:
    """Non-contiguous tensors with the same values as x (x is 2-D or more)."""
    wide = torch.empty(*x.shape[:-1], x.shape[-1] * 2, dtype=x.dtype, device=x.device)
    wide[..., ::2] = x
    transposed = x.transpose(0, -2).contiguous().transpose(0, -2) if x.dim() >= 2 else x
    padded_rows = torch.empty(*x.shape[:-1], x.shape[-1] + 3, dtype=x.dtype, device=x.device)
    padded_rows[..., : x.shape[-1]] = x
    return {
        "last_dim_stride_2": wide[..., ::2],
        "transposed": transposed,
        "row_padding": padded_rows[..., : x.shape[-1]],
    }


# The x side of the sums: zero (x + (-x) and -0 + -0), a power of two (sums
# just below it round on a finer grid), values with a full significand, the
# smallest normal, a subnormal and the largest finite value (sums past it
# overflow), each of both signs.
def rounding_addends(dtype: torch.dtype) -> list[float]:
    info = torch.finfo(dtype)
    values = [0.0, 1.0, 1.5, 3.0 * 2.0**-7, 2.0**-5 * 1.9921875, info.tiny, info.tiny / 4]
    values.append(info.max)
    return values + [-v for v in values]


def kernels_of(call) -> list[str]:
    """The names of the CUDA kernels `call` launches (torch.profiler's, demangled
    with template arguments)."""
    activities = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(activities=activities) as prof:
        call()
        torch.cuda.synchronize()
    return [e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
