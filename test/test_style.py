"""The formatter lays out every line: none of its escape comments (``fmt`` skip or off) in the package, the tests,
the scripts, the benchmarks or the examples (long calls take keywords, one per line, not hand-packed positionals)."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FOLDERS = ("cosim_validation", "test", "scripts", "benchmarks", "examples")
# the marker is assembled so that this file does not match itself
_MARKER = re.compile("#" + r"\s*fmt:\s*(skip|off)\b")


def test_no_formatter_escapes() -> None:
    found = [
        f"{path.relative_to(REPO)}:{number}"
        for folder in FOLDERS
        for path in sorted((REPO / folder).rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if _MARKER.search(line)
    ]
    assert not found, f"formatter escapes: {found}"
