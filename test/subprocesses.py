"""Stopping a process a test started."""

from __future__ import annotations

import subprocess
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
