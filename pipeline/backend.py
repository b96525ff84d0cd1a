"""The build backend: setuptools', plus the two rules the fusedops build needs.

- sdist: made without torch or a CUDA toolkit, with the public version
  (setup.py reads FUSEDOPS_SDIST); PyPI refuses local versions.
- wheel: compiled against the torch the user has. Under pip's build isolation
  the build environment has no torch (and installing the newest one would fetch
  gigabytes and pick its CUDA variant, not the user's), so the build stops with
  the one command that works instead.
"""

from __future__ import annotations

import importlib.util
import os

from setuptools import build_meta as _setuptools
from setuptools.build_meta import *  # noqa: F403  (every hook we do not override)

NO_TORCH = (
    "fusedops compiles against the torch you have installed, and this build environment has "
    "no torch (pip's build isolation hides yours). Install torch first, then run:\n"
    "    pip install setuptools wheel ninja packaging\n"
    "    pip install --no-build-isolation fusedops      (or: pip wheel --no-build-isolation .)\n"
    "or install a prebuilt wheel: https://fusedops.github.io/fusedops"
)


def _sdist_mode() -> None:
    os.environ["FUSEDOPS_SDIST"] = "1"


def _require_torch() -> None:
    os.environ.pop("FUSEDOPS_SDIST", None)
    if importlib.util.find_spec("torch") is None:
        raise SystemExit(NO_TORCH)


def get_requires_for_build_sdist(config_settings=None):
    _sdist_mode()
    return _setuptools.get_requires_for_build_sdist(config_settings)


def build_sdist(sdist_directory, config_settings=None):
    _sdist_mode()
    return _setuptools.build_sdist(sdist_directory, config_settings)


def get_requires_for_build_wheel(config_settings=None):
    _require_torch()
    return _setuptools.get_requires_for_build_wheel(config_settings)


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    _require_torch()
    return _setuptools.prepare_metadata_for_build_wheel(metadata_directory, config_settings)


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    _require_torch()
    return _setuptools.build_wheel(wheel_directory, config_settings, metadata_directory)
