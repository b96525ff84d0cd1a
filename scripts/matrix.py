#!/usr/bin/env python3
"""The build matrix, as GitHub Actions and people read it: `python scripts/matrix.py --github`.

A thin front for `python -m pipeline matrix` (pipeline/matrix_cli.py), kept at
this path because workflows and users call it here.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pipeline.matrix_cli import main

if __name__ == "__main__":
    sys.exit(main())
