"""`fusedops.__version__` is the installed distribution's version, local tag included."""

from __future__ import annotations

import importlib.metadata

import fusedops


def test_version_is_the_installed_distributions() -> None:
    installed = importlib.metadata.version("fusedops")
    assert fusedops.__version__ == installed
    assert fusedops.BUILD_INFO["version"] == installed
    if "library" in fusedops.BUILD_INFO:
        # the one PyPI wheel (a library per family) has a public version
        assert "+" not in installed
    else:
        # a per-variant wheel carries its local tag (+cpu, +cu130, +cputorch2.14, ...)
        assert "+" in installed
