"""The controller's side of one robot driver, as a :class:`~cosim_validation.assembly.RobotPort`.

Reset service, command stream, measured joints in lockstep, and the actual tip pose the driver publishes with
every joint state (read by the task supervisor's sources, :meth:`RobotLink.measurement`). Blocking calls
(``reset``, ``wait``) need the node's executor spinning in another thread, as the controller's action server does.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import numpy as np
from rclpy.callback_groups import CallbackGroup
from rclpy.client import Client
from rclpy.node import Node
from sensor_msgs.msg import JointState

from cosim_validation.assembly import RobotLostError
from cosim_validation.assembly.robot_port import Measurement
from cosim_validation.common.record import RobotRole
from cosim_validation.live.ros import convert
from cosim_validation.live.ros.qos import COMMAND, STATE, to_rclpy
from cosim_validation.live.ros.service_call import call_answered
from cosim_validation_interfaces.srv import ResetRobot


class RobotLink:
    """Talks to the driver of ``role`` under ``/cosim/<role>/``.

    Args:
        node: The controller node.
        role: The robot.
        joint_names: Names of the J joints, in command order.
        group: Callback group of the joint-state subscription and the reset client.
        reset_timeout_s: Time allowed for a reset [s].
        stale_timeout_s: Time allowed for a sample's answer [s] (wall time).
        first_reset_timeout_s: Time allowed for the first reset that succeeds [s] (wall time; at least
            ``reset_timeout_s``): a session's nodes start together, and on a loaded machine discovery can take the
            first request's answer seconds to find its way back (the first case of a session was seen aborted after
            10 s with every later reset answered at once). None: ``reset_timeout_s``.
    """

    def __init__(
        self,
        node: Node,
        role: RobotRole,
        joint_names: tuple[str, ...],
        group: CallbackGroup,
        reset_timeout_s: float,
        stale_timeout_s: float,
        first_reset_timeout_s: float | None = None,
    ) -> None:
        self._role = role
        self.names = joint_names
        self.reset_timeout_s = reset_timeout_s
        self._first_reset_timeout_s = max(first_reset_timeout_s or 0.0, reset_timeout_s)
        self._reset_once = False  # a reset succeeded: the driver and this node have found one another
        self.stale_timeout_s = stale_timeout_s
        prefix = f"/cosim/{role.label}"
        self.commands = node.create_publisher(JointState, f"{prefix}/command", to_rclpy(COMMAND))
        self._reset: Client[Any, Any] = node.create_client(ResetRobot, f"{prefix}/reset", callback_group=group)
        node.create_subscription(
            JointState, f"{prefix}/joint_states", self._on_joints, to_rclpy(STATE), callback_group=group
        )
        node.create_subscription(
            convert.pose_stamped_msg_type(), f"{prefix}/tip_pose", self._on_tip, to_rclpy(STATE), callback_group=group
        )
        self._joints: dict[int, np.ndarray] = {}
        self._tips: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self._answered: tuple[int, np.ndarray] = (-1, np.zeros(len(joint_names)))
        self._cond = threading.Condition()
        self._last_answer_s = -float("inf")  # time.monotonic() of the last joint state

    @property
    def role(self) -> RobotRole:
        """The robot."""
        return self._role

    def _on_joints(self, msg: Any) -> None:
        sample = convert.joint_state_from_msg(msg, self.names)
        with self._cond:
            self._joints[sample.t_ns] = sample.position
            self._last_answer_s = time.monotonic()
            self._cond.notify_all()

    def _on_tip(self, msg: Any) -> None:
        pose = convert.pose_stamped_from_msg(msg)
        with self._cond:
            if pose.t_ns > self._answered[0] - 1:  # older tips are of answered samples: nobody asks any more
                self._tips[pose.t_ns] = (pose.position_m, pose.quat_wxyz)
            self._cond.notify_all()

    def reset(self, test_id: str, q0: np.ndarray, case_seed: int) -> None:
        """Bring the robot to ``q0`` at rest, its noise reseeded with ``case_seed``.

        Args:
            test_id: The case the reset is for.
            q0: The joints to rest at, in the link's joint order, shape (J,), in [rad] (or [m] for a prismatic
                joint).
            case_seed: The seed of the robot's noise for this case.

        Raises:
            RobotLostError: No reset service, no answer within the reset timeout, or a refused reset.
        """
        timeout_s = self.reset_timeout_s if self._reset_once else self._first_reset_timeout_s
        if not self._reset.wait_for_service(timeout_sec=timeout_s):
            raise RobotLostError(f"{self._role.label} robot: no reset service after {timeout_s:.1f} s")
        request = ResetRobot.Request(
            test_id=test_id, joint_names=list(self.names), position=[float(v) for v in q0], seed=int(case_seed)
        )
        response = call_answered(self._reset, request, timeout_s)  # sent again if its answer seems lost
        if response is None:
            raise RobotLostError(f"{self._role.label} robot: reset not answered within {timeout_s:.1f} s")
        if not response.success:
            raise RobotLostError(f"{self._role.label} robot refused the reset: {response.message}")
        self._reset_once = True
        with self._cond:
            self._joints.clear()
            self._tips.clear()
            self._answered = (-1, np.asarray(q0, dtype=np.float64))

    def send(self, stamp_ns: int, q: np.ndarray) -> None:
        """Stream one setpoint stamped ``stamp_ns``.

        Args:
            stamp_ns: The setpoint's stamp in [ns]; the robot answers with the same stamp.
            q: The commanded joints, in the link's joint order, shape (J,), in [rad] (or [m] for a prismatic
                joint).
        """
        sample = convert.JointSample(stamp_ns, self.names, q, np.zeros(0))
        self.commands.publish(convert.joint_state_to_msg(sample))

    def answered_since(self, monotonic_s: float) -> bool:
        """Whether a joint state came after ``monotonic_s`` (a frozen driver that runs again answers late).

        Args:
            monotonic_s: A ``time.monotonic()`` reading [s].
        """
        with self._cond:
            return self._last_answer_s > monotonic_s

    def wait(self, stamp_ns: int) -> None:
        """Block until the measured joints of the sample stamped ``stamp_ns`` came (up to the stale timeout).

        Args:
            stamp_ns: The stamp of a setpoint sent with :meth:`send` [ns].
        """
        deadline = time.monotonic() + self.stale_timeout_s
        with self._cond:
            while stamp_ns not in self._joints:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise RobotLostError(
                        f"{self._role.label} robot is stale: no joint state for the sample "
                        f"at {stamp_ns / 1e9:.3f} s within {self.stale_timeout_s:.1f} s"
                    )
                self._cond.wait(remaining)
            self._answered = (stamp_ns, self._joints.pop(stamp_ns))
            for old in [t for t in self._tips if t < stamp_ns]:
                del self._tips[old]

    def measurement(self, stamp_ns: int) -> Measurement:
        """Return the answer to the setpoint stamped ``stamp_ns`` (after :meth:`wait`) with its tip pose.

        The driver publishes the tip right after the joints, so it is waited for up to the stale timeout (NaN if
        it does not come: an untracked tip).

        Args:
            stamp_ns: The stamp of the setpoint last waited for with :meth:`wait` [ns].

        Raises:
            RobotLostError: The joints last answered are not those of ``stamp_ns``.
        """
        deadline = time.monotonic() + self.stale_timeout_s
        with self._cond:
            answered, q = self._answered
            if answered != stamp_ns:
                raise RobotLostError(f"{self._role.label} robot: no answer to the sample at {stamp_ns / 1e9:.3f} s")
            while stamp_ns not in self._tips and deadline > time.monotonic():
                self._cond.wait(deadline - time.monotonic())
            position, quat = self._tips.get(stamp_ns, (np.full(3, np.nan), np.full(4, np.nan)))
            for old in [t for t in self._tips if t <= stamp_ns]:
                del self._tips[old]
        return Measurement(q, position, quat)
