"""The ros2_control interfaces of one arm, served to an external controller under test.

A real arm under ros2_control offers a joint trajectory controller's action
``/<controller>/follow_joint_trajectory`` (control_msgs/action/FollowJointTrajectory), its streaming topic
``/<controller>/joint_trajectory`` (trajectory_msgs/JointTrajectory) and ``/joint_states``; :class:`ArmServer`
offers the same on a node the framework spins, plus ``/clock``, the tracked needle tip
``/<controller>/measured_cp``, the modelled needle force ``/<controller>/measured_cf`` (when the case study
models it) and ``/robot_description``. The framework's lockstep loop drives it: each step it
calls :meth:`ArmServer.publish_state` with the robot's measurement and :meth:`ArmServer.setpoint` for the
command, and spins the node's executor between steps (``spin_once``), never from a second thread. Validation,
sampling and tolerances are :mod:`trajectory_follow`'s; what wins when commands overlap follows ros2_controllers'
``joint_trajectory_controller`` (``goal_received_callback``, ``goal_accepted_callback``, ``preempt_active_goal``,
``goal_cancelled_callback``, ``topic_callback`` in ``src/joint_trajectory_controller.cpp``, branch ``kilted``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from control_msgs.action import FollowJointTrajectory
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rclpy.subscription import MessageInfo
from rclpy.task import Future
from sensor_msgs.msg import JointState
from std_msgs.msg import String
from trajectory_msgs.msg import JointTrajectory

from cosim_validation.common.exceptions import CosimError
from cosim_validation.live.external.sensing import Sensing, ServedArm
from cosim_validation.live.external.trajectory_follow import (
    INVALID_GOAL,
    ActiveTrajectory,
    Tolerances,
    TrajectoryRefusedError,
    accept,
    joint_order,
)
from cosim_validation.live.ros.convert import JointSample, joint_state_to_msg
from cosim_validation.live.ros.qos import STATE, to_rclpy
from cosim_validation.live.ros.refusals import Refusals

#: how an accepted goal ended: (status "succeeded" | "aborted" | "canceled", error_code, error_string)
Outcome = tuple[str, int, str]
PREEMPTED = "Current goal preempted by new incoming action."  # the JTC's words (preempt_active_goal)


@dataclass
class _Command:
    """A validated trajectory waiting for, or being, followed; ``outcome`` finishes an action goal."""

    times_s: np.ndarray
    positions: np.ndarray
    velocities: np.ndarray | None
    stamp_s: float
    tolerances: Tolerances
    received_s: float = 0.0  # the case time when it arrived (the last time published or asked for)
    goal_handle: Any = None
    outcome: Future[Outcome] | None = None
    active: ActiveTrajectory | None = None


def _seconds(stamp: Any) -> float:
    """Seconds of a builtin_interfaces Time or Duration."""
    return float(stamp.sec) + float(stamp.nanosec) * 1e-9


class ArmServer(ServedArm):
    """A joint trajectory controller's interfaces for one arm, driven by the framework's loop.

    Args:
        node: the node to serve on (the caller spins its executor).
        controller: the controller's name: ``/<controller>/follow_joint_trajectory`` and so on.
        joint_names: the arm's joints, in the order of every array here.
        q_lower, q_upper: (J,) joint limits, rad; a trajectory leaving them is refused (INVALID_GOAL).
        tolerances: the default tolerances (the JTC's ``constraints`` parameters) a goal may override.
        robot_description: the arm's URDF, published once on ``/robot_description`` (transient local).
        units: each joint's unit for messages (``rad``, or ``m`` for a prismatic joint; default ``rad``).
    """

    def __init__(
        self,
        node: Node,
        controller: str,
        joint_names: Sequence[str],
        q_lower: np.ndarray,
        q_upper: np.ndarray,
        tolerances: Tolerances,
        robot_description: str,
        units: Sequence[str] = (),
    ) -> None:
        self._node = node
        self._names = tuple(joint_names)
        self._units = tuple(units)
        self._lower, self._upper = np.asarray(q_lower, dtype=float), np.asarray(q_upper, dtype=float)
        if not self._names or self._lower.shape != (len(self._names),) or self._upper.shape != self._lower.shape:
            raise CosimError(
                f"arm server {controller!r}: {len(self._names)} joints, limits of shapes {self._lower.shape} and "
                f"{self._upper.shape}; expected one lower and one upper limit per joint"
            )
        self._tolerances = tolerances.sized(len(self._names))
        self._topic = f"/{controller}/joint_trajectory"
        self._goal: _Command | None = None
        self._stream: _Command | None = None
        self._hold: np.ndarray | None = None
        self._hold_here = False  # hold the next measured position (cancel, abort)
        self._outcomes: dict[
            bytes, Future[Outcome]
        ] = {}  # accepted goals' (status, error_code, error_string), by goal id
        #: (error_code, message) of the last refused goals and streamed messages, oldest first
        self.refusals: Refusals[tuple[int, str]] = Refusals(node.get_logger())
        #: commands received so far (streamed trajectories and goals, refused ones included)
        latched = QoSProfile(
            depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL
        )
        super().__init__(Sensing(node, f"/{controller}/measured_cp", f"/{controller}/measured_cf"))
        self._joints_pub = node.create_publisher(JointState, "/joint_states", to_rclpy(STATE))
        self._description_pub = node.create_publisher(String, "/robot_description", latched)
        self._description_pub.publish(String(data=robot_description))
        node.create_subscription(JointTrajectory, self._topic, self._on_stream, 10)
        self._action = ActionServer(
            node,
            FollowJointTrajectory,
            f"/{controller}/follow_joint_trajectory",
            execute_callback=self._execute,
            goal_callback=self._on_goal,
            handle_accepted_callback=self._on_accepted,
            cancel_callback=self._on_cancel,
        )

    # ------------------------------------------------------------------ the framework's side
    def _publish_arm(self, stamp_ns: int, q_measured: np.ndarray) -> None:
        """/joint_states (rad)."""
        self._joints_pub.publish(joint_state_to_msg(JointSample(stamp_ns, self._names, q_measured, np.zeros(0))))

    def setpoint(self, t_s: float, q_measured: np.ndarray) -> np.ndarray | None:
        """The joint command (J,) for simulated time ``t_s`` (s) given the measured joints (rad), or None to hold.

        The active action goal is followed (and finished when it succeeds or a tolerance is violated), else
        the latest streamed trajectory, else the position held after a goal ended.

        Args:
            t_s: The time of the command, on the simulated clock the arm's state is stamped with, in [s].
            q_measured: The measured joints, shape (J,), in [rad] (or [m] for a prismatic joint): where a new trajectory
                starts, and the position held after a canceled, aborted or failed one.
        """
        self._now_s = float(t_s)
        q = np.asarray(q_measured, dtype=float)
        if self._hold_here:
            self._hold, self._hold_here = q.copy(), False
        command = self._goal or self._stream
        if command is None:
            return None if self._hold is None else self._hold.copy()
        if command.active is None:  # first sample: the JTC starts from the measured state when it arrived
            start = command.stamp_s if command.stamp_s != 0.0 else min(command.received_s, t_s)
            command.active = ActiveTrajectory(
                start,
                q,
                command.times_s,
                command.positions,
                command.tolerances,
                velocities=command.velocities,
                joint_names=self._names,
                units=self._units,
            )
        desired = command.active.sample(t_s)
        verdict = command.active.check(t_s, q)
        if verdict is None or (verdict[0] == 0 and command is self._stream):
            return desired
        code, message = verdict
        if command is self._goal:
            self._finish_goal(code, message)
        else:
            self._node.get_logger().warning(f"{self._topic}: {message}; holding position")
            self._stream = None
        self._hold = desired.copy() if code == 0 else q.copy()
        return self._hold.copy()

    def _forget(self) -> None:
        """Abort the active goal ("case ended") and forget every trajectory and hold."""
        if self._goal is not None:
            self._finish_goal(INVALID_GOAL, "case ended")
        self._stream, self._hold, self._hold_here = None, None, False
        self.refusals.flush()

    # ------------------------------------------------------------------ the controller's side
    def _validate(self, trajectory: Any, tolerances: Tolerances) -> _Command:
        """A validated command of a JointTrajectory; raises TrajectoryRefusedError as the JTC refuses it."""
        points = trajectory.points
        velocities: list[Sequence[float]] | None = [list(p.velocities) for p in points]
        if velocities is not None and all(len(v) == 0 for v in velocities):
            velocities = None
        times, positions = accept(
            self._names,
            list(trajectory.joint_names),
            [_seconds(p.time_from_start) for p in points],
            [list(p.positions) for p in points],
            velocities,
            self._lower,
            self._upper,
            header_stamp_s=_seconds(trajectory.header.stamp),
            now_s=self._now_s,
            units=self._units,
        )
        speeds = None
        if velocities is not None:
            speeds = np.asarray(velocities, dtype=float)[:, joint_order(self._names, list(trajectory.joint_names))]
        return _Command(times, positions, speeds, _seconds(trajectory.header.stamp), tolerances, self._now_s)

    def _refused(self, where: str, error: TrajectoryRefusedError, streamed: bool = False) -> None:
        """Keep and log a refusal: every refused goal; a streamed message's at most once a second per error code."""
        line = f"{where}: refused (error_code {error.error_code}): {error.message}"
        kind = (where, error.error_code) if streamed else object()
        self.refusals.add((error.error_code, error.message), line, kind)

    def _on_stream(self, msg: JointTrajectory, info: MessageInfo) -> None:
        if self._of_last_case(info):
            return
        self.commands_received += 1
        try:
            command = self._validate(msg, self._tolerances)
        except TrajectoryRefusedError as error:
            self._refused(self._topic, error, streamed=True)
            return
        if self._goal is not None:  # the latest command wins
            self._finish_goal(INVALID_GOAL, f"Current goal preempted by a trajectory on {self._topic}.")
        self._stream, self._hold_here = command, False

    def _goal_tolerances(self, goal: Any) -> Tolerances:
        return self._tolerances.for_goal(
            self._names,
            [(t.name, t.position) for t in goal.path_tolerance],
            [(t.name, t.position) for t in goal.goal_tolerance],
            _seconds(goal.goal_time_tolerance),
        )

    def _on_goal(self, goal: Any) -> GoalResponse:
        self.commands_received += 1
        try:
            if goal.multi_dof_trajectory.points:
                raise TrajectoryRefusedError(INVALID_GOAL, "multi_dof_trajectory is not served (no multi-DOF joints)")
            self._validate(goal.trajectory, self._tolerances)
        except TrajectoryRefusedError as error:
            self._refused("follow_joint_trajectory", error)
            return GoalResponse.REJECT
        return GoalResponse.ACCEPT

    def _on_accepted(self, goal_handle: Any) -> None:
        outcome: Future[Outcome] = Future()
        self._outcomes[bytes(goal_handle.goal_id.uuid)] = outcome
        try:
            command = self._validate(goal_handle.request.trajectory, self._goal_tolerances(goal_handle.request))
        except TrajectoryRefusedError as error:  # time went on since the goal was checked: it now ends in the past
            self._refused("follow_joint_trajectory", error)
            outcome.set_result(("aborted", error.error_code, error.message))
        else:
            if self._goal is not None:
                self._finish_goal(INVALID_GOAL, PREEMPTED)
            command.goal_handle, command.outcome = goal_handle, outcome
            self._goal, self._stream, self._hold_here = command, None, False
        goal_handle.execute()

    def _on_cancel(self, goal_handle: Any) -> CancelResponse:
        if self._goal is not None and self._goal.goal_handle is goal_handle and self._goal.outcome is not None:
            self._goal.outcome.set_result(("canceled", 0, ""))
            self._goal, self._hold_here = None, True
        return CancelResponse.ACCEPT

    def _finish_goal(self, code: int, message: str) -> None:
        """End the active goal with ``code`` (0: succeeded, else aborted); its execute callback reports it."""
        assert self._goal is not None
        assert self._goal.outcome is not None
        self._goal.outcome.set_result(("succeeded" if code == 0 else "aborted", code, message))
        self._goal = None

    async def _execute(self, goal_handle: Any) -> Any:
        """The goal's execute callback: wait for the goal to finish and return its result.

        Waits (without blocking the executor) for :meth:`setpoint`, :meth:`reset`, a newer command or a cancel
        to finish it.
        """
        outcome = await self._outcomes.pop(bytes(goal_handle.goal_id.uuid))
        status, code, message = outcome if outcome is not None else ("aborted", INVALID_GOAL, "no outcome")
        if status == "succeeded":
            goal_handle.succeed()
        elif status == "canceled":
            goal_handle.canceled()
        else:
            goal_handle.abort()
        return FollowJointTrajectory.Result(error_code=code, error_string=message)
