"""The example package is not installed in the test environment: its folder goes on the import path."""

from __future__ import annotations

import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "cosim_controller_example"
if str(EXAMPLE) not in sys.path:
    sys.path.insert(0, str(EXAMPLE))
