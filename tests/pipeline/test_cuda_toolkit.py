"""pipeline.toolchain.cuda: finding the toolkit without guessing wrong, and host compiler bounds.

nvcc refuses a GCC newer than its crt/host_config.h allows, and torch's
cpp_extension has its own table; each CUDA cell's `gcc` in matrix.json must
fit both, and a build with a compiler out of range fails in seconds, naming
the bound.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from pipeline import matrix
from pipeline.toolchain import ToolchainError, cuda
from pipeline.toolchain.cuda import ToolkitError, find_toolkit

SYSTEM_CUDA = Path("/usr/local/cuda")


def executable(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return path


def fake_toolkit(root: Path, version: str = "13.0", gcc_limit: int | None = None) -> Path:
    """A directory that looks like a toolkit, with an nvcc that reports `version`."""
    (root / "include" / "crt").mkdir(parents=True)
    (root / "include" / "cuda_runtime.h").write_text("")
    if gcc_limit is not None:
        (root / "include" / "crt" / "host_config.h").write_text(
            "#if defined(__GNUC__)\n"
            f"#if __GNUC__ > {gcc_limit}\n"
            "#error -- unsupported GNU version!\n"
            f"#endif /* __GNUC__ > {gcc_limit} */\n"
            "#endif\n"
        )
    executable(
        root / "bin" / "nvcc",
        "#!/bin/sh\n"
        f'if [ "$1" = "--version" ]; then echo "Cuda compilation tools, release {version}, V{version}.1"; exit 0; fi\n'
        f'echo "#$ TOP={root}/bin/.."\n',
    )
    return root


def fake_gcc(path: Path, version: str, banner: str = "gcc (GCC)") -> Path:
    """A `gcc` that prints `version` for -dumpversion."""
    return executable(
        path,
        "#!/bin/sh\n"
        f'if [ "$1" = "-dumpversion" ]; then echo "{version}"; exit 0; fi\n'
        f'echo "{banner} {version}"\n',
    )


# ---- finding the toolkit -------------------------------------------------------------


def test_cuda_home_wins(tmp_path: Path) -> None:
    root = fake_toolkit(tmp_path / "cuda-13.2", "13.2")
    found = find_toolkit({"CUDA_HOME": str(root), "PATH": ""})
    assert found is not None and found.version == "13.2" and found.variant == "cu132"
    assert found.source == "$CUDA_HOME" and found.nvcc == root.resolve() / "bin" / "nvcc"


def test_cuda_path_is_read_too(tmp_path: Path) -> None:
    root = fake_toolkit(tmp_path / "tk", "12.8")
    found = find_toolkit({"CUDA_PATH": str(root), "PATH": ""})
    assert found is not None and (found.version, found.source) == ("12.8", "$CUDA_PATH")


def test_cuda_home_that_is_not_a_toolkit_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ToolkitError) as e:
        find_toolkit({"CUDA_HOME": str(tmp_path), "PATH": ""})
    assert f"$CUDA_HOME={tmp_path} is not a CUDA toolkit" in str(e.value)
    assert "unset it or point it at one" in str(e.value)


def test_an_nvcc_without_a_version_is_an_error(tmp_path: Path) -> None:
    root = fake_toolkit(tmp_path / "tk")
    executable(root / "bin" / "nvcc", "#!/bin/sh\necho hello\n")
    with pytest.raises(
        ToolkitError, match=r"could not read the CUDA version from `.*nvcc --version`"
    ):
        find_toolkit({"CUDA_HOME": str(root), "PATH": ""})


def test_wrapper_nvcc_outside_the_root_asks_nvcc(tmp_path: Path) -> None:
    """The nvcc on PATH is a wrapper in a bin/ that is no toolkit (e.g. /usr/local/bin/nvcc
    execs the real one): its parent is not trusted, nvcc's own TOP= is."""
    root = fake_toolkit(tmp_path / "real", "13.0")
    wrapper = executable(
        tmp_path / "wrappers" / "bin" / "nvcc", f'#!/bin/sh\nexec {root}/bin/nvcc "$@"\n'
    )
    found = find_toolkit({"PATH": str(wrapper.parent)})
    assert found is not None and found.root == root.resolve()
    assert "reported by nvcc" in found.source


def test_nvcc_on_path_inside_a_toolkit(tmp_path: Path) -> None:
    root = fake_toolkit(tmp_path / "tk", "13.0")
    found = find_toolkit({"PATH": str(root / "bin")})
    assert found is not None and found.root == root.resolve()
    assert found.source.startswith("nvcc on PATH")


@pytest.mark.skipif(not (SYSTEM_CUDA / "bin" / "nvcc").exists(), reason="no /usr/local/cuda here")
def test_this_machine() -> None:
    found = find_toolkit(dict(os.environ))
    assert found is not None
    assert (found.root / "include" / "cuda_runtime.h").exists() or list(
        found.root.glob("targets/*/include/cuda_runtime.h")
    )


# ---- host compiler bounds: the data ----------------------------------------------------

# nvcc's own bound (crt/host_config.h: `#if __GNUC__ > N` -> #error), newest accepted GCC.
NVCC_GCC_MAX = {"12.6": 13, "12.8": 14, "12.9": 14, "13.0": 15, "13.2": 15}


@pytest.fixture(scope="module")
def cuda_cells() -> list:
    return [c for c in matrix.expand(include_optional=True) if not c.variant.is_cpu]


def test_every_cuda_cell_has_a_host_compiler_nvcc_accepts(cuda_cells) -> None:
    assert set(NVCC_GCC_MAX) >= {c.cuda for c in cuda_cells}, "add the new CUDA's bound here"
    for c in cuda_cells:
        assert c.gcc is not None and c.gcc <= NVCC_GCC_MAX[c.cuda], c.id
        assert cuda.host_compiler_problem(c.cuda, c.gcc, NVCC_GCC_MAX[c.cuda], None) is None


@pytest.mark.parametrize(
    "version", sorted(NVCC_GCC_MAX, key=lambda v: tuple(map(int, v.split("."))))
)
def test_every_cuda_cell_has_a_host_compiler_torch_accepts(cuda_cells, version) -> None:
    cpp_extension = pytest.importorskip("torch.utils.cpp_extension")
    bounds = getattr(cpp_extension, "CUDA_GCC_VERSIONS", {}).get(version)
    if bounds is None:
        pytest.skip(f"the installed torch's CUDA_GCC_VERSIONS has no CUDA {version}")
    (low, high) = bounds  # ((min major, minor, patch), (exclusive max major, minor))
    assert cuda.torch_gcc_limit(version) == high[0] - 1
    for c in (c for c in cuda_cells if c.cuda == version):
        assert low[0] <= c.gcc < high[0], c.id


# ---- host compiler bounds: the functions -----------------------------------------------


def test_nvcc_gcc_limit_reads_host_config(tmp_path: Path) -> None:
    assert cuda.nvcc_gcc_limit(fake_toolkit(tmp_path / "a", "12.6", gcc_limit=13)) == 13
    assert cuda.nvcc_gcc_limit(fake_toolkit(tmp_path / "b", "13.0")) is None  # no header


def test_nvcc_gcc_limit_reads_the_targets_header(tmp_path: Path) -> None:
    root = fake_toolkit(tmp_path / "tk", "12.8")
    header = root / "targets" / "x86_64-linux" / "include" / "crt" / "host_config.h"
    header.parent.mkdir(parents=True)
    header.write_text("#if __GNUC__ > 14\n#error unsupported\n#endif\n")
    assert cuda.nvcc_gcc_limit(root) == 14


@pytest.mark.skipif(
    not (SYSTEM_CUDA / "include" / "crt" / "host_config.h").is_file(),
    reason="no /usr/local/cuda here",
)
def test_nvcc_gcc_limit_of_this_machines_toolkit() -> None:
    found = find_toolkit({"CUDA_HOME": str(SYSTEM_CUDA), "PATH": ""})
    assert found is not None
    limit = cuda.nvcc_gcc_limit(SYSTEM_CUDA)
    if found.version in NVCC_GCC_MAX:
        assert limit == NVCC_GCC_MAX[found.version]  # CUDA 13.0: GCC <= 15
    else:
        assert limit is None or limit >= 13


@pytest.mark.parametrize(
    ("gcc", "nvcc", "torch", "fragment"),
    [
        (13, 13, 13, None),
        (12, 15, None, None),
        (15, None, None, None),
        (
            14,
            13,
            13,
            "GCC 14 is newer than CUDA 12.6's nvcc accepts (GCC <= 13, its crt/host_config.h)",
        ),
        (
            14,
            15,
            13,
            "GCC 14 is newer than torch's cpp_extension allows with CUDA 12.6 (GCC <= 13)",
        ),
    ],
)
def test_host_compiler_problem(gcc, nvcc, torch, fragment) -> None:
    assert cuda.host_compiler_problem("12.6", gcc, nvcc, torch) == fragment


def test_gcc_major(tmp_path: Path) -> None:
    assert cuda.gcc_major(str(fake_gcc(tmp_path / "gcc", "14.2.1"))) == 14
    assert cuda.gcc_major(str(fake_gcc(tmp_path / "gcc13", "13"))) == 13
    assert (
        cuda.gcc_major(str(fake_gcc(tmp_path / "clang", "18.1.0", banner="clang version"))) is None
    )
    with pytest.raises(ToolchainError, match=r"host compiler '.*nope' does not run"):
        cuda.gcc_major(str(tmp_path / "nope"))


def test_check_host_compiler_names_nvccs_bound(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(cuda, "torch_gcc_limit", lambda version: None)
    home = fake_toolkit(tmp_path / "cuda-12.6", "12.6", gcc_limit=13)
    with pytest.raises(ToolchainError) as e:
        cuda.check_host_compiler(home, "12.6", str(fake_gcc(tmp_path / "gcc", "14.2.0")), log=print)
    message = str(e.value)
    assert (
        "GCC 14 is newer than CUDA 12.6's nvcc accepts (GCC <= 13, its crt/host_config.h)"
        in message
    )
    assert "Use an older GCC (CC/CXX=..., e.g. gcc-toolset-N" in message


def test_check_host_compiler_names_torchs_bound(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(cuda, "torch_gcc_limit", lambda version: 13)
    home = fake_toolkit(tmp_path / "cuda-12.6", "12.6", gcc_limit=15)
    with pytest.raises(
        ToolchainError, match=r"newer than torch's cpp_extension allows .*GCC <= 13"
    ):
        cuda.check_host_compiler(home, "12.6", str(fake_gcc(tmp_path / "gcc", "14.1.0")), log=print)


def test_check_host_compiler_accepts_a_compiler_in_range(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(cuda, "torch_gcc_limit", lambda version: 14)
    home = fake_toolkit(tmp_path / "cuda-13.0", "13.0", gcc_limit=15)
    lines: list[str] = []
    cuda.check_host_compiler(
        home, "13.0", str(fake_gcc(tmp_path / "gcc", "14.2.0")), log=lines.append
    )
    assert lines == [f"host compiler {tmp_path / 'gcc'}: GCC 14, within CUDA 13.0's bounds"]
    clang = fake_gcc(tmp_path / "clang", "18.0.0", banner="clang version")
    cuda.check_host_compiler(home, "13.0", str(clang), log=lines.append)
    assert lines[-1] == f"host compiler {clang}: not GCC, bounds not checked"


def test_torch_gcc_limit_unknown_cuda_is_none() -> None:
    pytest.importorskip("torch.utils.cpp_extension")
    assert cuda.torch_gcc_limit("99.9") is None


def test_toolset_compilers(tmp_path: Path) -> None:
    assert cuda.toolset_compilers(None, root=str(tmp_path)) == {}
    assert cuda.toolset_compilers(14, root=str(tmp_path)) == {}  # not installed here
    bindir = tmp_path / "gcc-toolset-14" / "root" / "usr" / "bin"
    fake_gcc(bindir / "gcc", "14.2.1")
    assert cuda.toolset_compilers(14, root=str(tmp_path)) == {
        "CC": str(bindir / "gcc"),
        "CXX": str(bindir / "g++"),
    }
    assert cuda.toolset_compilers(13, root=str(tmp_path)) == {}
