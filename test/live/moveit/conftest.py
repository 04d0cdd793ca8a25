"""The stand-in move_group as a process of the test's ROS domain, for the MoveIt controller's tests."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from cosim_validation.runs.campaign.case_pipeline import close_shared_assemblies
from test.runs.campaign.run_fixtures import CONFIG
from test.subprocesses import stop


@pytest.fixture
def move_group(node_env: dict[str, str], tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Path]:
    """The stand-in move_group in the test's domain (``request.param``: extra ROS parameters); its log file."""
    log = tmp_path / "move_group.log"
    node = "cosim_validation.live.moveit.standin_node"
    command = [sys.executable, "-m", node, "--ros-args", "-p", f"config:={CONFIG}"]
    command += ["-p", "planning_plugin:=ompl_interface/OMPLPlanner"]  # move_group's own: the stand-in ignores it
    for name, value in getattr(request, "param", {}).items():
        command += ["-p", f"{name}:={value}"]
    with log.open("w") as out:
        process = subprocess.Popen(command, env=node_env, stdout=out, stderr=subprocess.STDOUT)
    try:
        yield log
    finally:
        # a campaign run in this process keeps its assembly (its MoveIt controller's node) for the next one: it
        # would stay on this test's domain after the test gave the domain back (another test found it there)
        close_shared_assemblies()
        stop(process, 10)
