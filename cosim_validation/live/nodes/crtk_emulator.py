"""crtk_emulator: an emulated arm serving its robot's own CRTK interface (the stand-in for a dVRK PSM or a Raven-II).

The arm is a backend of the registry (``emulated`` by default: the perturbed, cable-driven twin) driven by the
same :class:`~cosim_validation.assembly.BackendPort` as in a batch run, behind the topics of the flavour
(:mod:`cosim_validation.live.ros.crtk_topics`) under ``namespace``:

- ``operating_state`` (crtk_msgs/OperatingState): on every change and every 0.5 s; starts ``DISABLED``, not homed;
- ``state_command`` (crtk_msgs/StringStamped): ``enable``, ``disable``, ``home`` (only once enabled), ``unhome``,
  ``pause``, ``resume``;
- ``servo_jp`` (sensor_msgs/JointState, by joint name): one setpoint, reached linearly by its stamp; answered with
  ``measured_js``, ``setpoint_js``, ``measured_cp``, ``setpoint_cp`` (the arm's own forward kinematics of its
  encoders, as the dVRK computes it) stamped like the setpoint; ignored (logged) unless enabled and homed;
- ``move_jp`` (dVRK): the arm is put at rest at the goal (its trajectory is not modelled), ``is_busy`` true then
  false; ``jaw/...`` (dVRK): the jaw holds the needle, closed (0 rad); commands to it are logged.

Besides the arm, the emulated set-up's optical tracker under ``tracker_namespace``: ``tip/measured_cp``
(PoseStamped, base_link: the needle tip as tracked) and ``marker`` (TrackedMarker, the tracker's frame), one of
each per answer. And one emulation-only service a real arm does not have, ``<namespace>/emulation/reset``
(ResetRobot): reseed the emulated errors with a case's seed and put the arm at rest at the case's first setpoint,
so a case's noise is the same live and in batch.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
from crtk_msgs.msg import OperatingState as OperatingStateMsg
from crtk_msgs.msg import StringStamped
from rclpy.node import Node
from sensor_msgs.msg import JointState

from cosim_validation.assembly import BackendPort
from cosim_validation.assembly.robots import build_robot
from cosim_validation.common.config import load_case_config, resolve_resource
from cosim_validation.common.exceptions import CosimError
from cosim_validation.live.nodes.node_runtime import declare_parameters, run_node
from cosim_validation.live.nodes.robot_driver import answer_reset
from cosim_validation.live.ros import convert, crtk_topics
from cosim_validation.live.ros.crtk_messages import joint_state, publish_arm_state
from cosim_validation.live.ros.crtk_state import OperatingState
from cosim_validation.live.ros.qos import COMMAND, STATE, to_rclpy
from cosim_validation.live.ros.refusals import Refusals
from cosim_validation.live.session.node_parameters import CrtkEmulatorParams
from cosim_validation.robots.model import RobotConfig
from cosim_validation.robots.robot_backend import BackendSample
from cosim_validation_interfaces.srv import ResetRobot

STATE_PERIOD_S = 0.5


class CrtkEmulator(Node):
    """One emulated arm behind its CRTK topics."""

    def __init__(self, executable: str = "crtk_emulator") -> None:
        super().__init__(executable)
        params = declare_parameters(self, CrtkEmulatorParams)
        config = load_case_config(resolve_resource(params.config))
        robot = RobotConfig.from_config(config["robot"])
        self._kin = robot.kinematics
        self._flavour = crtk_topics.flavour_of(robot.model.name, params.flavour)
        seed = params.seed
        self._seed = 0 if seed < 0 else seed
        self._port = BackendPort(build_robot(config, params.backend, seed=None if seed < 0 else seed))
        self._names = self._kin.joint_names
        self._ns = params.namespace
        self._lock = threading.Lock()
        self._op = OperatingState()
        self._tip_frame = crtk_topics.tip_frame(self._ns)
        #: servo_jp commands ignored (not enabled and homed, a bad message): logged once, then once a second
        self.refusals: Refusals[str] = Refusals(self.get_logger())
        self._pubs: dict[str, Any] = {}
        for t in crtk_topics.FLAVOURS[self._flavour]:
            if t.robot_side == "pub":
                self._pubs[t.name] = self.create_publisher(_msg_type(t.type_name), self._topic(t.name), _qos(t.name))
        tracker = params.tracker_namespace
        self._tip_pub = self.create_publisher(convert.pose_stamped_msg_type(), f"{tracker}/tip/measured_cp", 100)
        self._marker_pub = self.create_publisher(convert.marker_msg_type(), f"{tracker}/marker", 100)
        self.create_subscription(StringStamped, self._topic("state_command"), self._on_state_command, 10)
        self.create_subscription(JointState, self._topic("servo_jp"), self._on_servo_jp, to_rclpy(COMMAND))
        if any(t.name == "move_jp" for t in crtk_topics.FLAVOURS[self._flavour]):
            self.create_subscription(JointState, self._topic("move_jp"), self._on_move_jp, 10)
        if self._flavour == "dvrk":
            for name in ("jaw/servo_jp", "jaw/move_jp"):
                self.create_subscription(JointState, self._topic(name), self._on_jaw, 10)
        self.create_service(ResetRobot, self._topic("emulation/reset"), self._on_reset)
        self.create_timer(STATE_PERIOD_S, self._publish_state)
        self.get_logger().info(f"emulated {robot.model.name} ({self._flavour} CRTK) under {self._ns}")

    def _topic(self, name: str) -> str:
        return crtk_topics.topic(self._ns, name)

    def _publish_state(self) -> None:
        self._pubs["operating_state"].publish(self._op.message(self.get_clock().now().to_msg()))

    def _on_state_command(self, msg: StringStamped) -> None:
        with self._lock:
            if not self._op.command(msg.string):
                self.get_logger().warning(f"state_command {msg.string!r} ignored in state {self._op.state}")
        self._publish_state()

    def _on_reset(self, request: Any, response: Any) -> Any:
        with self._lock:
            self.refusals.flush()
            if not self._op.ready():
                response.success = False
                response.message = self._op.why_not_ready(self._ns)
                return response
            self._seed = int(request.seed)
            return answer_reset(self._port, self._names, request, response)

    def _on_move_jp(self, msg: JointState) -> None:
        with self._lock:
            if not self._op.ready():
                self.get_logger().error(f"move_jp ignored: {self._op.why_not_ready(self._ns)}")
                return
            try:
                goal = convert.joint_state_from_msg(msg, self._names)
                self._op.busy = True
                self._publish_state()
                self._port.reset("move_jp", goal.position, self._seed)
                rest = self._port.reset_sample
                assert rest is not None
                self._publish_sample(goal.t_ns, rest)
            except CosimError as exc:
                self.get_logger().error(f"move_jp: {exc}")
            finally:
                self._op.busy = False
        self._publish_state()

    def _on_servo_jp(self, msg: JointState) -> None:
        with self._lock:
            if not self._op.ready():
                why = self._op.why_not_ready(self._ns)
                self.refusals.add(why, f"servo_jp ignored: {why}", ("servo_jp", "not ready"))
                return
            try:
                command = convert.joint_state_from_msg(msg, self._names)
                self._port.send(command.t_ns, command.position)
            except CosimError as exc:
                self.refusals.add(str(exc), f"servo_jp: {exc}", ("servo_jp", "message"))
                return
            self._publish_sample(command.t_ns, self._port.latest)

    def _on_jaw(self, msg: JointState) -> None:
        self.get_logger().info(f"jaw command {list(msg.position)} ignored: the jaw holds the needle")

    def _publish_sample(self, stamp_ns: int, sample: BackendSample) -> None:
        """The arm's CRTK state topics and the tracker's two, all stamped ``stamp_ns``."""
        cp = crtk_topics.cp_type(self._flavour)
        publish_arm_state(self._pubs, stamp_ns, self._kin, cp, self._tip_frame, sample.q_measured, sample.q_setpoint)
        if self._flavour == "dvrk":
            for name in ("jaw/measured_js", "jaw/setpoint_js"):
                self._pubs[name].publish(joint_state(stamp_ns, ("jaw",), np.zeros(1)))
        tip = convert.StampedPose(
            stamp_ns, crtk_topics.BASE_FRAME, sample.actual_tip_pos_m, sample.actual_tip_quat_wxyz
        )
        self._tip_pub.publish(convert.pose_stamped_to_msg(tip))
        marker = convert.MarkerFrame(stamp_ns, sample.marker_pos_m, sample.marker_quat_wxyz, sample.marker_error_m)
        self._marker_pub.publish(convert.marker_to_msg(marker))

    def close(self) -> None:
        """Release the engine."""
        self._port.backend.close()


def _msg_type(type_name: str) -> Any:
    from geometry_msgs.msg import PoseStamped, TransformStamped

    types = {
        crtk_topics.JOINT_STATE: JointState,
        crtk_topics.POSE_STAMPED: PoseStamped,
        crtk_topics.TRANSFORM_STAMPED: TransformStamped,
        crtk_topics.OPERATING_STATE: OperatingStateMsg,
    }
    return types[type_name]


def _qos(name: str) -> Any:
    return 10 if name == "operating_state" else to_rclpy(STATE)


def main(args: list[str] | None = None) -> int:
    """Run the ``crtk_emulator`` node until it ends or is interrupted; return its exit status.

    See :func:`~.node_runtime.run_node`. From a shell::

        ros2 run cosim_validation crtk_emulator --ros-args -p config:=config/raven2_insertion.yaml -p namespace:=/arm1

    Args:
        args: The command line as ``rclpy.init`` takes it (``--ros-args -p name:=value`` ...); None: ``sys.argv``.
    """
    return run_node(CrtkEmulator, args, threads=1)


if __name__ == "__main__":
    raise SystemExit(main())
