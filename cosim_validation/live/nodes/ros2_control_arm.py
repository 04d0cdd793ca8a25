"""The arm behind a ros2_control controller manager, as whoever drives it sees it (rokae_ros2's interfaces).

Shared by the session's ``ros2_control_driver`` node and the ``ros2_control`` robot of a campaign
(:mod:`~cosim_validation.live.nodes.ros2_control_robot`), so a setpoint reaches the arm, and its answer comes back,
the same way in both:

- start: ``<controller_manager>/list_controllers`` must answer within ``start_timeout_s`` and list
  ``controller`` ``active``, claiming ``<joint>/position`` of every joint; the controller must hear commands; the
  first ``joint_states_topic`` message must come within ``start_timeout_s`` and name every joint. Otherwise one
  :class:`~cosim_validation.live.ros.ros2_control.ControllerManagerError` naming what is missing;
- every setpoint: the trajectory from the previous setpoint to it
  (:func:`~cosim_validation.live.ros.ros2_control.segment`), on ``/<controller>/joint_trajectory``
  (``command_interface: stream``) or as a ``/<controller>/follow_joint_trajectory`` goal (``action``); its answer
  is the first ``/joint_states`` not older than the setpoint, joined with the tracker's
  ``<tracker_namespace>/tip/measured_cp`` and ``marker`` when a tracker namespace is given (else NaN: unknown),
  handed to the ``samples`` sink once complete;
- reset: with ``emulated`` true, the controller_manager_emulator's ``<controller_manager>/emulation/reset``
  (reseeds its errors with the case's seed: live = batch); a real arm: the case's first setpoint as a trajectory
  of ``reset_duration_s``, done once ``/joint_states`` is within ``reset_tolerance`` of it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from builtin_interfaces.msg import Duration
from control_msgs.action import FollowJointTrajectory
from controller_manager_msgs.srv import ListControllers
from rclpy.action import ActionClient
from rclpy.callback_groups import CallbackGroup
from rclpy.client import Client
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from cosim_validation.common.exceptions import CosimError
from cosim_validation.live.nodes.answer_relay import AnswerRelay, SampleSink
from cosim_validation.live.ros import convert
from cosim_validation.live.ros.crtk_answers import AnswerJoiner
from cosim_validation.live.ros.qos import COMMAND, STATE, to_rclpy
from cosim_validation.live.ros.ros2_control import (
    ArmSilentError,
    ControllerManagerError,
    ListedController,
    Segment,
    check_trajectory_controller,
    segment,
)
from cosim_validation.live.ros.service_call import call_spinning, spin_until
from cosim_validation.live.session.node_parameters import Ros2ControlDriverParams
from cosim_validation.robots.robot_backend import BackendSample
from cosim_validation_interfaces.srv import ResetRobot


class _Nowhere:
    def publish(self, stamp_ns: int, sample: BackendSample) -> None:
        raise ControllerManagerError("a setpoint was answered before the arm was given a sink: deliver_to first")


_NOWHERE = _Nowhere()


class ControllerManagerArm(AnswerRelay):
    """The arm of ``node``'s controller manager: its controller, its joint states and its tracker.

    Args:
        node: The node whose subscriptions, publisher and clients talk to the arm (spun by its owner).
        p: Which controller manager, controller and topics; the time limits.
        joint_names: The arm's J joints, in command order.
        group: The callback group of every subscription and client (reentrant: a reset waits for answers).
    """

    def __init__(
        self,
        node: Node,
        p: Ros2ControlDriverParams,
        joint_names: tuple[str, ...],
        group: CallbackGroup,
    ) -> None:
        self._node, self._p, self._names = node, p, joint_names
        self.manager = p.controller_manager.rstrip("/")
        self._lock = threading.Condition()
        self._samples: SampleSink = _NOWHERE
        self._latest_js: tuple[float, np.ndarray] | None = None  # (monotonic s, q) of the last /joint_states
        #: the newest stamp of a /joint_states message so far [ns] (0: none): later setpoints are stamped after it
        self.newest_ns = 0
        self._first_js: Any = None
        self._tracked = False  # a tracker tip came (checked at start when a tracker namespace is given)
        self._previous: tuple[int, np.ndarray] | None = None  # the last setpoint sent: (stamp ns, q)
        self._joiner = AnswerJoiner(joint_names, tracked=bool(p.tracker_namespace))
        sub = node.create_subscription
        sub(JointState, p.joint_states_topic, self._on_joint_states, to_rclpy(STATE), callback_group=group)
        if p.tracker_namespace:
            tracker, pose_type, marker_type = (
                p.tracker_namespace,
                convert.pose_stamped_msg_type(),
                convert.marker_msg_type(),
            )
            sub(pose_type, f"{tracker}/tip/measured_cp", self._on_tip, to_rclpy(STATE), callback_group=group)
            sub(marker_type, f"{tracker}/marker", self._on_marker, to_rclpy(STATE), callback_group=group)
        self._stream = node.create_publisher(JointTrajectory, f"/{p.controller}/joint_trajectory", to_rclpy(COMMAND))
        self._action: ActionClient[Any, Any, Any] = ActionClient(
            node, FollowJointTrajectory, f"/{p.controller}/follow_joint_trajectory", callback_group=group
        )
        self._emulation: Client[Any, Any] = node.create_client(
            ResetRobot, f"{self.manager}/emulation/reset", callback_group=group
        )

    def deliver_to(self, samples: SampleSink) -> None:
        """Hand each setpoint's answer, once complete, to ``samples`` (before: no setpoint can be sent).

        Args:
            samples: Takes ``(stamp_ns, sample)``: a driver's sample topics, or a campaign robot's answers.
        """
        self._samples = samples

    # ------------------------------------------------------------------ start: the controller and the joints
    def check_start(self) -> None:
        """Check the controller manager's trajectory controller and the joint states, spinning the node meanwhile.

        Raises:
            ControllerManagerError: No answer within ``start_timeout_s``, or what is missing.
        """
        executor = SingleThreadedExecutor(context=self._node.context)
        executor.add_node(self._node)
        try:
            listed = self._list_controllers(executor)
            check_trajectory_controller(self.manager, listed, self._p.controller, self._names)
            self._await_command_peer(executor)
            if not self._spin_until(executor, lambda: self._first_js is not None):
                raise ControllerManagerError(
                    f"no {self._p.joint_states_topic} within {self._p.start_timeout_s:.1f} s: is the "
                    f"joint_state_broadcaster of {self.manager} active?"
                )
            try:
                convert.joint_state_from_msg(self._first_js, self._names)
            except CosimError as exc:
                raise ControllerManagerError(
                    f"{self._p.joint_states_topic} does not carry the arm's joints {list(self._names)}: {exc}"
                ) from None
            tip = f"{self._p.tracker_namespace}/tip/measured_cp"
            if self._p.tracker_namespace and not self._spin_until(executor, lambda: self._tracked):
                raise ControllerManagerError(
                    f"no {tip} within {self._p.start_timeout_s:.1f} s: is the tracker publishing under "
                    f"tracker_namespace {self._p.tracker_namespace!r}? ('' for none: the actual tip is then unknown)"
                )
        finally:
            executor.remove_node(self._node)

    def _await_command_peer(self, executor: SingleThreadedExecutor) -> None:
        """Wait until the controller hears the commands: a stream reader, or the action server."""
        stream = self._p.command_interface == "stream"
        heard = (lambda: self._stream.get_subscription_count() > 0) if stream else self._action.server_is_ready
        if not self._spin_until(executor, heard):
            what = f"reads /{self._p.controller}/joint_trajectory" if stream else "serves its follow_joint_trajectory"
            raise ControllerManagerError(
                f"{self.manager} lists {self._p.controller!r} active, but nothing {what} "
                f"after {self._p.start_timeout_s:.1f} s"
            )

    def _list_controllers(self, executor: SingleThreadedExecutor) -> list[ListedController]:
        service = f"{self.manager}/list_controllers"
        client: Client[Any, Any] = self._node.create_client(ListControllers, service)
        try:  # sent again while unanswered: the manager's answer to a client it has not matched yet can be lost
            answer = call_spinning(
                client, executor, ListControllers.Request(), time.monotonic() + self._p.start_timeout_s
            )
            if answer is None:
                raise ControllerManagerError(
                    f"no controller manager answered {service} within {self._p.start_timeout_s:.1f} s (is "
                    f"rokae_ros2 launched on this ROS_DOMAIN_ID, with controller_manager {self.manager!r}?)"
                )
            return [ListedController(c.name, c.state, c.type, tuple(c.claimed_interfaces)) for c in answer.controller]
        finally:
            self._node.destroy_client(client)

    def _spin_until(self, executor: SingleThreadedExecutor, done: Callable[[], Any]) -> bool:
        """Whether ``done()`` held within ``start_timeout_s``, spinning ``executor`` in this thread."""
        return spin_until(executor, done, time.monotonic() + self._p.start_timeout_s)

    # ------------------------------------------------------------------ reset
    def reset(self, request: Any, q0: np.ndarray) -> np.ndarray:
        """Rest the arm at a case's first setpoint ``q0`` (J,); the joints it rests at. Needs the node spun.

        Args:
            request: The case's ResetRobot request (its id, seed and joints), passed on to an emulator.
            q0: The same joints in command order, shape (J,), in [rad].

        Raises:
            ControllerManagerError: The emulator's reset failed, or a real arm did not get there in time.
        """
        position = self._emulated_reset(request) if self._p.emulated else self._move_to(q0)
        with self._lock:
            self._joiner.clear()
            self._previous = None
        return position

    def _emulated_reset(self, request: Any) -> np.ndarray:
        if not self._emulation.wait_for_service(timeout_sec=self._p.reset_timeout_s):
            raise ArmSilentError(
                f"no {self.manager}/emulation/reset within {self._p.reset_timeout_s:.1f} s: is the "
                f"controller_manager_emulator still running?"
            )
        try:  # rclpy's call raises TimeoutError after its timeout (older releases returned None)
            answer = self._emulation.call(request, timeout_sec=self._p.reset_timeout_s)
        except TimeoutError:
            answer = None
        if answer is None:
            limit = f"{self._p.reset_timeout_s:.1f} s"
            raise ArmSilentError(f"no answer from {self.manager}/emulation/reset within {limit}")
        if not answer.success:
            raise ControllerManagerError(answer.message)
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
                    raise ArmSilentError(f"the arm did not reach the reset pose within {timeout} s ({seen})")
                self._lock.wait(min(remaining, 0.1))

    # ------------------------------------------------------------------ lockstep
    def send(self, stamp_ns: int, q: np.ndarray) -> None:
        """Send setpoint ``q`` (J,) [rad] due at ``stamp_ns``; its answer goes to the sink once complete.

        Args:
            stamp_ns: The setpoint's stamp, in [ns] (the arm's clock for a real arm).
            q: The setpoint's joints in command order, shape (J,), in [rad].
        """
        with self._lock:
            self._joiner.expect(stamp_ns, q)
            trajectory = segment(self._previous, stamp_ns, q)
            self._previous = (int(stamp_ns), np.asarray(q, dtype=np.float64))
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

    def _on_tip(self, msg: Any) -> None:
        self._tracked = True
        super()._on_tip(msg)

    def _on_joint_states(self, msg: JointState) -> None:
        with self._lock:
            if self._first_js is None:
                self._first_js = msg
            try:
                sample = convert.joint_state_from_msg(msg, self._names)
            except CosimError as exc:
                if self._samples is not _NOWHERE:  # at start, the start check says it in its one error
                    self._node.get_logger().error(f"{self._p.joint_states_topic}: {exc}")
                return
            self._latest_js = (time.monotonic(), sample.position)
            self.newest_ns = max(self.newest_ns, sample.t_ns)
            self._lock.notify_all()
            self._publish(self._joiner.joints(sample.t_ns, sample.position))
