"""fusedops: fused LLM ops for PyTorch (CPU and CUDA).

    import fusedops
    y = fusedops.rms_norm(x, weight, eps=1e-6)
    out, residual = fusedops.fused_add_rms_norm(x, residual, weight)
    h = fusedops.silu_and_mul(gate_up)

The same ops are `torch.ops.fusedops.<name>`; they support autograd,
torch.compile and every float dtype. `python -m fusedops doctor` reports
whether this build fits your torch and GPU.
"""

from __future__ import annotations

import sys

from ._version import __version__

# `python -m fusedops doctor` must run even when the library cannot load (that
# is when it is needed most). While `-m` locates the package, sys.argv[0] is
# "-m": then keep the error for the CLI instead of raising it here.
_LOAD_ERROR: ImportError | None = None
try:
    from ._loader import load_library

    BUILD_INFO = load_library()
except ImportError as _err:
    if sys.argv[:1] != ["-m"]:
        raise
    _LOAD_ERROR = _err
    BUILD_INFO = {}
else:
    from .ops import fused_add_rms_norm, rms_norm, silu_and_mul

__all__ = ["BUILD_INFO", "__version__", "fused_add_rms_norm", "rms_norm", "silu_and_mul"]
