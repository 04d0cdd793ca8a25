"""A ros2_control_driver that finds no controller manager, no active trajectory controller, or joints that are not
the arm's stops at start with one error line naming what is missing (exit 1, no traceback, never ready).

The peer is a fake controller manager in this process: ``/cm9/list_controllers`` answering what the case lists,
a reader of ``/arm_controller/joint_trajectory`` and a ``/joint_states`` publisher with the case's joint names."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cosim_validation.live.session.process_group import ProcessGroup, ProcessSpec

pytestmark = pytest.mark.ros

JOINTS = [f"joint{i}" for i in range(1, 8)]
JTC = "joint_trajectory_controller/JointTrajectoryController"
TIMEOUT = "start_timeout_s:=6.0"


def _run_driver(tmp_path: Path, repo_root: Path, env: dict[str, str]) -> tuple[int | None, list[str], str]:
    """Start the driver against /cm9; its exit code, its error lines and its whole log."""
    group = ProcessGroup(tmp_path, env=env)
    config = repo_root / "config" / "needle_insertion.yaml"
    params = (f"config:={config}", "controller_manager:=/cm9", TIMEOUT)
    try:
        group.start(ProcessSpec("driver", "ros2_control_driver", tuple(a for p in params for a in ("-p", p))))
        deadline = time.monotonic() + 120
        while group.processes["driver"].poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        code = group.processes["driver"].poll()
    finally:
        group.stop()
    log = (tmp_path / "logs" / "driver.log").read_text()
    return code, [line for line in log.splitlines() if line.startswith("error:")], log


@pytest.fixture
def fake_manager(rclpy_context: Any) -> Iterator[Any]:
    """Start a fake controller manager: ``start(controllers, joint_names)``; spun in a thread until the end."""
    from controller_manager_msgs.msg import ControllerState
    from controller_manager_msgs.srv import ListControllers
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.node import Node
    from sensor_msgs.msg import JointState
    from trajectory_msgs.msg import JointTrajectory

    node = Node("fake_controller_manager", context=rclpy_context)
    executor = SingleThreadedExecutor(context=rclpy_context)

    def start(controllers: list[tuple[str, str, list[str]]], joint_names: list[str]) -> None:
        def answer(request: Any, response: Any) -> Any:
            response.controller = [
                ControllerState(name=n, state=s, type=JTC, claimed_interfaces=c) for n, s, c in controllers
            ]
            return response

        node.create_service(ListControllers, "/cm9/list_controllers", answer)
        node.create_subscription(JointTrajectory, "/arm_controller/joint_trajectory", lambda m: None, 10)
        states = node.create_publisher(JointState, "/joint_states", 10)
        msg = JointState(name=joint_names, position=[0.0] * len(joint_names))
        node.create_timer(0.1, lambda: states.publish(msg))
        executor.add_node(node)
        threading.Thread(target=executor.spin, daemon=True).start()

    try:
        yield start
    finally:
        executor.shutdown()
        node.destroy_node()


def test_no_controller_manager_is_one_error(tmp_path: Path, repo_root: Path, node_env: dict[str, str]) -> None:
    code, errors, log = _run_driver(tmp_path, repo_root, node_env)
    assert code == 1
    assert errors == [
        "error: no controller manager answered /cm9/list_controllers within 6.0 s (is rokae_ros2 launched on this "
        "ROS_DOMAIN_ID, with controller_manager '/cm9'?)"
    ]
    assert "Traceback" not in log


POSITION = [f"{j}/position" for j in JOINTS]


@pytest.mark.parametrize(
    ("controllers", "joint_names", "error"),
    [
        (
            [("arm_controller", "inactive", POSITION)],
            JOINTS,
            "error: /cm9: controller 'arm_controller' is 'inactive', expected 'active'; activate it "
            "(ros2 control switch_controllers --activate arm_controller)",
        ),
        (
            [("position_joint_trajectory_controller", "active", POSITION)],
            JOINTS,
            "error: /cm9 has no controller 'arm_controller' (it lists ['position_joint_trajectory_controller']); "
            "load and activate it, or set controller (the driver's parameter, or backends.ros2_control.controller)",
        ),
        (
            [("arm_controller", "active", [f"xmate_{p}" for p in POSITION])],
            JOINTS,
            f"error: /cm9: controller 'arm_controller' does not claim {POSITION}; it claims "
            f"{[f'xmate_{p}' for p in POSITION]} (the arm's joints are {JOINTS})",
        ),
        (
            [("arm_controller", "active", POSITION)],
            [f"xmate_{j}" for j in JOINTS],
            f"error: /joint_states does not carry the arm's joints {JOINTS}: JointState lacks joints {JOINTS}; "
            f"it has {[f'xmate_{j}' for j in JOINTS]}",
        ),
    ],
    ids=["inactive", "absent", "wrong-claimed-joints", "wrong-joint-states"],
)
def test_a_controller_manager_without_what_the_arm_needs_is_one_error(
    controllers: list[tuple[str, str, list[str]]],
    joint_names: list[str],
    error: str,
    fake_manager: Any,
    tmp_path: Path,
    repo_root: Path,
    node_env: dict[str, str],
) -> None:
    fake_manager(controllers, joint_names)
    code, errors, log = _run_driver(tmp_path, repo_root, node_env)
    assert code == 1
    assert errors == [error]
    assert "Traceback" not in log
    assert not any(line.endswith("]: ready") for line in log.splitlines())  # never announced ready
