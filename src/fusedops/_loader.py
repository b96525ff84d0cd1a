"""Load the compiled ops library into torch, or explain why it cannot load."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from . import _compat, _record

_PACKAGE_DIR = Path(__file__).resolve().parent
# What the loader and `doctor` need from the build info (written by setup.py).
_REQUIRED = {"version": str, "torch": str, "cuda": (str, type(None)), "abi": str, "arch_list": list}
# The one PyPI wheel's build info: the wheel's own fields plus one entry per library.
_REQUIRED_MULTI = {"version": str, "abi": str, "torch": str, "variants": dict}


def _field_problems(info: dict[str, Any], required: dict[str, Any], prefix: str = "") -> list[str]:
    missing = [prefix + k for k in required if k not in info]
    wrong = [
        prefix + k for k, kind in required.items() if k in info and not isinstance(info[k], kind)
    ]
    return [
        part
        for part in (
            f"missing {', '.join(missing)}" if missing else "",
            f"wrong type for {', '.join(wrong)}" if wrong else "",
        )
        if part
    ]


def _installed_version() -> str | None:
    """The version pip installed, from the dist-info name (when the build info is unusable)."""
    path = _record.find_record()
    return _record.Record(path, {}).dist_version if path else None


def _damaged(what: str, version: str | None) -> ImportError:
    return ImportError(
        f"fusedops is damaged: {what}.\n"
        f"  fix: {_compat.reinstall_command(version)}\n"
        "  (`python -m fusedops doctor --verify` checks every installed file)"
    )


def read_build_info() -> dict[str, Any]:
    """The build info setup.py wrote, checked: ImportError saying how to fix it otherwise."""
    path = _PACKAGE_DIR / "_build_info.py"
    try:
        from ._build_info import BUILD_INFO
    except ImportError:
        if _record.find_record() is None:
            raise ImportError(
                "fusedops has no build info: it was imported from a source tree that was never "
                "built. Install a wheel (`pip install fusedops`) or build one (`nox -s build`)."
            ) from None
        # The wheel shipped it: the install lost it.
        raise _damaged(f"{path} is missing or has no BUILD_INFO", _installed_version()) from None
    except Exception as err:  # a corrupt file can raise anything while it executes
        raise _damaged(
            f"{path} cannot be read ({type(err).__name__}: {err})", _installed_version()
        ) from None
    if not isinstance(BUILD_INFO, dict):
        raise _damaged(f"BUILD_INFO in {path} is not a dict", _installed_version())
    multi = "variants" in BUILD_INFO
    problems = _field_problems(BUILD_INFO, _REQUIRED_MULTI if multi else _REQUIRED)
    if multi and isinstance(BUILD_INFO.get("variants"), dict):
        for family, part in BUILD_INFO["variants"].items():
            if not isinstance(part, dict):
                problems.append(f"variants[{family!r}] is not a dict")
            else:
                problems += _field_problems(part, _REQUIRED, f"variants[{family!r}].")
    if problems:
        version = BUILD_INFO.get("version")
        version = version if isinstance(version, str) else None
        raise _damaged(
            f"its build info ({path}) is incomplete: {'; '.join(problems)}",
            version or _installed_version(),
        )
    return dict(BUILD_INFO)


def library_path(version: str | None = None, family: str | None = None) -> Path:
    """fusedops/_C*.so, or fusedops/_lib/<family>/_C*.so in the multi-library PyPI wheel."""
    where = _PACKAGE_DIR if family is None else _PACKAGE_DIR / "_lib" / family
    candidates = sorted(where.glob("_C*.so"))
    if not candidates:
        what = f"its compiled library (_C*.so) is missing from {where}"
        if _record.find_record(version) is None:
            raise ImportError(
                f"fusedops cannot load: {what}, and no installed wheel's RECORD is next to it "
                "(a source tree?). Install a wheel (`pip install fusedops`) or build one "
                "(`nox -s build`)."
            )
        raise _damaged(what, version)
    return candidates[0]


def check_library(library: Path, version: str | None) -> None:
    """Refuse a library that would crash dlopen or its first use (truncated, foreign)."""
    record_path = _record.find_record(version)
    try:
        record = _record.read_record(record_path) if record_path else None
    except _record.RecordError as err:
        raise _damaged(f"the wheel's RECORD is unreadable ({err})", version) from None
    problem = _record.library_problem(library, record)
    if problem is not None:
        raise _damaged(f"its compiled library {library} is unusable: {problem}", version)


def select(info: dict[str, Any], torch_cuda: str | None) -> _compat.Selection:
    """The library to load (the PyPI wheel carries several), or an ImportError saying why none fits."""
    try:
        return _compat.select_library(info, torch_cuda, os.environ.get(_compat.VARIANT_ENV))
    except _compat.SelectionError as err:
        raise ImportError(
            f"fusedops cannot load: {err}.\n"
            "  (`python -m fusedops doctor` shows the libraries and the full report)"
        ) from None


def load_library() -> dict[str, Any]:
    """Imports torch, picks and checks the library, loads the ops. Returns its build
    info (in the PyPI wheel, the loaded library's part: its archs, CUDA and torch)."""
    import torch

    raw = read_build_info()
    chosen = select(raw, torch.version.cuda)
    info = chosen.info
    reason = _compat.torch_mismatch(info, torch.__version__, torch.version.cuda)
    if reason is not None:
        if chosen.forced:
            reason += f" (the {chosen.family} library was forced by {chosen.why}; unset it)"
        raise ImportError(
            _compat.mismatch_message(info, torch.__version__, torch.version.cuda, reason)
        )
    library = library_path(raw["version"], chosen.family)
    check_library(library, raw["version"])
    try:
        torch.ops.load_library(str(library))
    except OSError as err:
        # A mismatch the build info could not predict (e.g. a hand-built torch):
        # still name both builds and the fix, with the loader's own words.
        raise ImportError(
            _compat.mismatch_message(
                info, torch.__version__, torch.version.cuda, f"the library failed to load ({err})"
            )
        ) from err
    if chosen.family is not None:
        info = {**info, "library": chosen.family, "library_why": chosen.why}
    return info
