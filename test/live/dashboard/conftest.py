"""One real session for the dashboard tests: `cosim session --cases 2 --foxglove PORT`, watched by a
Foxglove WebSocket client while it runs; its bag feeds the model, widget, plugin and CLI tests."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import pytest

from test.live.dashboard.foxglove_client import Capture, FoxgloveClient
from test.live.ros.ros_harness import exclusive_domain, ros_env

CASES = 2
# Qt renders off-screen in every dashboard test (no display on CI); set before pytest-qt makes the QApplication
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


class RecordedSession(NamedTuple):
    """The run directory of the session, the CLI's output, and what the Foxglove client received."""

    run_dir: Path
    bag: Path
    returncode: int
    output: str
    capture: Capture


def free_port() -> int:
    """A TCP port nobody listens on now (loopback)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="session")
def recorded_session(tmp_path_factory: pytest.TempPathFactory, repo_root: Path) -> Iterator[RecordedSession]:
    run_dir = tmp_path_factory.mktemp("dashboard") / "run"
    port = free_port()
    with exclusive_domain() as domain:
        client = FoxgloveClient(port)
        client.start()
        command = [sys.executable, "-m", "cosim_validation.cli.main", "session", "--cases", str(CASES)]
        command += ["--foxglove", str(port), "--out", str(run_dir)]
        done = subprocess.run(command, cwd=repo_root, env=ros_env(domain), capture_output=True, text=True, timeout=900)
        client.stop()
        client.join(timeout=10)
    output = done.stdout + done.stderr
    return RecordedSession(run_dir, run_dir / "session.mcap", done.returncode, output, client.capture)


@pytest.fixture(scope="session")
def session_bag(recorded_session: RecordedSession) -> Path:
    """The recorded session.mcap (the session must have completed)."""
    assert recorded_session.returncode == 0, recorded_session.output[-3000:]
    return recorded_session.bag
