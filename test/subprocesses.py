"""Stopping a process a test started, and whether a process still runs."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any


def stop(process: subprocess.Popen[Any], timeout_s: float) -> bool:
    """SIGTERM, then SIGKILL if ``process`` has not ended within ``timeout_s`` [s]; whether SIGTERM ended it."""
    process.terminate()
    try:
        process.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        return False
    return True


def alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie nobody reaped has ended); read from /proc (Linux)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"
