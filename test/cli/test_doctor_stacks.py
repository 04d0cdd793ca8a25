"""``cosim doctor`` says whether move_group (for the ``moveit`` controller) and CoppeliaSim's remote API (for the
``coppeliasim`` backend) answer, each within its bounded wait: absent with what to start, or found, against the
stand-ins as separate processes."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from cosim_validation.cli.doctor import check_coppeliasim, check_move_group
from cosim_validation.common.config import package_root
from cosim_validation.robots.virtual.coppeliasim_config import CoppeliaSimConfig
from test.robots.virtual.coppeliasim_process import standin
from test.subprocesses import stop

CONFIG = package_root() / "config" / "needle_insertion.yaml"


@pytest.mark.ros
def test_move_group_absent_then_found(node_env: dict[str, str], ros_domain: int, tmp_path: Path) -> None:
    absent = check_move_group()
    assert (absent.found, absent.required) == (False, False)
    assert absent.detail.startswith(
        "move_group is not there: service /plan_kinematic_path not available within 1.5 s "
        f"(ROS_DOMAIN_ID {ros_domain}): the moveit controller needs one (the stand-in: python -m "
    ), absent.detail
    command = [
        sys.executable,
        "-m",
        "cosim_validation.live.moveit.standin_node",
        "--ros-args",
        "-p",
        f"config:={CONFIG}",
    ]
    log = tmp_path / "standin.log"  # a file, not a pipe: what it said is there also when it does not stop
    with log.open("w") as stderr:
        process = subprocess.Popen(command, env=node_env, stdout=subprocess.DEVNULL, stderr=stderr)
    try:
        found = check_move_group()
        deadline = time.monotonic() + 120  # the stand-in loads the case study first
        while not found.found and process.poll() is None and time.monotonic() < deadline:
            found = check_move_group()
    finally:
        if not stop(process, 20):
            pytest.fail(f"the stand-in did not stop within 20 s of SIGTERM:\n{log.read_text()[-4000:]}")
    errors = log.read_text()
    assert found.found, (found.detail, errors[-2000:])
    assert found.detail == (  # told apart from MoveIt's move_group by the stand-in's own parameters
        f"ROS_DOMAIN_ID {ros_domain}: /plan_kinematic_path, /compute_cartesian_path, ... (the project's stand-in, "
        "cosim_validation.live.moveit.standin_node: not MoveIt)"
    )


def test_coppeliasim_absent_then_found() -> None:
    with standin(CONFIG) as port:
        found = check_coppeliasim(CoppeliaSimConfig(port=port))
    assert found.found, found.detail
    assert found.detail == (  # told apart from CoppeliaSim by the mark the stand-in's sim module carries
        f"tcp://localhost:{port}: the remote API answers; it is cosim_validation's CoppeliaSim stand-in (the "
        "project's MuJoCo arm behind the ZeroMQ remote API), not CoppeliaSim"
    )
    absent = check_coppeliasim(CoppeliaSimConfig(port=port))  # the stand-in has exited
    assert not absent.found
    assert absent.detail.startswith(f"no CoppeliaSim answered at tcp://localhost:{port} within 1.5 s; start ")
    assert absent.detail.endswith("(needed by the coppeliasim backend only)")
