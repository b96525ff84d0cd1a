"""Builds the fusedops extension: one op source, stable or classic ABI, CUDA or CPU.

The decisions live in pipeline/ (unit-tested); this file turns them into an
extension list. It learns what to build from FUSEDOPS_CELL=<cell id> (how the
pipeline, nox and cibuildwheel call it) or from the knobs FUSEDOPS_ABI,
FUSEDOPS_CUDA and TORCH_CUDA_ARCH_LIST (a plain `pip wheel --no-build-isolation .`).
An sdist (pipeline/backend.py sets FUSEDOPS_SDIST) needs neither torch nor a toolkit.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))

try:
    from pipeline import rules
    from pipeline.config import BuildPlan, ConfigError, decide, env_flag
    from pipeline.elf import ElfReadError, UnsupportedElf, dt_needed, private_libstdcxx_problem
    from pipeline.provenance import git_commit
    from pipeline.toolchain import ToolchainError
    from pipeline.toolchain.cuda import check_host_compiler, find_toolkit, toolset_compilers
    from pipeline.toolchain.jobs import nvcc_threads, set_default_max_jobs
except ImportError as err:  # e.g. `packaging` missing in a --no-build-isolation env
    sys.exit(
        f"fusedops build error: {err}. Install the build requirements: pip install setuptools wheel ninja packaging"
    )


def log(message: str) -> None:
    print(f"fusedops build: {message}", flush=True)


def configure() -> tuple[BuildPlan, Path | None]:
    # '0'/'false'/... means off, unset means "if a toolkit is found" (one reader: env_flag).
    want_cuda = env_flag(os.environ, "FUSEDOPS_CUDA") is not False
    toolkit = find_toolkit() if want_cuda else None
    if toolkit is not None:
        # torch.utils.cpp_extension reads CUDA_HOME once, at import: set it to
        # the toolkit found above before that import, never let torch guess.
        os.environ["CUDA_HOME"] = str(toolkit.root)
        log(f"CUDA toolkit {toolkit.version} at {toolkit.root} ({toolkit.source})")

    import torch

    plan = decide(
        base_version=rules.base_version(),
        torch_version=torch.__version__,
        torch_cuda=torch.version.cuda,
        toolkit_version=toolkit.version if toolkit else None,
        env=os.environ,
    )
    for note in plan.notes:
        log(note)
    cell = plan.cell
    if cell.archs:
        os.environ["TORCH_CUDA_ARCH_LIST"] = str(cell.archs)
    if toolkit is not None and not cell.variant.is_cpu:
        if not os.environ.get("CC"):
            # The cell's gcc-toolset where it exists (the manylinux container);
            # torch passes $CC to nvcc as -ccbin.
            os.environ.update(toolset_compilers(cell.gcc))
        check_host_compiler(toolkit.root, cell.cuda, os.environ.get("CC") or "gcc", log)
    return plan, toolkit.root if toolkit else None


class BuildPyWithInfo(build_py):
    """Writes the build's version and BUILD_INFO into the built package, not the source tree."""

    plan: BuildPlan

    def run(self) -> None:
        super().run()
        package = Path(self.build_lib) / "fusedops"
        (package / "_version.py").write_text(
            "# Written by setup.py: the installed distribution's version, local tag included.\n"
            f"__version__ = {self.plan.version!r}\n"
        )
        (package / "_build_info.py").write_text(
            "# Written by setup.py at build time; read by the loader and `doctor`.\n"
            f"BUILD_INFO = {self.plan.build_info(git_commit(ROOT))!r}\n"
        )


def build_ext_checked():
    """torch's build_ext, then a check of what each built extension links."""
    from torch.utils.cpp_extension import BuildExtension

    class BuildExtChecked(BuildExtension.with_options(no_python_abi_suffix=False)):
        def run(self) -> None:
            super().run()
            if not sys.platform.startswith("linux"):
                return
            for ext in self.extensions:
                built = Path(self.get_ext_fullpath(ext.name))
                try:
                    needed = dt_needed(built)
                except UnsupportedElf as err:
                    log(f"what {built.name} links is not checked here ({err})")
                    continue
                except (OSError, ElfReadError) as err:
                    sys.exit(f"fusedops build error: cannot read what {built.name} links: {err}")
                if problem := private_libstdcxx_problem(needed):
                    # Removed, or the next build (with another compiler) would find it
                    # newer than its sources, skip the link and refuse it again.
                    built.unlink(missing_ok=True)
                    sys.exit(f"fusedops build error: {built.name}: {problem}")
                log(f"{built.name} links {', '.join(needed)}")

    return BuildExtChecked


def extensions(plan: BuildPlan):
    from torch.utils.cpp_extension import CppExtension, CUDAExtension

    cell = plan.cell
    sources = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "csrc" / "kernels").glob("*.cpp"))
    sources += sorted(
        str(p.relative_to(ROOT)) for p in (ROOT / "csrc" / "kernels" / "cpu").glob("*.cpp")
    )
    sources.append(f"csrc/ops/{cell.abi}.cpp")
    # No -std flag: cpp_extension picks the standard its torch needs (C++20 for ATen >= 2.13).
    cxx = ["-O3", "-fvisibility=hidden"]
    nvcc = ["-O3", "-DFUSEDOPS_WITH_CUDA", "--expt-relaxed-constexpr"]
    macros: list[tuple[str, str | None]] = []
    if cell.abi == "stable":
        # cpp_extension defines Py_LIMITED_API (3.10) itself for py_limited_api=True.
        macros.append(("TORCH_TARGET_VERSION", rules.STABLE_TARGET_VERSION))
    # Stripping local symbols drops nvcc's tmpxft_<pid> names: reproducible .so files.
    link = [] if os.environ.get("FUSEDOPS_DEBUG") == "1" else ["-s"]
    common = dict(
        name="fusedops._C",
        py_limited_api=cell.abi == "stable",
        extra_link_args=link,
        define_macros=macros,
    )
    if cell.variant.is_cpu:
        return [CppExtension(sources=sources, extra_compile_args={"cxx": cxx}, **common)]
    sources += sorted(
        str(p.relative_to(ROOT)) for p in (ROOT / "csrc" / "kernels" / "cuda").glob("*.cu")
    )
    cxx.append("-DFUSEDOPS_WITH_CUDA")
    if cell.abi == "stable":
        cxx.append("-DUSE_CUDA")  # exposes the stable ABI's CUDA shims (current stream)
    if cell.variant.cuda >= (12, 8):
        nvcc.append("--compress-mode=size")  # ~4-5x smaller multi-arch fatbins
    nvcc.append(f"--threads={nvcc_threads()}")
    return [CUDAExtension(sources=sources, extra_compile_args={"cxx": cxx, "nvcc": nvcc}, **common)]


def main() -> None:
    if os.environ.get("FUSEDOPS_SDIST") == "1":
        # The sdist carries the public version and no build decisions: the
        # wheel built from it configures itself against the builder's torch.
        setup(version=rules.base_version())
        return
    try:
        plan, _ = configure()
    except (ConfigError, ToolchainError) as err:
        sys.exit(f"fusedops build error: {err}")
    set_default_max_jobs(log)
    cell = plan.cell
    log(
        f"cell {cell.id} | version {plan.version} | abi {cell.abi} | torch {cell.torch} | "
        + (f"CUDA {cell.cuda} archs {cell.archs}" if cell.archs else "CPU only")
    )
    BuildPyWithInfo.plan = plan
    options = {"bdist_wheel": {"py_limited_api": "cp310"}} if cell.abi == "stable" else {}
    setup(
        version=plan.version,
        install_requires=[plan.requirement],
        ext_modules=extensions(plan),
        cmdclass={
            "build_ext": build_ext_checked(),
            "build_py": BuildPyWithInfo,
        },
        options=options,
    )


main()
