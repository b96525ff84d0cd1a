"""Make the `pipeline` package (at the repository root) importable for the pipeline tests."""

import importlib
import sys
import types
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))


@pytest.fixture(scope="session")
def compat():
    """src/fusedops/_compat.py (the loader's messages), loaded without importing fusedops.

    Importing fusedops imports torch and loads the built extension; its _compat
    and _variant modules are plain Python, loaded here under a stand-in package.
    """
    name = "_fusedops_source_tree"
    if name not in sys.modules:
        package = types.ModuleType(name)
        package.__path__ = [str(REPO / "src" / "fusedops")]
        sys.modules[name] = package
    return importlib.import_module(f"{name}._compat")
