"""A node under test for the adapter's tests, run as a process of its own: ``python fake_node.py MODE``.

It serves ``/run_test_case`` and, per case, behaves as MODE says (all in simulated time, ``use_sim_time``):

- ``move``: reports INITIALIZATION then INJECTION, streams ``/arm_controller/joint_trajectory`` moving joint 1 by
  +0.2 rad over 1 s, then completes with the message "moved" (with "; N forces" when it received N needle
  forces on ``/arm_controller/measured_cf`` in base_link during the case);
- ``goal``: the same motion as one FollowJointTrajectory goal, completing when the goal succeeds;
- ``refuse``: ends every case REFUSED with "target out of reach";
- ``crash``: exits with code 3 after 0.5 s of the case;
- ``killed``: is killed (SIGKILL) after 0.5 s of the case;
- ``mute``: never answers a goal (its goal callback blocks);
- ``stubborn``: accepts, never finishes and rejects every cancel;
- ``freeze_odd``: stops itself (SIGSTOP) on the goal of a case with an odd number (``ext-0001``), before it
  answers; runs the other cases as ``move``.

Served CRTK (``interface: crtk``, a dVRK arm under ``/PSM1``), the same motion by CRTK commands:

- ``crtk``: enables and homes the arm on ``state_command`` (waiting for ``operating_state`` to say so) once, then
  streams ``servo_jp`` every 0.1 s; its message is "moved joint 1 from <the start it read on measured_js [rad]>";
- ``crtk_move``: the same, but as one ``move_jp`` to the end, waiting until ``operating_state`` is no longer busy;
- ``crtk_disabled``: streams ``servo_jp`` without enabling the arm (which must not move);
- ``crtk_pause``: enables and homes the arm, sends a ``move_jp`` of joint 1 by +1 rad, pauses the arm 0.1 s after
  the move began and completes 0.5 s later with the message "paused; busy B" (B: the last ``is_busy``).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
from typing import Any

import rclpy
from builtin_interfaces.msg import Duration
from control_msgs.action import FollowJointTrajectory
from crtk_msgs.msg import OperatingState, StringStamped
from geometry_msgs.msg import WrenchStamped
from rclpy.action import ActionClient, ActionServer, CancelResponse, GoalResponse
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node
from rclpy.parameter import Parameter
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from cosim_validation.live.nodes.node_runtime import PoliteMultiThreadedExecutor
from cosim_validation_interfaces.action import RunTestCase

JOINTS = [f"joint{i}" for i in range(1, 8)]


class FakeNode(Node):
    def __init__(self, mode: str) -> None:
        super().__init__("fake_node_under_test", parameter_overrides=[Parameter("use_sim_time", value=True)])
        self.mode = mode
        self.q: list[float] | None = None
        self.q_stamp_ns = -1  # the stamp of self.q
        self.case_start_ns = -1  # the stamp of the latest case's first state
        self.used_start_ns = -1  # the case start the last goal moved from
        self.case_handle: object = None
        group = ReentrantCallbackGroup()
        self.create_subscription(JointState, "/joint_states", self._on_joints, 10, callback_group=group)
        self.forces = 0  # needle forces received in base_link since the case began
        self.create_subscription(WrenchStamped, "/arm_controller/measured_cf", self._on_force, 10, callback_group=group)
        self.stream = self.create_publisher(JointTrajectory, "/arm_controller/joint_trajectory", 10)
        self.names: list[str] = JOINTS
        self.state: OperatingState | None = None
        if mode.startswith("crtk"):
            self.create_subscription(JointState, "/PSM1/measured_js", self._on_joints, 10, callback_group=group)
            self.create_subscription(OperatingState, "/PSM1/operating_state", self._on_state, 10, callback_group=group)
            self.servo = self.create_publisher(JointState, "/PSM1/servo_jp", 10)
            self.move = self.create_publisher(JointState, "/PSM1/move_jp", 10)
            self.command = self.create_publisher(StringStamped, "/PSM1/state_command", 10)
        self.fjt = ActionClient(
            self, FollowJointTrajectory, "/arm_controller/follow_joint_trajectory", callback_group=group
        )
        ActionServer(
            self,
            RunTestCase,
            "/run_test_case",
            execute_callback=self._execute,
            goal_callback=self._goal,
            cancel_callback=self._cancel,
            callback_group=group,
        )

    def _on_joints(self, msg: JointState) -> None:
        stamp_ns = msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec
        if self.q_stamp_ns < 0 or stamp_ns - self.q_stamp_ns > 500_000_000:
            self.case_start_ns = stamp_ns  # a case's first state: one second after the last case's end
        self.q, self.q_stamp_ns = list(msg.position), stamp_ns
        self.names = list(msg.name)

    def _on_state(self, msg: OperatingState) -> None:
        self.state = msg

    def _on_force(self, msg: WrenchStamped) -> None:
        self.forces += int(msg.header.frame_id == "base_link")

    def _goal(self, goal: object) -> GoalResponse:
        if self.mode == "mute":
            time.sleep(3600)
        if self.mode == "freeze_odd" and int(goal.test_case.test_id.rsplit("-", 1)[1]) % 2:  # type: ignore[attr-defined]
            os.kill(os.getpid(), signal.SIGSTOP)
        return GoalResponse.ACCEPT

    def _cancel(self, _handle: object) -> CancelResponse:
        return CancelResponse.REJECT if self.mode == "stubborn" else CancelResponse.ACCEPT

    def _sim_wait(self, seconds: float, handle: object = None) -> bool:
        """Wait ``seconds`` of simulated time; False when the goal was canceled meanwhile."""
        end = self.get_clock().now().nanoseconds + int(seconds * 1e9)
        while self.get_clock().now().nanoseconds < end:
            if handle is not None and handle.is_cancel_requested and self.mode != "stubborn":  # type: ignore[attr-defined]
                return False
            time.sleep(0.002)
        return True

    def _feedback(self, handle: object, stage: int) -> None:
        feedback = RunTestCase.Feedback()
        feedback.stage = stage
        handle.publish_feedback(feedback)  # type: ignore[attr-defined]

    def _execute(self, handle: object) -> RunTestCase.Result:
        result = RunTestCase.Result()
        self.forces = 0
        self._feedback(handle, 1)
        if self.mode == "refuse":
            handle.succeed()  # type: ignore[attr-defined]
            result.outcome, result.message = RunTestCase.Result.REFUSED, "target out of reach"
            return result
        if self.mode in ("crash", "killed"):
            self._sim_wait(0.5)
            if self.mode == "killed":
                os.kill(os.getpid(), signal.SIGKILL)
            print("fake node: exits with code 3 as told (mode crash)", file=sys.stderr, flush=True)
            os._exit(3)
        if self.mode == "stubborn":
            while rclpy.ok():
                time.sleep(0.01)
        # the case's start state is published before its goal, but on another topic: the goal may come first, while
        # the latest state is still the last case's. Move from the state of a case start not moved from yet
        while self.q is None or self.case_start_ns == self.used_start_ns:
            if handle.is_cancel_requested:  # type: ignore[attr-defined]
                handle.canceled()  # type: ignore[attr-defined]
                result.outcome, result.message = RunTestCase.Result.ABORTED, "canceled"
                return result
            time.sleep(0.002)
        self.used_start_ns = self.case_start_ns
        start = list(self.q)
        end = [start[0] + 0.2, *start[1:]]
        self._feedback(handle, 3)
        self.case_handle = handle
        if self.mode.startswith("crtk"):
            ok = self._crtk(start, end, handle)
        else:
            ok = self._follow(start, end) if self.mode == "goal" else self._stream(start, end, handle)
        if not ok:
            handle.canceled()  # type: ignore[attr-defined]
            result.outcome, result.message = RunTestCase.Result.ABORTED, "canceled"
            return result
        handle.succeed()  # type: ignore[attr-defined]
        result.outcome, result.message = RunTestCase.Result.COMPLETED, "moved"
        if self.mode.startswith("crtk"):
            result.message += f" joint 1 from {start[0]:.6f}"  # what it read on measured_js
        if self.mode == "crtk_pause":
            result.message = f"paused; busy {self.state.is_busy if self.state else None}"
        if self.forces:
            result.message += f"; {self.forces} forces"
        return result

    def _stream(self, start: list[float], end: list[float], handle: object) -> bool:
        def send(q: list[float]) -> None:
            point = JointTrajectoryPoint(positions=q, time_from_start=Duration(sec=0, nanosec=100_000_000))
            self.stream.publish(JointTrajectory(joint_names=JOINTS, points=[point]))

        for k in range(1, 11):
            self._feedback(handle, 3)  # every period, as the contract asks (an early one may be lost)
            send([a + (b - a) * k / 10 for a, b in zip(start, end, strict=True)])
            if not self._sim_wait(0.1, handle):
                return False
        return self._arrive(end, send, handle)

    def _arrive(self, end: list[float], send: Any, handle: object) -> bool:
        """Hold ``end`` (sent again every 0.1 s) until measured there, at most 3 s of simulated time.

        Under load a command can reach the arm a period late, or the node's clock lag the session's: a node confirms
        where the arm is before it says done, as a real one would.
        """
        for _ in range(30):
            if not self._sim_wait(0.1, handle):
                return False
            if self.q is not None and abs(self.q[0] - end[0]) < 0.005:
                return self._sim_wait(0.1, handle)
            self._feedback(handle, 3)
            send(end)
        return True

    def _crtk(self, start: list[float], end: list[float], handle: object) -> bool:
        if self.mode != "crtk_disabled":
            for word, ready in (("enable", lambda s: s.state == "ENABLED"), ("home", lambda s: s.is_homed)):
                while self.state is None or not ready(self.state):
                    self.command.publish(StringStamped(string=word))
                    if not self._sim_wait(0.1, handle):
                        return False
        if self.mode == "crtk_pause":
            self.move.publish(JointState(name=self.names, position=[start[0] + 1.0, *start[1:]]))
            while self.state is None or not self.state.is_busy:
                if not self._sim_wait(0.05, handle):
                    return False
            self._sim_wait(0.1, handle)
            self.command.publish(StringStamped(string="pause"))
            return self._sim_wait(0.5, handle)
        if self.mode == "crtk_move":
            self.move.publish(JointState(name=self.names, position=end))
            while self.state is None or not self.state.is_busy:  # the move started
                if not self._sim_wait(0.05, handle):
                    return False
            while self.state.is_busy:
                self._feedback(handle, 3)
                if not self._sim_wait(0.1, handle):
                    return False
            return self._sim_wait(0.2, handle)
        names = list(self.names)
        for k in range(1, 11):
            self._feedback(handle, 3)
            q = [a + (b - a) * k / 10 for a, b in zip(start, end, strict=True)]
            self.servo.publish(JointState(name=names, position=q))
            if not self._sim_wait(0.1, handle):
                return False
        return self._arrive(end, lambda q: self.servo.publish(JointState(name=names, position=q)), handle)

    def _follow(self, start: list[float], end: list[float]) -> bool:
        goal = FollowJointTrajectory.Goal()
        goal.trajectory.joint_names = JOINTS
        point = JointTrajectoryPoint(positions=end, time_from_start=Duration(sec=1))
        goal.trajectory.points = [point]
        self.fjt.wait_for_server()
        handle = self.fjt.send_goal_async(goal)
        while not handle.done():
            self._feedback(self.case_handle, 3)  # the motion's stage, also while the goal waits to be accepted
            time.sleep(0.02)
        got = handle.result().get_result_async()
        while not got.done():
            self._feedback(self.case_handle, 3)  # every period, as the contract asks (an early one may be lost)
            self._sim_wait(0.1)
        return int(got.result().result.error_code) == 0


def main() -> None:
    rclpy.init()
    node = FakeNode(sys.argv[1])
    executor = PoliteMultiThreadedExecutor(num_threads=4)
    executor.add_node(node)
    with contextlib.suppress(KeyboardInterrupt, rclpy.executors.ExternalShutdownException):
        executor.spin()


if __name__ == "__main__":
    main()
