"""The CRTK interface of one arm, served to an external controller under test (as a dVRK PSM or a Raven-II offers it).

The topics are those of the arm's CRTK flavour (:mod:`cosim_validation.live.ros.crtk_topics`, ../shared/ROBOTS.md
2.2 and 3.1) under its namespace, as the emulated arms serve them (:mod:`~cosim_validation.live.nodes.crtk_emulator`):

- published each control period, stamped with the period's simulated time: ``measured_js`` and ``setpoint_js``
  (sensor_msgs/JointState), ``measured_cp`` and ``setpoint_cp`` (the arm's own forward kinematics of those joints, as
  the dVRK computes it; PoseStamped on a dVRK, TransformStamped on a Raven-II); ``operating_state``
  (crtk_msgs/OperatingState) at the first period of a case, on every change and every half second;
- ``state_command`` (crtk_msgs/StringStamped): ``enable``, ``disable``, ``home`` (once enabled), ``unhome``,
  ``pause``, ``resume``; the arm starts DISABLED and not homed, as a powered-up arm does, and keeps its state from
  case to case;
- ``servo_jp`` (sensor_msgs/JointState, every joint by name): the setpoint from the next period on, held until the
  next command; ``move_jp`` (dVRK only): a joint-space move from where the arm is to the goal, every joint at the
  same fraction of its velocity limit so that the slowest one moves at its limit, ``is_busy`` while it runs (the
  dVRK's generator also limits acceleration: ROBOTS.md 2.2); both refused (logged, no motion) unless the arm is
  enabled and homed, or when a joint is missing or outside its limits;
- besides the arm, what the emulated set-up's optical tracker reports: ``<tracker>/tip/measured_cp``
  (PoseStamped, base_link, the tracked needle tip, not published while it is not seen), and the needle force at
  its holder in base_link on ``spatial/measured_cf`` (WrenchStamped) when the case study models it; and ``/clock``.

The framework's lockstep loop drives it as it drives :class:`~.arm_server.ArmServer` (the same four calls).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from crtk_msgs.msg import OperatingState as OperatingStateMsg
from crtk_msgs.msg import StringStamped
from geometry_msgs.msg import PoseStamped, TransformStamped
from rclpy.node import Node
from rclpy.subscription import MessageInfo
from sensor_msgs.msg import JointState

from cosim_validation.common.exceptions import CosimError
from cosim_validation.live.external.sensing import Sensing, ServedArm
from cosim_validation.live.ros import convert, crtk_topics
from cosim_validation.live.ros.convert import seconds_to_ns, time_to_msg
from cosim_validation.live.ros.crtk_messages import publish_arm_state
from cosim_validation.live.ros.crtk_state import OperatingState
from cosim_validation.live.ros.qos import COMMAND, STATE, to_rclpy
from cosim_validation.live.ros.refusals import Refusals
from cosim_validation.robots.model import Kinematics

STATE_PERIOD_S = 0.5  # operating_state is published at least this often [s, simulated]


class CrtkServer(ServedArm):
    """A CRTK arm's interface for one arm, driven by the framework's loop (see the module docstring).

    Args:
        node: The node to serve on (the caller spins its executor).
        namespace: The arm's namespace (``/PSM1`` on a dVRK, ``/arm1`` on a Raven-II).
        flavour: ``dvrk`` or ``raven``.
        kinematics: The nominal arm: joint names, limits, forward kinematics of ``_cp``.
        velocity: (J,) joint velocity limits [rad/s, or m/s for a prismatic joint] (``move_jp``).
        tracker: The optical tracker's namespace (``<tracker>/tip/measured_cp``).
    """

    def __init__(
        self,
        node: Node,
        namespace: str,
        flavour: str,
        kinematics: Kinematics,
        velocity: Sequence[float] | np.ndarray,
        tracker: str = "/tracker",
    ) -> None:
        self._node, self._ns, self._flavour, self._kin = node, namespace, flavour, kinematics
        self._names = tuple(kinematics.joint_names)
        self._lower, self._upper = np.asarray(kinematics.q_lower, float), np.asarray(kinematics.q_upper, float)
        self._velocity = np.asarray(velocity, dtype=float)
        if self._velocity.shape != (len(self._names),) or not np.all(self._velocity > 0):
            raise CosimError(
                f"CRTK server {namespace!r}: velocity limits {self._velocity.tolist()}; expected one positive "
                f"limit per joint ({len(self._names)})"
            )
        self._op = OperatingState()
        self._tip_frame = crtk_topics.tip_frame(namespace)  # a Raven-II's child_frame_id
        self._state_sent_s: float | None = None
        self._target: np.ndarray | None = None  # the last servo_jp, held
        self._move: tuple[float, np.ndarray, np.ndarray, float] | None = None  # move_jp: (start s, from, to, length s)
        self._last_setpoint: np.ndarray | None = None
        self._last_measured: np.ndarray | None = None
        #: the last refused commands, oldest first (``<topic>: <why>``)
        self.refusals: Refusals[str] = Refusals(node.get_logger())
        #: motion commands received so far (servo_jp and move_jp, refused ones included)
        topics = {t.name: t for t in crtk_topics.FLAVOURS[flavour]}
        self._cp_type = crtk_topics.cp_type(flavour)
        cp_class = PoseStamped if self._cp_type == crtk_topics.POSE_STAMPED else TransformStamped
        state = to_rclpy(STATE)
        self._pubs = {
            "measured_js": node.create_publisher(JointState, self._topic("measured_js"), state),
            "setpoint_js": node.create_publisher(JointState, self._topic("setpoint_js"), state),
            "measured_cp": node.create_publisher(cp_class, self._topic("measured_cp"), state),
            "setpoint_cp": node.create_publisher(cp_class, self._topic("setpoint_cp"), state),
            "operating_state": node.create_publisher(OperatingStateMsg, self._topic("operating_state"), 10),
        }
        super().__init__(Sensing(node, f"{tracker.rstrip('/')}/tip/measured_cp", self._topic("spatial/measured_cf")))
        node.create_subscription(StringStamped, self._topic("state_command"), self._on_state_command, 10)
        node.create_subscription(JointState, self._topic("servo_jp"), self._on_servo_jp, to_rclpy(COMMAND))
        if "move_jp" in topics:
            node.create_subscription(JointState, self._topic("move_jp"), self._on_move_jp, 10)

    def _topic(self, name: str) -> str:
        return crtk_topics.topic(self._ns, name)

    # ------------------------------------------------------------------ the framework's side
    def _publish_arm(self, stamp_ns: int, q_measured: np.ndarray) -> None:
        """Publish the arm's measured joints and last setpoint, each with its forward kinematics.

        The joints are in rad (or m); the setpoint is the one last commanded (the measured joints before any).
        The operating state is published too, when due.
        """
        q = self._last_measured = q_measured
        q_set = q if self._last_setpoint is None else self._last_setpoint
        publish_arm_state(self._pubs, stamp_ns, self._kin, self._cp_type, self._tip_frame, q, q_set)
        if self._state_sent_s is None or self._now_s - self._state_sent_s >= STATE_PERIOD_S - 1e-9:
            self._publish_operating_state()

    def setpoint(self, t_s: float, q_measured: np.ndarray) -> np.ndarray | None:
        """Return the joint command (J,) for simulated time ``t_s`` [s], or None to hold.

        The command is the running ``move_jp`` (it ends, and ``is_busy`` with it, when its time is up), else the
        last ``servo_jp`` (or the end of the last ``move_jp``).

        Args:
            t_s: The time of the command, on the simulated clock the arm's state is stamped with, in [s].
            q_measured: The measured joints, shape (J,), in [rad] (or [m] for a prismatic joint); unused: a CRTK command
                does not depend on them.
        """
        self._now_s = float(t_s)
        if self._move is not None:
            start_s, q_from, q_to, length_s = self._move
            fraction = 1.0 if length_s <= 0 else min(1.0, max(0.0, (t_s - start_s) / length_s))
            q: np.ndarray = q_from + fraction * (q_to - q_from)
            if fraction >= 1.0:
                self._move, self._target, self._op.busy = None, q_to.copy(), False
                self._publish_operating_state()
            self._last_setpoint = q
            return q.copy()
        if self._target is None:
            return None
        self._last_setpoint = self._target
        return self._target.copy()

    def _forget(self) -> None:
        """Forget every motion command (the operating state stays as the node left it)."""
        self._target = self._move = self._last_setpoint = self._last_measured = None
        self._state_sent_s, self._op.busy = None, False
        self.refusals.flush()

    # ------------------------------------------------------------------ the controller's side
    def _publish_operating_state(self) -> None:
        self._pubs["operating_state"].publish(self._op.message(time_to_msg(seconds_to_ns(self._now_s))))
        self._state_sent_s = self._now_s

    def _on_state_command(self, msg: StringStamped) -> None:
        if not self._op.command(msg.string):
            self._node.get_logger().warning(f"{self._ns}: state_command {msg.string!r} ignored in {self._op.state}")
        if not self._op.ready() and self._move is not None:  # paused, disabled or unhomed: a move ends where it is
            self._move, self._target, self._op.busy = None, self._last_setpoint, False
        self._publish_operating_state()

    def _command(self, topic: str, msg: JointState) -> np.ndarray | None:
        """The positions of a motion command, or None when it is refused (logged, kept in :attr:`refusals`)."""
        self.commands_received += 1
        problem = ""
        if not self._op.ready():
            problem = self._op.why_not_ready(self._ns)
        else:
            try:
                q = convert.joint_state_from_msg(msg, self._names).position
            except CosimError as exc:
                problem = str(exc)
            else:
                limits = zip(self._names, q, self._lower, self._upper, strict=True)
                outside = [f"{name} {v:g} not in [{lo:g}, {hi:g}]" for name, v, lo, hi in limits if not lo <= v <= hi]
                if not np.all(np.isfinite(q)):
                    problem = "a position is not finite"
                elif outside:
                    problem = f"outside the joint limits: {'; '.join(outside)}"
                else:
                    return np.array(q, dtype=float)
        kind = (topic, problem.split(":", 1)[0])  # the reason without its numbers: not ready, limits, a bad message
        self.refusals.add(f"{topic}: {problem}", f"{self._topic(topic)} ignored: {problem}", kind)
        return None

    def _on_servo_jp(self, msg: JointState, info: MessageInfo) -> None:
        if self._of_last_case(info):
            return
        q = self._command("servo_jp", msg)
        if q is not None:
            self._move, self._target = None, q
            if self._op.busy:
                self._op.busy = False
                self._publish_operating_state()

    def _on_move_jp(self, msg: JointState, info: MessageInfo) -> None:
        if self._of_last_case(info):
            return
        goal = self._command("move_jp", msg)
        if goal is None:
            return
        start = self._last_setpoint if self._last_setpoint is not None else self._target
        if start is None:
            start = goal if self._last_measured is None else self._last_measured
        length_s = float(np.max(np.abs(goal - start) / self._velocity))
        self._move, self._target, self._op.busy = (self._now_s, start.copy(), goal, length_s), None, True
        self._publish_operating_state()
