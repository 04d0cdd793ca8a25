"""The CoppeliaSim stand-in as a separate process on a free loopback port, for the tests."""

from __future__ import annotations

import os
import selectors
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from cosim_validation.common.config import package_root
from test.subprocesses import stop

SCRIPT = package_root() / "scripts" / "coppeliasim_standin.py"
#: Longest wait for the stand-in to accept requests (it imports MuJoCo and builds the arm) [s].
START_TIMEOUT_S = 90.0


def _first_line(process: subprocess.Popen[str], timeout_s: float) -> str:
    assert process.stdout is not None
    selector = selectors.DefaultSelector()
    selector.register(process.stdout, selectors.EVENT_READ)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if selector.select(timeout=0.2):
            return process.stdout.readline().strip()
        if process.poll() is not None:
            break
    return ""


@contextmanager
def standin(config_path: Path, *extra: str) -> Iterator[int]:
    """Run ``scripts/coppeliasim_standin.py`` for ``config_path`` on a free port; yields the port.

    Raises:
        RuntimeError: It did not announce its endpoint in time (its stderr is quoted).
    """
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(package_root()), os.environ.get("PYTHONPATH", "")]))
    command = [sys.executable, str(SCRIPT), "--config", str(config_path), "--port", "0", *extra]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        line = _first_line(process, START_TIMEOUT_S)
        if not line.startswith("listening on tcp://"):
            process.kill()
            raise RuntimeError(f"the stand-in did not start: {line!r} {process.communicate()[1]!r}")
        yield int(line.rsplit(":", 1)[1])
    finally:
        stop(process, 10.0)
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()


def with_coppeliasim(data: dict[str, Any], port: int, **settings: Any) -> dict[str, Any]:
    """``data`` (a configuration as plain data) with ``backends.coppeliasim`` on loopback ``port`` plus ``settings``."""
    section = data["backends"].setdefault("coppeliasim", {}) or {}
    section.update({"host": "127.0.0.1", "port": port, **settings})
    data["backends"]["coppeliasim"] = section
    return data
