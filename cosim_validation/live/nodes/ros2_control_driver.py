"""ros2_control_driver: a robot's driver in the session graph that talks ros2_control to the arm (rokae_ros2).

Towards the controller it is a driver like ``physical_driver`` (``/cosim/<robot>/reset``, ``command``,
``joint_states``, ``tip_pose``, ``marker``); towards the arm it speaks to a ros2_control controller manager and
its joint trajectory controller (by default rokae_ros2's names: public repository RokaeRobot/rokae_ros2,
``rokae_hardware/config``):

- start: ``<controller_manager>/list_controllers`` must answer within ``start_timeout_s`` and list
  ``controller`` ``active``, claiming ``<joint>/position`` of every joint of the configuration; then the first
  ``joint_states_topic`` message must come within ``start_timeout_s`` and name every joint. Otherwise one error
  naming what is missing, and the node exits 1 before it is ready (the session fails cleanly);
- every setpoint: the trajectory from the previous setpoint to it
  (:func:`~cosim_validation.live.ros.ros2_control.segment`), on ``/<controller>/joint_trajectory``
  (``command_interface: stream``) or as a ``/<controller>/follow_joint_trajectory`` goal (``action``); the
  answer is the first ``/joint_states`` not older than the setpoint, joined with the tracker's
  ``<tracker_namespace>/tip/measured_cp`` and ``marker`` when a tracker namespace is given (else NaN: unknown);
- reset: with ``emulated`` true, the controller_manager_emulator's ``<controller_manager>/emulation/reset``
  (reseeds its errors with the case's seed: live = batch); a real arm: the case's first setpoint as a trajectory
  of ``reset_duration_s``, answered once ``/joint_states`` is within ``reset_tolerance`` of it.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import numpy as np
from builtin_interfaces.msg import Duration
from control_msgs.action import FollowJointTrajectory
from controller_manager_msgs.srv import ListControllers
from rclpy.action import ActionClient
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.client import Client
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from cosim_validation.common.config import load_case_config, resolve_resource
from cosim_validation.common.exceptions import CosimError
from cosim_validation.common.record import RobotRole
from cosim_validation.live.nodes.answer_relay import AnswerRelay
from cosim_validation.live.nodes.node_runtime import declare_parameters, run_node
from cosim_validation.live.nodes.robot_driver import reset_joints
from cosim_validation.live.ros import convert
from cosim_validation.live.ros.crtk_answers import AnswerJoiner
from cosim_validation.live.ros.qos import COMMAND, STATE, to_rclpy
from cosim_validation.live.ros.ros2_control import (
    ControllerManagerError,
    ListedController,
    Segment,
    check_trajectory_controller,
    segment,
)
from cosim_validation.live.ros.sample_topics import SamplePublisher
from cosim_validation.live.session.node_parameters import Ros2ControlDriverParams
from cosim_validation.robots.model import RobotConfig
from cosim_validation_interfaces.srv import ResetRobot


class Ros2ControlDriver(Node, AnswerRelay):
    """One robot of the graph, driven through a ros2_control joint trajectory controller."""

    def __init__(self, executable: str = "ros2_control_driver") -> None:
        super().__init__(executable)
        p = declare_parameters(self, Ros2ControlDriverParams)
        self._p = p
        self._names = RobotConfig.from_config(
            load_case_config(resolve_resource(p.config))["robot"]
        ).kinematics.joint_names
        self._role = RobotRole.parse(p.robot)
        self._manager = p.controller_manager.rstrip("/")
        self._lock = threading.Condition()
        self._latest_js: tuple[float, np.ndarray] | None = None  # (monotonic s, q) of the last /joint_states
        self._first_js: Any = None
        self._previous: tuple[int, np.ndarray] | None = None  # the last setpoint sent: (stamp ns, q)
        self._joiner = AnswerJoiner(self._names, tracked=bool(p.tracker_namespace))
        group = ReentrantCallbackGroup()
        sub = self.create_subscription
        sub(JointState, p.joint_states_topic, self._on_joint_states, to_rclpy(STATE), callback_group=group)
        if p.tracker_namespace:
            tracker, pose_type, marker_type = (
                p.tracker_namespace,
                convert.pose_stamped_msg_type(),
                convert.marker_msg_type(),
            )
            sub(pose_type, f"{tracker}/tip/measured_cp", self._on_tip, to_rclpy(STATE), callback_group=group)
            sub(marker_type, f"{tracker}/marker", self._on_marker, to_rclpy(STATE), callback_group=group)
        self._stream = self.create_publisher(JointTrajectory, f"/{p.controller}/joint_trajectory", to_rclpy(COMMAND))
        self._action: ActionClient[Any, Any, Any] = ActionClient(
            self, FollowJointTrajectory, f"/{p.controller}/follow_joint_trajectory", callback_group=group
        )
        self._emulation: Client[Any, Any] = self.create_client(
            ResetRobot, f"{self._manager}/emulation/reset", callback_group=group
        )
        self._check_start()
        prefix = f"/cosim/{self._role.label}"
        self._samples = SamplePublisher(self, prefix, self._names)
        sub(JointState, f"{prefix}/command", self._on_command, to_rclpy(COMMAND), callback_group=group)
        self.create_service(ResetRobot, f"{prefix}/reset", self._on_reset, callback_group=group)
        self.get_logger().info(f"{self._role.label} robot: {p.controller} of {self._manager} ({p.command_interface})")

    # ------------------------------------------------------------------ start: the controller and the joints
    def _check_start(self) -> None:
        """Check the controller manager's trajectory controller and the joint states, spinning meanwhile.

        Raises:
            ControllerManagerError: No answer within ``start_timeout_s``, or what is missing.
        """
        executor = SingleThreadedExecutor(context=self.context)
        executor.add_node(self)
        try:
            listed = self._list_controllers(executor)
            check_trajectory_controller(self._manager, listed, self._p.controller, self._names)
            self._await_command_peer(executor)
            first = self._spin_until(executor, lambda: self._first_js is not None)
            if first is None:
                raise ControllerManagerError(
                    f"no {self._p.joint_states_topic} within {self._p.start_timeout_s:.1f} s: is the "
                    f"joint_state_broadcaster of {self._manager} active?"
                )
            try:
                convert.joint_state_from_msg(self._first_js, self._names)
            except CosimError as exc:
                raise ControllerManagerError(
                    f"{self._p.joint_states_topic} does not carry the arm's joints {list(self._names)}: {exc}"
                ) from None
        finally:
            executor.remove_node(self)

    def _await_command_peer(self, executor: SingleThreadedExecutor) -> None:
        """Wait until the controller hears the commands: a stream reader, or the action server."""
        stream = self._p.command_interface == "stream"
        heard = (lambda: self._stream.get_subscription_count() > 0) if stream else self._action.server_is_ready
        if self._spin_until(executor, heard) is None:
            what = f"reads /{self._p.controller}/joint_trajectory" if stream else "serves its follow_joint_trajectory"
            raise ControllerManagerError(
                f"{self._manager} lists {self._p.controller!r} active, but nothing {what} "
                f"after {self._p.start_timeout_s:.1f} s"
            )

    def _list_controllers(self, executor: SingleThreadedExecutor) -> list[ListedController]:
        service = f"{self._manager}/list_controllers"
        client: Client[Any, Any] = self.create_client(ListControllers, service)
        try:
            future = None
            if self._spin_until(executor, client.service_is_ready):
                future = client.call_async(ListControllers.Request())
                self._spin_until(executor, future.done)
            answer = None if future is None or not future.done() else future.result()
            if answer is None:
                raise ControllerManagerError(
                    f"no controller manager answered {service} within {self._p.start_timeout_s:.1f} s (is "
                    f"rokae_ros2 launched on this ROS_DOMAIN_ID, with controller_manager {self._manager!r}?)"
                )
            return [ListedController(c.name, c.state, c.type, tuple(c.claimed_interfaces)) for c in answer.controller]
        finally:
            self.destroy_client(client)

    def _spin_until(self, executor: SingleThreadedExecutor, done: Any) -> Any:
        deadline = time.monotonic() + self._p.start_timeout_s
        while not done():
            if time.monotonic() > deadline:
                return None
            executor.spin_once(timeout_sec=0.05)
        return True

    # ------------------------------------------------------------------ reset
    def _on_reset(self, request: Any, response: Any) -> Any:
        try:
            q0 = reset_joints(request, self._names)
            position = self._emulated_reset(request) if self._p.emulated else self._move_to(q0)
        except CosimError as exc:
            response.success, response.message = False, str(exc)
            return response
        with self._lock:
            self._joiner.clear()
            self._previous = None
        response.success = True
        response.position = [float(v) for v in position]
        return response

    def _emulated_reset(self, request: Any) -> np.ndarray:
        if not self._emulation.wait_for_service(timeout_sec=self._p.reset_timeout_s):
            raise ControllerManagerError(f"no {self._manager}/emulation/reset: is it a controller_manager_emulator?")
        answer = self._emulation.call(request)
        if answer is None or not answer.success:
            raise ControllerManagerError(answer.message if answer is not None else "no answer from the emulator")
        return np.asarray(answer.position, dtype=np.float64)

    def _move_to(self, q0: np.ndarray) -> np.ndarray:
        """A real arm: the trajectory to ``q0`` in ``reset_duration_s``; wait until it is measured there."""
        start = time.monotonic()
        self._send(Segment(0, (convert.seconds_to_ns(self._p.reset_duration_s),), (q0,)))
        timeout = self._p.reset_duration_s + self._p.reset_timeout_s
        with self._lock:
            while True:
                latest = self._latest_js
                if (
                    latest is not None
                    and latest[0] > start
                    and float(np.max(np.abs(latest[1] - q0))) <= self._p.reset_tolerance
                ):
                    return latest[1]
                remaining = start + timeout - time.monotonic()
                if remaining <= 0:
                    seen = "nothing" if latest is None else np.array2string(latest[1], precision=4)
                    raise ControllerManagerError(f"the arm did not reach the reset pose within {timeout} s ({seen})")
                self._lock.wait(min(remaining, 0.1))

    # ------------------------------------------------------------------ lockstep
    def _on_command(self, msg: JointState) -> None:
        try:
            command = convert.joint_state_from_msg(msg, self._names)
        except CosimError as exc:
            self.get_logger().error(str(exc))
            return
        with self._lock:
            self._joiner.expect(command.t_ns, command.position)
            trajectory = segment(self._previous, command.t_ns, command.position)
            self._previous = (command.t_ns, command.position)
        self._send(trajectory)

    def _send(self, trajectory: Segment) -> None:
        msg = JointTrajectory(joint_names=list(self._names))
        msg.header.stamp = convert.time_to_msg(trajectory.start_ns)
        for t_ns, q in zip(trajectory.times_ns, trajectory.positions, strict=True):
            at = Duration(sec=t_ns // 1_000_000_000, nanosec=t_ns % 1_000_000_000)
            msg.points.append(JointTrajectoryPoint(positions=[float(v) for v in q], time_from_start=at))
        if self._p.command_interface == "stream":
            self._stream.publish(msg)
        else:
            self._action.send_goal_async(FollowJointTrajectory.Goal(trajectory=msg))

    def _on_joint_states(self, msg: JointState) -> None:
        with self._lock:
            if self._first_js is None:
                self._first_js = msg
            try:
                sample = convert.joint_state_from_msg(msg, self._names)
            except CosimError as exc:
                self.get_logger().error(f"{self._p.joint_states_topic}: {exc}")
                return
            self._latest_js = (time.monotonic(), sample.position)
            self._lock.notify_all()
            self._publish(self._joiner.joints(sample.t_ns, sample.position))


def _within(q: np.ndarray, q_goal: np.ndarray, tolerance: float) -> bool:
    return float(np.max(np.abs(q - q_goal))) <= tolerance


def main(args: list[str] | None = None) -> int:
    """Run the ``ros2_control_driver`` node until it ends or is interrupted; return its exit status.

    See :func:`~.node_runtime.run_node`. From a shell::

        ros2 run cosim_validation ros2_control_driver --ros-args -p config:=config/needle_insertion.yaml

    Args:
        args: The command line as ``rclpy.init`` takes it (``--ros-args -p name:=value`` ...); None: ``sys.argv``.
    """
    return run_node(Ros2ControlDriver, args, threads=3)


if __name__ == "__main__":
    raise SystemExit(main())
