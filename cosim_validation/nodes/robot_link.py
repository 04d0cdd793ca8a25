"""The controller's side of one robot driver: reset service, command stream, measured joints in lockstep.

Blocking calls (``reset``, ``wait_joints``) need the node's executor spinning in another thread, as the
controller's action server does (MultiThreadedExecutor, reentrant callback group).
"""

from __future__ import annotations

import threading
import time
from typing import Any

import numpy as np
from rclpy.callback_groups import CallbackGroup
from rclpy.node import Node
from sensor_msgs.msg import JointState

from cosim_validation.record import RobotRole
from cosim_validation.ros import convert
from cosim_validation.ros.qos import COMMAND, STATE, to_rclpy
from cosim_validation_interfaces.srv import ResetRobot


class RobotLinkError(Exception):
    """The robot did not answer in time or refused."""


class RobotLink:
    """Talks to the driver of ``role`` under ``/cosim/<role>/``."""

    def __init__(self, node: Node, role: RobotRole, joint_names: tuple[str, ...], group: CallbackGroup) -> None:
        self.role = role
        self.names = joint_names
        prefix = f"/cosim/{role.label}"
        self.commands = node.create_publisher(JointState, f"{prefix}/command", to_rclpy(COMMAND))
        self._reset = node.create_client(ResetRobot, f"{prefix}/reset", callback_group=group)
        node.create_subscription(
            JointState, f"{prefix}/joint_states", self._on_joints, to_rclpy(STATE), callback_group=group
        )
        self._joints: dict[int, np.ndarray] = {}
        self._cond = threading.Condition()
        self.last_seen = time.monotonic()

    def _on_joints(self, msg: Any) -> None:
        sample = convert.joint_state_from_msg(msg, self.names)
        with self._cond:
            self._joints[sample.t_ns] = sample.position_rad
            self.last_seen = time.monotonic()
            self._cond.notify_all()

    def connected(self) -> bool:
        """Whether the driver's reset service and command subscription are there."""
        return self._reset.service_is_ready() and self.commands.get_subscription_count() > 0

    def reset(self, test_id: str, q_rad: np.ndarray, timeout_s: float) -> np.ndarray:
        """Bring the robot to ``q_rad`` at rest; returns its measured joints."""
        if not self._reset.wait_for_service(timeout_sec=timeout_s):
            raise RobotLinkError(f"{self.role.label} robot: no reset service after {timeout_s:.1f} s")
        request = ResetRobot.Request(test_id=test_id, joint_names=list(self.names), position=[float(v) for v in q_rad])
        done = threading.Event()
        future = self._reset.call_async(request)
        future.add_done_callback(lambda _: done.set())
        if not done.wait(timeout_s):
            future.cancel()
            raise RobotLinkError(f"{self.role.label} robot: reset not answered within {timeout_s:.1f} s")
        response = future.result()
        if response is None or not response.success:
            reason = response.message if response is not None else "no response"
            raise RobotLinkError(f"{self.role.label} robot refused the reset: {reason}")
        with self._cond:
            self._joints.clear()
            self.last_seen = time.monotonic()
        return np.asarray(response.position, dtype=np.float64)

    def send(self, t_ns: int, q_rad: np.ndarray) -> None:
        """Stream one setpoint stamped ``t_ns``."""
        self.commands.publish(convert.joint_state_to_msg(convert.JointSample(t_ns, self.names, q_rad, np.zeros(0))))

    def wait_joints(self, t_ns: int, timeout_s: float) -> np.ndarray:
        """The measured joints of the sample stamped ``t_ns`` (blocks up to ``timeout_s`` of wall time)."""
        deadline = time.monotonic() + timeout_s
        with self._cond:
            while t_ns not in self._joints:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise RobotLinkError(
                        f"{self.role.label} robot is stale: no joint state for the sample "
                        f"at {t_ns / 1e9:.3f} s within {timeout_s:.1f} s"
                    )
                self._cond.wait(remaining)
            return self._joints.pop(t_ns)
