"""ArmServer serves a joint trajectory controller's interfaces to a controller in another process.

The framework's side is simulated here: an arm whose joints move toward the command at most 0.5 rad/s, stepped
in case time (0.02 s a step) by a loop that publishes its state, asks for the setpoint and spins the node's
executor with ``spin_once`` between steps, as the lockstep loop does.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from action_msgs.msg import GoalStatus

from cosim_validation.live.external.trajectory_follow import (
    INVALID_GOAL,
    INVALID_JOINTS,
    PATH_TOLERANCE_VIOLATED,
    SUCCESSFUL,
    Tolerances,
)

CLIENT = Path(__file__).with_name("fjt_client.py")
REPO = Path(__file__).resolve().parents[3]
NAMES = ("j1", "j2", "j3")
LOWER, UPPER = np.full(3, -1.0), np.full(3, 1.0)
SPEED_RAD_S, STEP_S = 0.5, 0.02
URDF = '<robot name="arm"><link name="base_link"/></robot>'


class SimulatedArm:
    """The framework's side: an ArmServer on a node, and an arm lagging behind its command."""

    def __init__(self, context: Any) -> None:
        import rclpy
        from rclpy.executors import SingleThreadedExecutor

        from cosim_validation.live.external.arm_server import ArmServer

        self.node = rclpy.create_node("arm_server_test", context=context)
        self.executor = SingleThreadedExecutor(context=context)
        self.executor.add_node(self.node)
        self.server = ArmServer(self.node, "arm", NAMES, LOWER, UPPER, Tolerances.jtc_defaults(3), URDF)
        self.t_s, self.q = 0.0, np.zeros(3)

    def step(self) -> np.ndarray | None:
        """One control period: state out, setpoint in, the arm moves, callbacks run."""
        self.server.publish_state(self.t_s, self.q, np.array([0.01, 0.02, 0.03]), np.array([1.0, 0, 0, 0]))
        command = self.server.setpoint(self.t_s, self.q)
        if command is not None:
            self.q = self.q + np.clip(command - self.q, -SPEED_RAD_S * STEP_S, SPEED_RAD_S * STEP_S)
        self.t_s += STEP_S
        self.executor.spin_once(timeout_sec=0.01)
        return command

    def close(self) -> None:
        self.executor.shutdown()
        self.node.destroy_node()


@pytest.fixture
def arm(rclpy_context: Any) -> Any:
    simulated = SimulatedArm(rclpy_context)
    yield simulated
    simulated.close()


def test_a_controller_in_another_process_is_served_as_by_a_joint_trajectory_controller(
    arm: SimulatedArm, node_env: dict[str, str]
) -> None:
    env = {**os.environ, **node_env, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    client = subprocess.Popen(
        [sys.executable, str(CLIENT)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    deadline = time.monotonic() + 240.0
    try:
        while client.poll() is None and time.monotonic() < deadline:
            arm.step()
    finally:
        if client.poll() is None:
            client.kill()
        out, err = client.communicate()
    assert client.returncode == 0, f"client failed ({client.returncode}):\n{out}\n{err[-3000:]}"
    steps = {line["step"]: line for line in map(json.loads, out.splitlines())}

    for refused in ("wrong_names", "times", "limits"):
        assert steps[refused] == {"step": refused, "accepted": False}
    codes = [code for code, _ in arm.server.refusals]
    assert codes == [INVALID_JOINTS, INVALID_GOAL, INVALID_GOAL]
    assert "unknown ['x']" in arm.server.refusals[0][1]
    assert "points 0 and 1 is not strictly increasing" in arm.server.refusals[1][1]
    assert "point 0 joint j2 position 1.5 rad is outside its limits" in arm.server.refusals[2][1]

    assert steps["too_fast"]["status"] == GoalStatus.STATUS_ABORTED
    assert steps["too_fast"]["code"] == PATH_TOLERANCE_VIOLATED
    assert "path tolerance violated" in steps["too_fast"]["text"]
    assert steps["good"]["status"] == GoalStatus.STATUS_SUCCEEDED
    assert steps["good"]["code"] == SUCCESSFUL
    np.testing.assert_allclose(steps["reached"]["position"], [0.2, -0.2, 0.1], atol=0.01)

    assert steps["preempted"]["status"] == GoalStatus.STATUS_ABORTED
    assert steps["preempted"]["code"] == INVALID_GOAL
    assert "preempted" in steps["preempted"]["text"]
    assert steps["canceled"]["status"] == GoalStatus.STATUS_CANCELED
    np.testing.assert_allclose(steps["canceled"]["later"], steps["canceled"]["held"], atol=1e-9)

    assert steps["streamed"]["names"] == list(NAMES)
    np.testing.assert_allclose(steps["streamed"]["position"], [-0.3, 0.3, 0.05], atol=0.01)
    topics = steps["topics"]
    assert topics["description"] == URDF
    assert topics["clock_s"] > 0.0
    assert topics["tip_frame"] == "base_link"
    assert topics["tip_x"] == pytest.approx(0.01)


def _step_until(arm: SimulatedArm, future: Any, limit: int = 3000) -> Any:
    for _ in range(limit):
        if future.done():
            return future.result()
        arm.step()
    raise AssertionError("no answer within the steps")


def test_reset_and_a_streamed_trajectory_end_a_goal(arm: SimulatedArm) -> None:
    from control_msgs.action import FollowJointTrajectory
    from rclpy.action import ActionClient
    from trajectory_msgs.msg import JointTrajectory

    from test.live.external.fjt_client import goal, trajectory

    client = ActionClient(arm.node, FollowJointTrajectory, "/arm/follow_joint_trajectory")
    stream = arm.node.create_publisher(JointTrajectory, "/arm/joint_trajectory", 10)
    assert client.wait_for_server(timeout_sec=10.0)
    handle = _step_until(arm, client.send_goal_async(goal(list(NAMES), [(30.0, [0.5, 0.5, 0.5])])))
    assert handle.accepted
    for _ in range(20):
        assert arm.step() is not None
    arm.server.reset()
    answer = _step_until(arm, handle.get_result_async())
    assert (answer.status, answer.result.error_code, answer.result.error_string) == (
        GoalStatus.STATUS_ABORTED,
        INVALID_GOAL,
        "case ended",
    )
    assert arm.step() is None  # nothing to follow: the adapter holds

    handle = _step_until(arm, client.send_goal_async(goal(list(NAMES), [(30.0, [0.5, 0.5, 0.5])])))
    assert handle.accepted
    stream.publish(trajectory(list(NAMES), [(0.5, [-0.1, 0.0, 0.0])]))
    answer = _step_until(arm, handle.get_result_async())
    assert answer.status == GoalStatus.STATUS_ABORTED
    assert answer.result.error_code == INVALID_GOAL
    assert "/arm/joint_trajectory" in answer.result.error_string
    for _ in range(100):
        arm.step()
    np.testing.assert_allclose(arm.q, [-0.1, 0.0, 0.0], atol=1e-9)
    client.destroy()


def test_limits_that_do_not_fit_the_joints_are_refused(rclpy_context: Any) -> None:
    import rclpy

    from cosim_validation.common.exceptions import CosimError
    from cosim_validation.live.external.arm_server import ArmServer

    node = rclpy.create_node("arm_server_bad", context=rclpy_context)
    try:
        with pytest.raises(CosimError, match="expected one lower and one upper limit per joint"):
            ArmServer(node, "arm", NAMES, np.zeros(2), np.ones(2), Tolerances(), URDF)
        with pytest.raises(CosimError, match="2 path and 2 goal values for 3 joints"):
            ArmServer(node, "arm", NAMES, LOWER, UPPER, Tolerances(np.zeros(2), np.zeros(2)), URDF)
    finally:
        node.destroy_node()


def test_a_stream_one_period_ahead_is_reached_each_period(arm: SimulatedArm) -> None:
    """The adapter's order: state for t out, the node answers with a point one period ahead (stamp zero, received
    at t), the setpoint asked for t + period is that point, period after period (not the state it started from)."""
    from trajectory_msgs.msg import JointTrajectory

    from test.live.external.fjt_client import trajectory

    stream = arm.node.create_publisher(JointTrajectory, "/arm/joint_trajectory", 10)
    for _ in range(200):  # until the server's subscription has matched
        if stream.get_subscription_count():
            break
        arm.executor.spin_once(timeout_sec=0.01)
    q, t_s = np.zeros(3), 0.0
    for k in range(1, 11):
        arm.server.publish_state(t_s, q, np.full(3, np.nan), np.full(4, np.nan))
        target = [0.01 * k, -0.01 * k, 0.0]
        stream.publish(trajectory(list(NAMES), [(STEP_S, target)]))
        for _ in range(200):  # until it arrived
            arm.executor.spin_once(timeout_sec=0.01)
            if arm.server._stream is not None and arm.server._stream.positions[-1][0] == pytest.approx(target[0]):
                break
        command = arm.server.setpoint(t_s + STEP_S, q)
        assert command is not None
        np.testing.assert_allclose(command, target, atol=1e-12)
        q, t_s = command, t_s + STEP_S


def test_a_command_published_before_the_reset_is_the_last_cases(arm: SimulatedArm) -> None:
    """A node's last command of a case that is taken after the reset is dropped; the next one is followed."""
    from trajectory_msgs.msg import JointTrajectory

    from test.live.external.fjt_client import trajectory

    stream = arm.node.create_publisher(JointTrajectory, "/arm/joint_trajectory", 10)
    deadline = time.monotonic() + 10.0
    while arm.node.count_subscribers("/arm/joint_trajectory") == 0 and time.monotonic() < deadline:
        arm.executor.spin_once(timeout_sec=0.05)
    stream.publish(trajectory(list(NAMES), [(0.1, [0.8, 0.0, 0.0])]))  # the last case's, not taken yet
    arm.server.reset()
    while arm.server.late_commands + arm.server.commands_received == 0 and time.monotonic() < deadline:
        arm.executor.spin_once(timeout_sec=0.05)
    assert arm.server.late_commands == 1
    assert arm.server.commands_received == 0  # not counted as this case's command
    assert arm.step() is None  # nothing to follow: the adapter holds the case's start pose

    stream.publish(trajectory(list(NAMES), [(0.1, [0.3, 0.0, 0.0])]))  # this case's
    while arm.server.commands_received == 0 and time.monotonic() < deadline:
        arm.executor.spin_once(timeout_sec=0.05)
    assert arm.server.commands_received == 1
    command = arm.step()
    assert command is not None
    assert command[0] > 0.0
