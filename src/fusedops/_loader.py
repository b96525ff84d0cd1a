"""Load the compiled ops library into torch, or explain why it cannot load."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from . import _compat

_PACKAGE_DIR = Path(__file__).resolve().parent


def read_build_info() -> dict[str, Any]:
    try:
        from ._build_info import BUILD_INFO
    except ImportError:
        raise ImportError(
            "fusedops has no build info: it was imported from a source tree that was never "
            "built. Install a wheel (`pip install fusedops`) or build one (`nox -s build`)."
        ) from None
    return dict(BUILD_INFO)


def library_path() -> Path:
    candidates = sorted(_PACKAGE_DIR.glob("_C*.so"))
    if not candidates:
        raise ImportError(
            f"fusedops's compiled library (_C*.so) is missing from {_PACKAGE_DIR}; "
            "reinstall the wheel"
        )
    return candidates[0]


def load_library() -> dict[str, Any]:
    """Imports torch, checks the build fits it, loads the ops. Returns the build info."""
    import torch

    info = read_build_info()
    reason = _compat.torch_mismatch(info, torch.__version__, torch.version.cuda)
    if reason is not None:
        raise ImportError(
            _compat.mismatch_message(info, torch.__version__, torch.version.cuda, reason)
        )
    try:
        torch.ops.load_library(str(library_path()))
    except OSError as err:
        # A mismatch the build info could not predict (e.g. a hand-built torch):
        # still name both builds and the fix, with the loader's own words.
        raise ImportError(
            _compat.mismatch_message(
                info, torch.__version__, torch.version.cuda, f"the library failed to load ({err})"
            )
        ) from err
    return info
