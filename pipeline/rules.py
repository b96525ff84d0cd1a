"""The rules shared with the installed package, loaded from src/fusedops/_variant.py.

The package cannot import build-time code, so the one definition lives there;
importing `fusedops` itself would import torch and load the extension, so the
file is loaded on its own, by path. Everything the pipeline knows about
variants, local versions and the stable-ABI floor comes through here.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
_SOURCE = REPO / "src" / "fusedops" / "_variant.py"


def _load():
    name = "_fusedops_variant_rules"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, _SOURCE)
    assert spec is not None and spec.loader is not None, _SOURCE
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses resolve their module through sys.modules
    spec.loader.exec_module(module)
    return module


_rules = _load()
Variant = _rules.Variant
STABLE_ABI_MIN_TORCH: tuple[int, int] = _rules.STABLE_ABI_MIN_TORCH
STABLE_MIN_PYTHON: tuple[int, int] = _rules.STABLE_MIN_PYTHON
STABLE_TARGET_VERSION: str = _rules.STABLE_TARGET_VERSION
default_abi = _rules.default_abi
local_version = _rules.local_version
torch_requirement = _rules.torch_requirement
find_links_page = _rules.find_links_page
ABIS = ("stable", "classic")


def base_version() -> str:
    """The project's public version, from src/fusedops/_version.py (no import)."""
    namespace: dict[str, str] = {}
    exec((REPO / "src" / "fusedops" / "_version.py").read_text(), namespace)
    return namespace["__version__"]
