"""What an external node under test is told besides its arm's own interface, under ros2_control and CRTK alike.

That is the tracked needle tip, the needle force where the case study models it, and ``/clock``, published
last; and :class:`ServedArm`, the calls by which the framework's loop drives a served arm.
"""

from __future__ import annotations

import time

import numpy as np
from geometry_msgs.msg import PoseStamped, Vector3, Wrench, WrenchStamped
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rclpy.subscription import MessageInfo
from rosgraph_msgs.msg import Clock
from std_msgs.msg import Header

from cosim_validation.live.ros.convert import pose_to_msg, seconds_to_ns, time_to_msg
from cosim_validation.live.ros.crtk_topics import BASE_FRAME
from cosim_validation.live.ros.qos import STATE, to_rclpy


class Sensing:
    """The publishers of the tracked tip, the needle force and ``/clock`` on ``node``.

    The tip (PoseStamped) goes on ``tip_topic``, the needle force (WrenchStamped) on ``force_topic``, both in
    base_link.
    """

    def __init__(self, node: Node, tip_topic: str, force_topic: str) -> None:
        self._tip_pub = node.create_publisher(PoseStamped, tip_topic, to_rclpy(STATE))
        self._force_pub = node.create_publisher(WrenchStamped, force_topic, to_rclpy(STATE))
        # reliable: matches both rclpy's/rclcpp's best-effort clock subscription and a reliable one (ros2 topic echo)
        self._clock_pub = node.create_publisher(
            Clock, "/clock", QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE)
        )

    def publish(
        self, stamp: object, tip_pos_m: np.ndarray, tip_quat_wxyz: np.ndarray, force_n: np.ndarray | None
    ) -> None:
        """Publish the tip and the force stamped ``stamp``, then /clock reading ``stamp``.

        With /clock last, a node whose timer runs on the clock finds the state of that time when its timer for it
        fires.

        Args:
            stamp: The stamp, a builtin_interfaces Time.
            tip_pos_m: The tracked needle tip's position in base_link, shape (3,), in [m]; not published while
                NaN (not tracked).
            tip_quat_wxyz: The tip's orientation in base_link, a quaternion (w, x, y, z), shape (4,).
            force_n: The force at the needle's holder in base_link, shape (3,), in [N]; None: not published.
        """
        if np.all(np.isfinite(tip_pos_m)) and np.all(np.isfinite(tip_quat_wxyz)):
            pose = pose_to_msg(np.asarray(tip_pos_m), np.asarray(tip_quat_wxyz))
            self._tip_pub.publish(PoseStamped(header=Header(stamp=stamp, frame_id=BASE_FRAME), pose=pose))
        if force_n is not None:
            fx, fy, fz = (float(v) for v in force_n)
            wrench = Wrench(force=Vector3(x=fx, y=fy, z=fz))
            self._force_pub.publish(WrenchStamped(header=Header(stamp=stamp, frame_id=BASE_FRAME), wrench=wrench))
        self._clock_pub.publish(Clock(clock=stamp))


class ServedArm:
    """An arm's interface served to an external node, driven by the framework's loop.

    Each control period the loop calls :meth:`publish_state`, then :meth:`setpoint`; :meth:`reset` between cases.
    A subclass publishes the arm's own state (:meth:`_publish_arm`), decides the setpoint and forgets the last case's
    commands (:meth:`_forget`); it drops a motion command the node published before the last reset
    (:meth:`_of_last_case`).

    Attributes:
        commands_received: Motion commands received so far, refused ones included (a node that streams one each
            period is waited for).
    """

    def __init__(self, sensing: Sensing) -> None:
        self._sensing = sensing
        self._now_s = 0.0
        self.commands_received = 0
        self._reset_ns = 0  # system time of the last reset [ns]
        #: motion commands dropped because the node published them before the case they arrived in
        self.late_commands = 0

    def publish_state(
        self,
        t_s: float,
        q_measured: np.ndarray,
        tip_pos_m: np.ndarray,
        tip_quat_wxyz: np.ndarray,
        force_n: np.ndarray | None = None,
    ) -> None:
        """Publish the arm's state at simulated time ``t_s``, then the tracked tip, the force and /clock, last.

        With /clock last, a node whose timer runs on the clock finds the state of ``t_s`` when its timer for
        ``t_s`` fires (with the clock first, it acted on the state one period old: the example node's targeting
        error grew from 0.3 to 6 mm).

        Args:
            t_s: Simulated time in [s], the stamp and ``/clock`` the node sees; it runs on across cases.
            q_measured: The arm's measured joints, shape (J,), in [rad] (or [m] for a prismatic joint).
            tip_pos_m: The tracked needle tip in base_link, shape (3,), in [m]; not published while NaN (not
                tracked).
            tip_quat_wxyz: The tip's orientation in base_link, a quaternion (w, x, y, z), shape (4,).
            force_n: The force of the tissue on the needle at its holder in base_link, shape (3,), in [N]; None:
                not published.
        """
        self._now_s = float(t_s)
        stamp_ns = seconds_to_ns(t_s)
        self._publish_arm(stamp_ns, np.asarray(q_measured, dtype=float))
        self._sensing.publish(time_to_msg(stamp_ns), tip_pos_m, tip_quat_wxyz, force_n)

    def _publish_arm(self, stamp_ns: int, q_measured: np.ndarray) -> None:
        """The arm's own state topics, stamped ``stamp_ns``."""
        raise NotImplementedError

    def setpoint(self, t_s: float, q_measured: np.ndarray) -> np.ndarray | None:
        """The joint command (J,) for simulated time ``t_s`` (s) given the measured joints, or None to hold.

        Args:
            t_s: Simulated time in [s], the stamp and ``/clock`` the node sees; it runs on across cases.
            q_measured: The arm's measured joints, shape (J,), in [rad] (or [m] for a prismatic joint).

        Returns:
            The joint command, shape (J,), in the unit of ``q_measured``; None: hold.
        """
        raise NotImplementedError

    def reset(self) -> None:
        """Between cases: forget what the last case commanded, and every command published before now.

        A node's last command of a case and the case's result are separate DDS entities: the command can arrive after
        the result, when the framework has already set the robot at the next case's start pose. Followed there, it
        swung the arm back to where the last case ended (2.4 rad on a joint, for 25 periods while the node planned
        the new case, in a campaign on a loaded machine).
        """
        self._reset_ns = time.time_ns()
        self._forget()

    def _forget(self) -> None:
        """Forget every command and hold of the last case."""
        raise NotImplementedError

    def _of_last_case(self, info: MessageInfo) -> bool:
        """Whether a command was published before the last :meth:`reset` (counted in :attr:`late_commands`).

        The node runs on this machine, so its DDS source timestamp and :meth:`reset`'s are on the same system clock.
        A middleware that gives no source timestamp (0) lets every command through.
        """
        sent_ns = int(info.get("source_timestamp") or 0)
        late = 0 < sent_ns < self._reset_ns
        self.late_commands += late
        return late
