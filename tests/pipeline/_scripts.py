"""Import pipeline scripts in tests the way they import each other: scripts/ on sys.path.

from _scripts import import_script
matrix = import_script("matrix")
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parents[2]
SCRIPTS = REPO / "scripts"


def import_script(name: str) -> ModuleType:
    """scripts/<name>.py as a module (one shared copy, as `import <name>` in a script gets)."""
    if str(SCRIPTS) not in sys.path:
        sys.path.insert(0, str(SCRIPTS))
    return importlib.import_module(name)
