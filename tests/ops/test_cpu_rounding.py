"""The CPU kernels round float results to 16 bits exactly as torch does.

The vector code converts bf16 through its own bit arithmetic (round to nearest
even in the top 16 bits, NaN kept) and, for whole stretches of two vectors,
in an even/odd lane order of its own; fp16 goes through F16C where the CPU has
it. Each check below feeds every 16-bit pattern (NaN and inf included) through
a kernel whose result torch can compute with the same float operations, and
compares the bits. The widths run a row through the two-vector body, the
one-vector step and the scalar tail for every ISA's vector width.

The checks run with the ISA this process picked, and again in a subprocess
under each ISA build this CPU can run (FUSEDOPS_CPU_ISA).
"""

from __future__ import annotations

import math
import os
import subprocess
import sys

import pytest
import torch
from helpers import CPU_ISAS, rounding_addends

import fusedops

EPS = 1e-6
DTYPES16 = [torch.bfloat16, torch.float16]
# 1055: pairs, one vector and a tail of 3, 7 and 15 at 4, 8 and 16 float lanes.
WIDTHS = [1055, 4096]
PROBE = "import torch, fusedops; fusedops.rms_norm(torch.ones(1, 8), torch.ones(8), 1e-6)"


def every_pattern(dtype: torch.dtype, hidden: int) -> torch.Tensor:
    """All 2^16 bit patterns of dtype, padded with zeros to whole rows of `hidden`."""
    patterns = torch.arange(-(2**15), 2**15, dtype=torch.int32).to(torch.int16).view(dtype)
    rows = -(-patterns.numel() // hidden)
    out = torch.zeros(rows * hidden, dtype=dtype)
    out[: patterns.numel()] = patterns
    return out.view(rows, hidden)


def assert_same_bits(actual: torch.Tensor, expected: torch.Tensor) -> None:
    """Equal as integers (so -0 differs from +0), NaN where torch's is NaN (torch's
    vectorised conversion and the scalar one spell NaN differently)."""
    nan = expected.isnan()
    assert torch.equal(actual.isnan(), nan), "NaN in other places than torch's"
    a, e = actual.view(torch.int16)[~nan], expected.view(torch.int16)[~nan]
    bad = (a != e).nonzero()
    if bad.numel():
        i = int(bad[0])
        raise AssertionError(
            f"{bad.numel()} of {e.numel()} values differ; first: got {a[i].item():#06x}, "
            f"torch {e[i].item():#06x}"
        )


@pytest.mark.parametrize("dtype", DTYPES16, ids=str)
@pytest.mark.parametrize("hidden", WIDTHS)
def test_residual_sum_is_torchs_for_every_bit_pattern(dtype: torch.dtype, hidden: int) -> None:
    """fused_add_rms_norm's residual output is the rounded float sum: against every
    pattern as the residual, x takes values that land sums on rounding midpoints,
    signed zeros, subnormals and overflow."""
    r = every_pattern(dtype, hidden)
    w = torch.ones(hidden, dtype=dtype)
    for v in rounding_addends(dtype):
        x = torch.full_like(r, v)
        _, res = fusedops.fused_add_rms_norm(x, r, w, EPS)
        assert_same_bits(res, x + r)


@pytest.mark.parametrize("dtype", DTYPES16, ids=str)
@pytest.mark.parametrize("hidden", WIDTHS)
def test_rms_norm_output_is_torchs_for_every_weight_pattern(
    dtype: torch.dtype, hidden: int
) -> None:
    """Rows of ones have rstd = 1/sqrt(1 + eps) exactly as the kernel computes it (in
    double, rounded to float), so each output is the float product x * rstd * w
    rounded once: torch rounds the same product. Every pattern is the weight; eps
    = 0.5 puts rstd (0.816) far from 1, so nearly every product needs rounding."""
    eps = 0.5
    w_rows = every_pattern(dtype, hidden)
    rstd = torch.tensor(1.0 / math.sqrt(hidden / hidden + eps), dtype=torch.float32)
    x = torch.ones(1, hidden, dtype=dtype)
    changed = 0
    for w in w_rows:
        out = fusedops.rms_norm(x, w, eps)
        expected = (x.float() * rstd * w.float()).to(dtype)
        assert_same_bits(out, expected)
        changed += int((expected.view(torch.int16) != w.view(torch.int16)).sum())
    assert changed > 60000, "the products should not be the weights themselves"


def test_bf16_nan_is_one_pattern_in_every_path() -> None:
    """A NaN result is 0x7fc0 whichever path (pairs, one vector, scalar tail) stored it,
    as the scalar conversion spells it: the residual sums with every NaN pattern
    (their payloads would survive a plain rounding) all come out 0x7fc0."""
    r = every_pattern(torch.bfloat16, WIDTHS[0])
    x = torch.ones_like(r)
    _, res = fusedops.fused_add_rms_norm(x, r, torch.ones(WIDTHS[0], dtype=torch.bfloat16), EPS)
    nan = res.isnan()
    assert int(nan.sum()) == 254  # 127 NaN patterns of each sign
    assert torch.equal(res.view(torch.int16)[nan], torch.full((254,), 0x7FC0, dtype=torch.int16))


@pytest.mark.parametrize("isa", CPU_ISAS)
def test_every_isa_rounds_like_torch(isa: str) -> None:
    """The two tests above under each ISA build this CPU can run."""
    env = {**os.environ, "FUSEDOPS_CPU_ISA": isa}
    probe = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True)
    if probe.returncode != 0 and "does not support it" in probe.stderr:
        pytest.skip(f"this CPU cannot run the {isa} build")
    assert probe.returncode == 0, probe.stderr
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", __file__]
    proc = subprocess.run([*cmd, "-k", "not every_isa"], env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert "\n9 passed" in proc.stdout, proc.stdout[-2000:]
