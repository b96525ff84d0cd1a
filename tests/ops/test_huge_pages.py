"""CPU outputs are marked for 2 MiB pages before the kernels write them.

A fresh output's first write faults in each 4 KiB page; the CPU kernels mark
the whole, aligned 2 MiB pages inside an output MADV_HUGEPAGE first
(csrc/kernels/cpu/huge_pages.h), so with transparent huge pages in `madvise`
mode they fault in 2 MiB at a time. The kernel's record of the advice is in
/proc/self/smaps: the mapping holding those pages carries the `hg` flag.

Each case runs in a fresh interpreter whose malloc is pinned: glibc's mmap
threshold otherwise adapts (up to 32 MiB) and later allocations reuse ranges
an earlier output marked, and torch's THP_MEM_ALLOC_ENABLE or glibc's hugetlb
tunable would mark every allocation themselves. The speed is measured by
`nox -s bench` (benchmarks/RESULTS.md), not here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

THP = Path("/sys/kernel/mm/transparent_hugepage")


def _smaps_has_flags() -> bool:
    try:
        return "VmFlags:" in Path("/proc/self/smaps").read_text()
    except OSError:
        return False


pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or not THP.is_dir() or not _smaps_has_flags(),
    reason="needs Linux with transparent huge pages and VmFlags in /proc/self/smaps",
)

# Prints, as JSON, each output's flags at its first whole 2 MiB page and just
# outside the marked range on either side, and the same for the input x (torch
# allocated it; nothing of ours touched it): the control.
PROBE = textwrap.dedent(
    """
    import json, sys, torch, fusedops
    from pathlib import Path

    HUGE = 1 << 21

    def vm_flags(address):
        inside = False
        for line in Path("/proc/self/smaps").read_text().splitlines():
            head = line.split()[0]
            if "-" in head and ":" not in head:
                start, end = (int(v, 16) for v in head.split("-"))
                inside = start <= address < end
            elif inside and line.startswith("VmFlags:"):
                return line.split()[1:]
        raise SystemExit(f"no mapping holds {address:#x}")

    def probe(t):
        start, end = t.data_ptr(), t.data_ptr() + t.numel() * t.element_size()
        first, last = (start + HUGE - 1) // HUGE * HUGE, end // HUGE * HUGE
        report = {"start": "hg" in vm_flags(start), "whole_pages": max(0, (last - first) // HUGE)}
        if last > first:
            report["first_page"] = "hg" in vm_flags(first)
            report["last_page"] = "hg" in vm_flags(last - 1)
            report["before"] = "hg" in vm_flags(first - 1) if first > start else None
            report["after"] = "hg" in vm_flags(last) if last < end else None
        return report

    rows, hidden = int(sys.argv[1]), int(sys.argv[2])
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(rows, hidden, generator=gen)
    r = torch.randn(rows, hidden, generator=gen)
    w = torch.randn(hidden, generator=gen)
    ops = torch.ops.fusedops
    out_add, res_out = fusedops.fused_add_rms_norm(x, r, w)
    outputs = {
        "input x (control)": x,
        "rms_norm": fusedops.rms_norm(x, w),
        "fused_add_rms_norm.out": out_add,
        "fused_add_rms_norm.residual_out": res_out,
        "rms_norm_backward.grad_x": ops.rms_norm_backward(x, r, w, 1e-6)[0],
        "silu_and_mul": fusedops.silu_and_mul(x),
        "silu_and_mul_backward.grad_x": ops.silu_and_mul_backward(x[:, : hidden // 2], x),
    }
    print(json.dumps({name: probe(t) for name, t in outputs.items()}))
    """
)


def run_probe(rows: int, hidden: int, setting: str | None) -> subprocess.CompletedProcess:
    env = {
        k: v for k, v in os.environ.items() if k not in ("THP_MEM_ALLOC_ENABLE", "GLIBC_TUNABLES")
    }
    env["MALLOC_MMAP_THRESHOLD_"] = str(128 << 10)  # fixed: every output its own mapping
    env.pop("FUSEDOPS_CPU_HUGE_PAGES", None)
    if setting is not None:
        env["FUSEDOPS_CPU_HUGE_PAGES"] = setting
    return subprocess.run(
        [sys.executable, "-c", PROBE, str(rows), str(hidden)],
        env=env,
        capture_output=True,
        text=True,
    )


def probe(rows: int, hidden: int, setting: str | None = None) -> dict[str, dict]:
    run = run_probe(rows, hidden, setting)
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout.strip().splitlines()[-1])


def test_large_outputs_marked_exactly_on_their_whole_pages():
    # 4096 x 1024 float32: 16 MiB outputs (silu_and_mul's 8 MiB), 3-8 whole pages each.
    report = probe(4096, 1024)
    control = report.pop("input x (control)")
    assert control["whole_pages"] >= 3
    assert not control["first_page"], "torch's own allocation is marked: the check proves nothing"
    for name, r in report.items():
        assert r["whole_pages"] >= 3, name
        assert r["first_page"] and r["last_page"], f"{name}: not marked MADV_HUGEPAGE"
        # The partial pages at either end hold other memory: never marked.
        assert r["before"] in (False, None) and r["after"] in (False, None), f"{name}: {r}"


def test_small_outputs_are_left_alone():
    # 256 x 1024 float32: 1 MiB outputs, no whole 2 MiB page: nothing is marked.
    for name, r in probe(256, 1024).items():
        assert r["whole_pages"] == 0 or name.startswith("input"), name
        assert not r["start"], f"{name}: a small output's mapping was marked"


@pytest.mark.parametrize("setting", ["0", "Off"])
def test_opt_out_leaves_outputs_unmarked(setting):
    for name, r in probe(4096, 1024, setting).items():
        assert not r["first_page"], f"{name}: marked although FUSEDOPS_CPU_HUGE_PAGES={setting}"


@pytest.mark.parametrize("setting", ["yes", ""])
def test_explicit_on_marks_outputs(setting):
    report = probe(4096, 1024, setting)
    assert report["rms_norm"]["first_page"], f"not marked with FUSEDOPS_CPU_HUGE_PAGES={setting!r}"


def test_unknown_setting_is_an_error_that_names_it():
    run = run_probe(4096, 1024, "maybe")
    assert run.returncode != 0
    assert "FUSEDOPS_CPU_HUGE_PAGES=maybe is not one of 1/true/yes/on or 0/false/no/off" in (
        run.stderr
    )
