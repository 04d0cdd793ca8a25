"""The stand-in move_group as a process of the test's ROS domain, for the MoveIt controller's tests."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from test.runs.campaign.run_fixtures import CONFIG
from test.subprocesses import stop


@pytest.fixture
def move_group(node_env: dict[str, str], tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Path]:
    """The stand-in move_group in the test's domain (``request.param``: extra ROS parameters); its log file."""
    log = tmp_path / "move_group.log"
    node = "cosim_validation.live.moveit.standin_node"
    command = [sys.executable, "-m", node, "--ros-args", "-p", f"config:={CONFIG}"]
    for name, value in getattr(request, "param", {}).items():
        command += ["-p", f"{name}:={value}"]
    with log.open("w") as out:
        process = subprocess.Popen(command, env=node_env, stdout=out, stderr=subprocess.STDOUT)
    try:
        yield log
    finally:
        stop(process, 10)
