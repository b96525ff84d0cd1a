"""CPU outputs are marked for 2 MiB pages before the kernels write them.

A fresh output's first write faults in each 4 KiB page; the CPU kernels mark
the whole 2 MiB pages inside an output MADV_HUGEPAGE first
(csrc/kernels/cpu/huge_pages.h), so with transparent huge pages in `madvise`
mode it faults in 2 MiB at a time. What the kernel did is visible in
/proc/self/smaps: the mapping holding those pages carries the `hg` flag.
FUSEDOPS_CPU_HUGE_PAGES=0 turns it off. The speed is in benchmarks/RESULTS.md;
these tests check the advice itself, and that results do not depend on it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

import fusedops

HUGE = 1 << 21
THP = Path("/sys/kernel/mm/transparent_hugepage")
pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or not THP.is_dir(),
    reason="needs Linux with transparent huge pages (MADV_HUGEPAGE)",
)


def vm_flags(address: int) -> list[str]:
    """The VmFlags of the mapping of this process that holds `address`."""
    inside = False
    for line in Path("/proc/self/smaps").read_text().splitlines():
        head = line.split()[0]
        if "-" in head and ":" not in head:
            start, end = (int(v, 16) for v in head.split("-"))
            inside = start <= address < end
        elif inside and line.startswith("VmFlags:"):
            return line.split()[1:]
    raise AssertionError(f"no mapping holds {address:#x}")


def first_whole_page(t: torch.Tensor) -> int:
    start = t.data_ptr()
    page = (start + HUGE - 1) // HUGE * HUGE
    assert page + HUGE <= start + t.numel() * t.element_size(), "output holds no whole 2 MiB page"
    return page


def outputs(rows: int, hidden: int) -> dict[str, torch.Tensor]:
    """Every CPU op's fresh outputs of [rows, hidden] (silu_and_mul's: [rows, hidden / 2])."""
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(rows, hidden, generator=gen)
    r = torch.randn(rows, hidden, generator=gen)
    w = torch.randn(hidden, generator=gen)
    ops = torch.ops.fusedops
    out_add, res_out = fusedops.fused_add_rms_norm(x, r, w)
    grad_x, _ = ops.rms_norm_backward(x, r, w, 1e-6)
    return {
        "rms_norm": fusedops.rms_norm(x, w),
        "fused_add_rms_norm.out": out_add,
        "fused_add_rms_norm.residual_out": res_out,
        "rms_norm_backward.grad_x": grad_x,
        "silu_and_mul": fusedops.silu_and_mul(x),
        "silu_and_mul_backward.grad_x": ops.silu_and_mul_backward(x[:, : hidden // 2], x),
    }


def test_large_outputs_are_marked_for_huge_pages():
    # 4096 x 1024 float32: 16 MiB, at least seven whole 2 MiB pages each.
    for name, out in outputs(4096, 1024).items():
        assert "hg" in vm_flags(first_whole_page(out)), f"{name}: output not marked MADV_HUGEPAGE"


def test_small_outputs_are_left_alone():
    # 1 MiB outputs hold no whole 2 MiB page: nothing to mark, and nothing
    # outside an output is ever marked. The mapping of a 1 MiB allocation is
    # glibc's, shared with other allocations: it must keep its flags.
    for name, out in outputs(256, 1024).items():
        assert "hg" not in vm_flags(out.data_ptr()), f"{name}: a small output's mapping was marked"


def test_opt_out_leaves_outputs_unmarked_and_results_equal():
    script = textwrap.dedent(
        f"""
        import sys, torch
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        from test_huge_pages import first_whole_page, outputs, vm_flags
        outs = outputs(4096, 1024)
        marked = [n for n, t in outs.items() if "hg" in vm_flags(first_whole_page(t))]
        assert not marked, f"marked although FUSEDOPS_CPU_HUGE_PAGES=0: {{marked}}"
        torch.save(outs, sys.argv[1])
        """
    )
    saved = Path(os.environ.get("TMPDIR", "/tmp")) / f"fusedops-huge-pages-{os.getpid()}.pt"
    try:
        env = {**os.environ, "FUSEDOPS_CPU_HUGE_PAGES": "0"}
        run = subprocess.run(
            [sys.executable, "-c", script, str(saved)], env=env, capture_output=True, text=True
        )
        assert run.returncode == 0, run.stderr[-2000:]
        unmarked = torch.load(saved)
    finally:
        saved.unlink(missing_ok=True)
    for name, out in outputs(4096, 1024).items():
        assert torch.equal(out, unmarked[name]), f"{name}: result depends on the page advice"
