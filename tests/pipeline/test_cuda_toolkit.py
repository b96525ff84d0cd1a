"""build_support.cuda_toolkit: finding the toolkit without guessing wrong."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from build_support.cuda_toolkit import ToolkitError, find_toolkit  # noqa: E402


def fake_toolkit(root: Path, version: str = "13.0") -> Path:
    """A directory that looks like a toolkit, with an nvcc that reports `version`."""
    (root / "bin").mkdir(parents=True)
    (root / "include").mkdir()
    (root / "include" / "cuda_runtime.h").write_text("")
    nvcc = root / "bin" / "nvcc"
    nvcc.write_text(
        "#!/bin/sh\n"
        f'if [ "$1" = "--version" ]; then echo "Cuda compilation tools, release {version}, V{version}.1"; exit 0; fi\n'
        f'echo "#$ TOP={root}/bin/.."\n'
    )
    nvcc.chmod(nvcc.stat().st_mode | stat.S_IEXEC)
    return root


def test_cuda_home_wins(tmp_path: Path) -> None:
    root = fake_toolkit(tmp_path / "cuda-13.2", "13.2")
    found = find_toolkit({"CUDA_HOME": str(root), "PATH": ""})
    assert found is not None and found.version == "13.2" and found.variant == "cu132"
    assert found.source == "$CUDA_HOME"


def test_cuda_home_that_is_not_a_toolkit_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ToolkitError, match="is not a CUDA toolkit"):
        find_toolkit({"CUDA_HOME": str(tmp_path), "PATH": ""})


def test_wrapper_nvcc_outside_the_root_asks_nvcc(tmp_path: Path) -> None:
    """The nvcc on PATH is a wrapper in a bin/ that is no toolkit (as on this
    machine: /usr/local/bin/nvcc execs the real one): its parent is not trusted,
    nvcc's own TOP= is."""
    root = fake_toolkit(tmp_path / "real", "13.0")
    wrapper_dir = tmp_path / "wrappers" / "bin"
    wrapper_dir.mkdir(parents=True)
    wrapper = wrapper_dir / "nvcc"
    wrapper.write_text(f'#!/bin/sh\nexec {root}/bin/nvcc "$@"\n')
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IEXEC)
    found = find_toolkit({"PATH": str(wrapper_dir)})
    assert found is not None and found.root == root.resolve()
    assert "reported by nvcc" in found.source


def test_nvcc_on_path_inside_a_toolkit(tmp_path: Path) -> None:
    root = fake_toolkit(tmp_path / "tk", "13.0")
    found = find_toolkit({"PATH": str(root / "bin")})
    assert found is not None and found.root == root.resolve()


@pytest.mark.skipif(not Path("/usr/local/cuda/bin/nvcc").exists(), reason="no /usr/local/cuda here")
def test_this_machine() -> None:
    found = find_toolkit(dict(os.environ))
    assert found is not None
    assert (found.root / "include" / "cuda_runtime.h").exists() or list(
        found.root.glob("targets/*/include/cuda_runtime.h")
    )
