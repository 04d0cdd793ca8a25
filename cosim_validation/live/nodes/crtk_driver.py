"""crtk_driver: a robot's driver in the digital-twin graph that talks CRTK to the arm (dVRK 2.x PSM, Raven-II).

Towards the controller it is a driver like ``physical_driver`` (``/cosim/<robot>/reset``, ``command``,
``joint_states``, ``tip_pose``, ``marker``: :mod:`cosim_validation.live.ros.sample_topics`); towards the arm it speaks
the flavour's CRTK topics under ``namespace`` (:mod:`cosim_validation.live.ros.crtk_topics`):

- start: once ``state_command`` has ``min_subscribers`` matched readers (or after ``subscriber_timeout_s``),
  ``state_command`` ``enable``, then ``home``, repeated every 0.5 s until ``operating_state`` says
  ``ENABLED`` and homed; not within ``enable_timeout_s``: one error naming the namespace and the last state seen,
  and the node exits 1 before it is ready (the session fails cleanly);
- reset: with ``emulated`` true, the emulated arm's ``<namespace>/emulation/reset`` service (reseeds its errors
  with the case's seed: live = batch); a real arm has none: ``move_jp`` (dVRK; ``servo_jp`` on the Raven-II) to
  the case's first setpoint, answered once ``measured_js`` is within ``reset_tolerance`` of it and the arm is not busy;
- every setpoint: ``servo_jp`` stamped like the setpoint; the answer is the first ``measured_js`` not older than
  it (an emulated arm stamps its answer with the setpoint's stamp), joined with the tracker's
  ``<tracker_namespace>/tip/measured_cp`` and ``marker`` when a tracker namespace is given (else NaN: unknown).
"""

from __future__ import annotations

import threading
import time
from typing import Any

import numpy as np
from crtk_msgs.msg import OperatingState, StringStamped
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.client import Client
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from sensor_msgs.msg import JointState

from cosim_validation.common.config import load_case_config, resolve_resource
from cosim_validation.common.exceptions import CosimError
from cosim_validation.common.record import RobotRole
from cosim_validation.live.nodes.answer_relay import AnswerRelay
from cosim_validation.live.nodes.node_runtime import declare_parameters, run_node
from cosim_validation.live.nodes.robot_driver import reset_joints
from cosim_validation.live.ros import convert, crtk_topics
from cosim_validation.live.ros.crtk_answers import AnswerJoiner
from cosim_validation.live.ros.crtk_messages import joint_state
from cosim_validation.live.ros.qos import COMMAND, STATE, to_rclpy
from cosim_validation.live.ros.sample_topics import SamplePublisher
from cosim_validation.live.session.node_parameters import CrtkDriverParams
from cosim_validation.robots.model import RobotConfig
from cosim_validation_interfaces.srv import ResetRobot

RETRY_PERIOD_S = 0.5


class CrtkPeerError(CosimError):
    """The CRTK arm did not become ENABLED and homed, or did not reach a reset pose."""


class CrtkDriver(Node, AnswerRelay):
    """One robot of the graph, driven over CRTK."""

    def __init__(self, executable: str = "crtk_driver") -> None:
        super().__init__(executable)
        params = declare_parameters(self, CrtkDriverParams)
        config = load_case_config(resolve_resource(params.config))
        robot = RobotConfig.from_config(config["robot"])
        self._names = robot.kinematics.joint_names
        self._flavour = crtk_topics.flavour_of(robot.model.name, params.flavour)
        self._ns = params.namespace
        crtk_topics.topic(self._ns, "")  # a malformed namespace is refused here, before anything waits
        self._role = RobotRole.parse(params.robot)
        self._enable_timeout_s = params.enable_timeout_s
        self._reset_timeout_s = params.reset_timeout_s
        self._reset_tolerance = params.reset_tolerance
        self._emulated = params.emulated
        self._min_subscribers = params.min_subscribers
        self._subscriber_timeout_s = params.subscriber_timeout_s
        self._lock = threading.Condition()
        self._state: OperatingState | None = None
        self._latest_js: tuple[float, np.ndarray] | None = None  # (monotonic s, q) of the last measured_js
        tracker = params.tracker_namespace
        self._joiner = AnswerJoiner(self._names, tracked=bool(tracker))
        group = ReentrantCallbackGroup()
        self._state_pub = self.create_publisher(StringStamped, self._topic("state_command"), 10)
        self._servo = self.create_publisher(JointState, self._topic("servo_jp"), to_rclpy(COMMAND))
        move = "move_jp" if any(t.name == "move_jp" for t in crtk_topics.FLAVOURS[self._flavour]) else "servo_jp"
        self._move = self._servo if move == "servo_jp" else self.create_publisher(JointState, self._topic(move), 10)
        sub = self.create_subscription
        sub(OperatingState, self._topic("operating_state"), self._on_state, 10, callback_group=group)
        sub(JointState, self._topic("measured_js"), self._on_measured_js, to_rclpy(STATE), callback_group=group)
        if tracker:
            pose_type, marker_type = convert.pose_stamped_msg_type(), convert.marker_msg_type()
            sub(pose_type, f"{tracker}/tip/measured_cp", self._on_tip, to_rclpy(STATE), callback_group=group)
            sub(marker_type, f"{tracker}/marker", self._on_marker, to_rclpy(STATE), callback_group=group)
        self._emulation: Client[Any, Any] = self.create_client(
            ResetRobot, self._topic("emulation/reset"), callback_group=group
        )
        prefix = f"/cosim/{self._role.label}"
        self._samples = SamplePublisher(self, prefix, self._names)
        sub(JointState, f"{prefix}/command", self._on_command, to_rclpy(COMMAND), callback_group=group)
        self.create_service(ResetRobot, f"{prefix}/reset", self._on_reset, callback_group=group)
        self._enable_and_home()
        self.get_logger().info(
            f"{self._role.label} robot: {robot.model.name} over CRTK ({self._flavour}) at {self._ns}"
        )

    def _topic(self, name: str) -> str:
        return crtk_topics.topic(self._ns, name)

    # ------------------------------------------------------------------ start: enable and home
    def _ready(self) -> bool:
        s = self._state
        return s is not None and s.state == crtk_topics.ENABLED and bool(s.is_homed)

    def _enable_and_home(self) -> None:
        """Send ``enable`` then ``home`` until the arm is ENABLED and homed, spinning this node meanwhile.

        Raises:
            CrtkPeerError: Not within ``enable_timeout_s``; names the namespace and the last state seen.
        """
        executor = SingleThreadedExecutor(context=self.context)
        executor.add_node(self)
        try:
            self._await_listeners(executor)
            deadline = time.monotonic() + self._enable_timeout_s
            next_send = 0.0
            while not self._ready():
                now = time.monotonic()
                if now > deadline:
                    raise CrtkPeerError(
                        f"crtk_driver: the arm under {self._ns} did not become ENABLED and homed within "
                        f"{self._enable_timeout_s:.1f} s (last operating_state: {_describe(self._state)})"
                    )
                if now >= next_send:
                    enabled = self._state is not None and self._state.state == crtk_topics.ENABLED
                    self._send_state_command("home" if enabled else "enable")
                    next_send = now + RETRY_PERIOD_S
                executor.spin_once(timeout_sec=0.05)
        finally:
            executor.remove_node(self)

    def _await_listeners(self, executor: SingleThreadedExecutor) -> None:
        """Wait until ``min_subscribers`` readers are matched to ``state_command``, at most ``subscriber_timeout_s``.

        The readers are the arm and, in a session, also the recorder, so the bag holds the whole start-up
        conversation. The topic is volatile: a command published before a reader is matched never reaches that
        reader.
        """
        deadline = time.monotonic() + self._subscriber_timeout_s
        while self._state_pub.get_subscription_count() < self._min_subscribers:
            if time.monotonic() > deadline:
                self.get_logger().warning(
                    f"{self._topic('state_command')} has {self._state_pub.get_subscription_count()} of "
                    f"{self._min_subscribers} readers after {self._subscriber_timeout_s:.1f} s; enabling anyway"
                )
                return
            executor.spin_once(timeout_sec=0.02)

    def _send_state_command(self, command: str) -> None:
        msg = StringStamped(string=command)
        msg.header.stamp = self.get_clock().now().to_msg()
        self._state_pub.publish(msg)

    def _on_state(self, msg: OperatingState) -> None:
        with self._lock:
            self._state = msg
            self._lock.notify_all()

    # ------------------------------------------------------------------ reset
    def _on_reset(self, request: Any, response: Any) -> Any:
        try:
            q0 = reset_joints(request, self._names)
            if self._emulated:
                if not self._emulation.wait_for_service(timeout_sec=self._reset_timeout_s):
                    raise CrtkPeerError(f"no {self._topic('emulation/reset')} service: is the peer an emulated arm?")
                answer = self._emulation.call(request)
                if answer is None or not answer.success:
                    raise CrtkPeerError(answer.message if answer is not None else "no answer from the emulated arm")
                position = np.asarray(answer.position, dtype=np.float64)
            else:
                position = self._move_to(q0)
        except CosimError as exc:
            response.success, response.message = False, str(exc)
            return response
        self._joiner.clear()
        response.success = True
        response.position = [float(v) for v in position]
        return response

    def _move_to(self, q0: np.ndarray) -> np.ndarray:
        """A real arm: command ``q0`` and wait until it is measured there, not busy (the reset pose)."""
        start = time.monotonic()
        self._move.publish(joint_state(self.get_clock().now().nanoseconds, self._names, q0))
        with self._lock:
            while True:
                latest, state = self._latest_js, self._state
                settled = latest is not None and latest[0] > start and state is not None and not state.is_busy
                if latest is not None and settled and float(np.max(np.abs(latest[1] - q0))) <= self._reset_tolerance:
                    return latest[1]
                remaining = start + self._reset_timeout_s - time.monotonic()
                if remaining <= 0:
                    seen = "nothing" if latest is None else np.array2string(latest[1], precision=4)
                    where = f"measured_js: {seen}; operating_state: {_describe(state)}"
                    raise CrtkPeerError(
                        f"{self._ns} did not reach the reset pose within {self._reset_timeout_s} s ({where})"
                    )
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
        self._servo.publish(joint_state(command.t_ns, self._names, command.position))

    def _on_measured_js(self, msg: JointState) -> None:
        sample = convert.joint_state_from_msg(msg, self._names)
        with self._lock:
            self._latest_js = (time.monotonic(), sample.position)
            self._lock.notify_all()
            self._publish(self._joiner.joints(sample.t_ns, sample.position))


def _describe(state: OperatingState | None) -> str:
    if state is None:
        return "none received"
    flags = f"is_homed={str(bool(state.is_homed)).lower()}, is_busy={str(bool(state.is_busy)).lower()}"
    return f"state={state.state or '(empty)'}, {flags}"


def main(args: list[str] | None = None) -> int:
    """Run the ``crtk_driver`` node until it ends or is interrupted; return its exit status.

    See :func:`~.node_runtime.run_node`. From a shell::

        ros2 run cosim_validation crtk_driver --ros-args -p config:=config/dvrk_psm_insertion.yaml -p namespace:=/PSM1

    Args:
        args: The command line as ``rclpy.init`` takes it (``--ros-args -p name:=value`` ...); None: ``sys.argv``.
    """
    return run_node(CrtkDriver, args, threads=3)


if __name__ == "__main__":
    raise SystemExit(main())
