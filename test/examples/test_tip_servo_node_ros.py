"""tip_servo_node as a process on its own ROS_DOMAIN_ID, against a tiny harness that plays the framework.

The harness publishes /clock one control period at a time, /robot_description (latched), /joint_states equal to
the node's last command (a perfect arm) and /arm_controller/measured_cp from cosim_validation's forward
kinematics, sends one RunTestCase goal and checks the result, the stages and where the tip ended.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from cosim_validation.robots.model.kinematics import Kinematics
from test.examples.conftest import EXAMPLE

pytestmark = pytest.mark.ros

HOME = [0.0, -0.4, 0.0, 1.46, 0.0, 1.3, 0.0]
SOURCE, TARGET = (0.45, 0.0, 0.30), (0.444073, 0.001077, 0.073978)  # case 0 of the demo grid suite, near the heart


class Harness:
    """The framework side of the contract, stepped by hand."""

    def __init__(self, context: Any, urdf: Path) -> None:
        from rclpy.node import Node
        from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
        from rosgraph_msgs.msg import Clock
        from sensor_msgs.msg import JointState
        from std_msgs.msg import String
        from trajectory_msgs.msg import JointTrajectory

        from cosim_validation_interfaces.action import RunTestCase

        self.node = Node("harness", context=context)
        self.kinematics = Kinematics.from_urdf(urdf, 0.3)
        self.q, self.t_ns, self.commands = np.array(HOME), 0, 0
        latched = QoSProfile(
            depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL, reliability=ReliabilityPolicy.RELIABLE
        )
        self.node.create_publisher(String, "/robot_description", latched).publish(String(data=urdf.read_text()))
        self.clock = self.node.create_publisher(Clock, "/clock", 10)
        self.joints = self.node.create_publisher(JointState, "/joint_states", 10)
        from geometry_msgs.msg import PoseStamped

        self.tip = self.node.create_publisher(PoseStamped, "/arm_controller/measured_cp", 10)
        self.node.create_subscription(JointTrajectory, "/arm_controller/joint_trajectory", self._on_command, 10)
        self.feedback: list[int] = []
        self.node.create_subscription(
            RunTestCase.Impl.FeedbackMessage,
            "/run_test_case/_action/feedback",
            lambda m: self.feedback.append(int(m.feedback.stage)),
            QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE),
        )

    def _on_command(self, msg: Any) -> None:
        assert list(msg.joint_names) == [f"joint{i}" for i in range(1, 8)]
        assert len(msg.points) == 1
        self.q, self.commands = np.array(msg.points[0].positions), self.commands + 1

    def publish_state(self) -> None:
        from geometry_msgs.msg import PoseStamped
        from rosgraph_msgs.msg import Clock
        from sensor_msgs.msg import JointState

        stamp = Clock().clock
        stamp.sec, stamp.nanosec = divmod(self.t_ns, 10**9)
        joints = JointState(name=[f"joint{i}" for i in range(1, 8)], position=[float(v) for v in self.q])
        joints.header.stamp = stamp
        self.joints.publish(joints)
        tip = PoseStamped()
        tip.header.stamp, tip.header.frame_id = stamp, "base_link"
        tip.pose.position.x, tip.pose.position.y, tip.pose.position.z = (float(v) for v in self.tip_m())
        self.tip.publish(tip)
        self.clock.publish(Clock(clock=stamp))

    def tip_m(self) -> np.ndarray:
        return np.asarray(self.kinematics.tip_pose(self.q).pos_m)


def test_node_completes_a_case_on_a_perfect_arm(repo_root: Path, rclpy_context: Any, node_env: dict[str, str]) -> None:
    from geometry_msgs.msg import Point
    from rclpy.action import ActionClient
    from rclpy.executors import SingleThreadedExecutor

    from cosim_validation_interfaces.action import RunTestCase
    from cosim_validation_interfaces.msg import TestCase

    harness = Harness(rclpy_context, repo_root / "urdf" / "xmate_er3_pro.urdf")
    executor = SingleThreadedExecutor(context=rclpy_context)
    executor.add_node(harness.node)
    env = dict(node_env, PYTHONPATH=os.pathsep.join([str(EXAMPLE), node_env.get("PYTHONPATH", "")]))
    command = [
        sys.executable,
        "-m",
        "cosim_controller_example.tip_servo_node",
        "--ros-args",
        "-p",
        "use_sim_time:=true",
    ]
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        client = ActionClient(harness.node, RunTestCase, "/run_test_case")
        deadline = time.monotonic() + 30
        while not client.server_is_ready() and time.monotonic() < deadline:
            harness.publish_state()
            executor.spin_once(timeout_sec=0.1)
        assert client.server_is_ready(), "the node's action server did not appear in 30 s"
        case = TestCase(test_id="t0", frame_id="base_link", source=Point(x=SOURCE[0], y=SOURCE[1], z=SOURCE[2]))
        case.target = Point(x=TARGET[0], y=TARGET[1], z=TARGET[2])
        sent = client.send_goal_async(RunTestCase.Goal(test_case=case))
        while not sent.done():
            harness.publish_state()
            executor.spin_once(timeout_sec=0.05)
        assert sent.result().accepted
        result_future = sent.result().get_result_async()
        wall_deadline = time.monotonic() + 240
        while not result_future.done() and time.monotonic() < wall_deadline:
            before = harness.commands
            harness.t_ns += 100_000_000  # one control period of 10 Hz
            harness.publish_state()
            period_end = time.monotonic() + 1.0
            while harness.commands == before and time.monotonic() < period_end and not result_future.done():
                executor.spin_once(timeout_sec=0.01)
        assert result_future.done(), "no result within 240 s"
        result = result_future.result().result
    finally:
        process.terminate()
        output = process.communicate(timeout=20)[0]
    assert result.outcome == RunTestCase.Result.COMPLETED, (result.message, output)
    assert "Traceback" not in output, output  # SIGTERM ends it quietly
    assert 15.0 <= result.duration_s <= 35.0, result.duration_s
    stages = [s for i, s in enumerate(harness.feedback) if i == 0 or s != harness.feedback[i - 1]]
    assert stages == [1, 2, 3, 4, 5], stages
    assert "from the target at the end of the injection" in result.message
    off_mm = float(result.message.split("tracked tip ")[1].split(" mm")[0])
    assert off_mm < 1.0, result.message
    # after the reset the needle is back at the source
    assert np.linalg.norm(harness.tip_m() - np.array(SOURCE)) < 1e-3
