"""A node started by a launcher that dies (launch killed by SIGTERM or SIGKILL) stops as on Ctrl-C."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from cosim_validation.live.ros.bag import topics_of
from test.subprocesses import alive

pytestmark = pytest.mark.ros

LAUNCHER = textwrap.dedent(
    """
    import os, subprocess, sys, time
    env = {**os.environ, "COSIM_PARENT_PID": str(os.getpid()), "COSIM_READY_DIR": sys.argv[2]}
    node = subprocess.Popen([sys.executable, "-m", "cosim_validation.live.nodes.recorder", "--ros-args", "-p",
                             f"output:={sys.argv[1]}"], env=env)
    print(node.pid, flush=True)
    time.sleep(600)
    """
)


def test_node_stops_when_its_launcher_is_killed(tmp_path: Path, node_env: dict[str, str]) -> None:
    bag = tmp_path / "session.mcap"
    launcher = subprocess.Popen(
        [sys.executable, "-c", LAUNCHER, str(bag), str(tmp_path)], env=node_env, stdout=subprocess.PIPE, text=True
    )
    assert launcher.stdout is not None
    node_pid = int(launcher.stdout.readline())
    deadline = time.monotonic() + 60
    while not (tmp_path / "recorder").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert (tmp_path / "recorder").exists(), "the node never became ready"
    launcher.send_signal(signal.SIGKILL)
    launcher.wait(timeout=10)
    deadline = time.monotonic() + 20
    while alive(node_pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(node_pid), "the node outlived its launcher"
    assert topics_of(bag) == {}  # stopped as on Ctrl-C: the bag was finished (nothing was published)
