"""The driver nodes move their backends exactly as the batch runner does (same calls, same seed, same samples)."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from cosim_validation.assembly import BackendPort
from cosim_validation.common.config import load_config
from cosim_validation.common.record import RobotRole
from cosim_validation.live.ros import convert
from cosim_validation.live.ros.qos import STATE, to_rclpy
from cosim_validation.live.session.process_group import ProcessGroup, ProcessSpec
from cosim_validation.robots.model import RobotConfig
from cosim_validation.robots.registry import make_backend

pytestmark = pytest.mark.ros

T0_NS = 3_000_000_000
CASE_SEED = 4242  # the case's seed: the emulated arm's noise restarts from it at the reset


def joint_plan(home: np.ndarray, n: int) -> np.ndarray:
    """A smooth joint motion away from home and back (n samples at 10 Hz)."""
    phase = np.sin(np.linspace(0.0, np.pi, n))[:, None]
    return home + phase * np.array([0.3, -0.2, 0.25, 0.3, -0.4, 0.3, 0.5])


@pytest.mark.parametrize(
    ("executable", "role", "backend"),
    [
        ("virtual_driver", RobotRole.VIRTUAL, "mujoco"),
        ("physical_driver", RobotRole.PHYSICAL, "emulated"),
    ],
)
def test_driver_matches_batch_execution(
    tmp_path: Path,
    repo_root: Path,
    rclpy_context: Any,
    node_env: dict[str, str],
    executable: str,
    role: RobotRole,
    backend: str,
) -> None:
    from geometry_msgs.msg import PoseStamped
    from rclpy.callback_groups import ReentrantCallbackGroup
    from rclpy.node import Node
    from sensor_msgs.msg import JointState

    from cosim_validation.live.nodes.node_runtime import PoliteMultiThreadedExecutor
    from cosim_validation.live.nodes.robot_link import RobotLink

    config_path = repo_root / "config" / "needle_insertion.yaml"
    config = load_config(config_path)
    kin = RobotConfig.from_config(config["robot"]).kinematics
    home = RobotConfig.from_config(config["robot"]).home_q
    n = 25
    q = joint_plan(home, n)
    t_s = np.arange(n) * 0.1
    stamps = [T0_NS + round(t * 1e9) for t in t_s]
    batch = BackendPort(make_backend(backend, config, kin))  # what the batch runner drives in-process
    batch.reset("case-1", q[0], CASE_SEED)
    for k in range(n):
        batch.send(stamps[k], q[k])

    group = ProcessGroup(tmp_path, env=node_env)
    node = Node("controller_probe", context=rclpy_context)
    executor = PoliteMultiThreadedExecutor(num_threads=2, context=rclpy_context)
    executor.add_node(node)
    tips: dict[int, convert.StampedPose] = {}
    joints: dict[int, np.ndarray] = {}
    node.create_subscription(
        JointState,
        f"/cosim/{role.label}/joint_states",
        lambda m: joints.setdefault(convert.joint_state_from_msg(m).t_ns, convert.joint_state_from_msg(m).position),
        to_rclpy(STATE),
    )
    node.create_subscription(
        PoseStamped,
        f"/cosim/{role.label}/tip_pose",
        lambda m: tips.setdefault(convert.pose_stamped_from_msg(m).t_ns, convert.pose_stamped_from_msg(m)),
        to_rclpy(STATE),
    )
    link = RobotLink(node, role, kin.joint_names, ReentrantCallbackGroup(), reset_timeout_s=30, stale_timeout_s=30)
    spinner = threading.Thread(target=executor.spin, daemon=True)
    spinner.start()
    try:
        group.start(ProcessSpec(executable, executable, ("-p", f"config:={config_path}", "-p", f"backend:={backend}")))
        group.wait_ready([executable], timeout_s=120)
        link.reset("case-1", q[0], CASE_SEED)
        for k in range(n):
            link.send(stamps[k], q[k])
            link.wait(stamps[k])
        # the driver publishes each sample's tip pose beside its joint state: on a loaded machine the last ones may
        # reach this subscription after the joint state the link waited for
        deadline = time.monotonic() + 30
        while any(s not in tips for s in stamps) and time.monotonic() < deadline:
            time.sleep(0.01)
    finally:
        group.stop()
        executor.shutdown()
        node.destroy_node()
    measured = np.array([joints[s] for s in stamps])
    np.testing.assert_array_equal(measured, np.array([s.q_measured for s in batch.samples]))
    got_tips = np.array([tips[s].position_m for s in stamps])
    np.testing.assert_array_equal(got_tips, np.array([s.actual_tip_pos_m for s in batch.samples]))
