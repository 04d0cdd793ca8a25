"""A scripted teleoperation source for tests: tip twists or joint targets over time, turned into setpoints.

In a session the surgeon's commands arrive as ``geometry_msgs/TwistStamped`` (tip velocity) or
``sensor_msgs/JointState`` (joint targets); this script produces the same two kinds of command from a
file, so TeleoperationMode can be tested without a haptic device::

    teleoperation:
      segments:
        - {duration_s: 1.0, tip_linear_m_s: [0.0, 0.0, 0.01], tip_angular_rad_s: [0.0, 0.0, 0.0]}
        - {duration_s: 2.0, joints: [0.0, -0.4, 0.0, 1.46, 0.0, 1.3, 0.0]}

A twist (base_link, at the tip) is followed by resolved-rate control, q += J+ v dt with a damped
pseudo-inverse of the tip Jacobian; joint targets are approached linearly over their segment. After the
last segment the robot holds. The follower takes any :class:`TeleoperationSource` (the script, or the latest
command of the teleoperation topics in a session: :mod:`.teleoperation_input`), and bounds every joint's step
per period by its velocity limit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple, Protocol

import numpy as np
from numpy.typing import ArrayLike, NDArray

from cosim_validation.common.config import ConfigNode, load_config
from cosim_validation.common.config.config_node import (
    MAX_CASE_TIME_S,
    MAX_JOINT_TARGET,
    MAX_TIP_RATE_RAD_S,
    MAX_TIP_SPEED_M_S,
)
from cosim_validation.robots.model import Kinematics


@dataclass(frozen=True)
class TeleoperationSegment:
    """One command held for ``duration_s`` [s]: a tip twist (6,) (v [m/s], w [rad/s]) or joint targets [rad]."""

    duration_s: float
    twist: NDArray[np.float64] | None = None
    joints: NDArray[np.float64] | None = None


class TeleoperationCommand(NamedTuple):
    """The teleoperation command at a time.

    ``kind`` is ``twist``, ``joints`` or ``hold`` (no command: after the script, or the topics are silent).
    ``segment`` changes with every new command; joint targets are reached ``duration_s`` [s] after
    ``segment_start_s`` (0: at once, within the velocity limits).
    """

    kind: str
    segment: int
    segment_start_s: float
    twist: NDArray[np.float64] | None
    joints: NDArray[np.float64] | None
    duration_s: float = 0.0


class TeleoperationSource(Protocol):
    """Where teleoperation commands come from: a script, or the latest message of a topic."""

    def command_at(self, t_s: float) -> TeleoperationCommand:
        """The command at ``t_s`` [s] after the start of teleoperation.

        Args:
            t_s: Time since the start of teleoperation [s].
        """
        ...


class TeleoperationScript:
    """Segments played one after the other from t = 0 (the start of teleoperation)."""

    def __init__(self, segments: Sequence[TeleoperationSegment]) -> None:
        self.segments = tuple(segments)
        self.starts_s = np.concatenate([[0.0], np.cumsum([s.duration_s for s in segments])])

    @property
    def duration_s(self) -> float:
        """Length of the script [s]."""
        return float(self.starts_s[-1])

    @classmethod
    def load(cls, path: str | Path, n_joints: int = 7) -> TeleoperationScript:
        """Read the ``teleoperation`` section of ``path`` (joint targets of ``n_joints`` values).

        Args:
            path: A YAML file with a ``teleoperation`` section.
            n_joints: J, the number of values of a ``joints`` target.
        """
        section = load_config(path)["teleoperation"]
        section.reject_unknown(("segments",))
        return cls([_segment(node, n_joints) for node in section["segments"].elements()])

    def command_at(self, t_s: float) -> TeleoperationCommand:
        """The command at ``t_s`` [s] after the start of teleoperation.

        Args:
            t_s: Time since the start of teleoperation [s]; before 0 or after the last segment the command is ``hold``.
        """
        index = int(np.searchsorted(self.starts_s, t_s, side="right")) - 1
        if index < 0 or index >= len(self.segments):
            return TeleoperationCommand("hold", len(self.segments), self.duration_s, None, None)
        seg = self.segments[index]
        kind = "twist" if seg.twist is not None else "joints"
        return TeleoperationCommand(kind, index, float(self.starts_s[index]), seg.twist, seg.joints, seg.duration_s)


def _segment(node: ConfigNode, n_joints: int) -> TeleoperationSegment:
    node.reject_unknown(("duration_s", "tip_linear_m_s", "tip_angular_rad_s", "joints"))
    duration = node["duration_s"].to_float(exclusive_minimum=0.0, maximum=MAX_CASE_TIME_S)
    twist_given = node.has("tip_linear_m_s") or node.has("tip_angular_rad_s")
    if twist_given == node.has("joints"):
        raise node.error("give either a tip twist (tip_linear_m_s, tip_angular_rad_s) or joints")
    if node.has("joints"):
        joints = node["joints"].to_vector(n_joints, minimum=-MAX_JOINT_TARGET, maximum=MAX_JOINT_TARGET)
        return TeleoperationSegment(duration, joints=joints)
    linear, angular = np.zeros(3), np.zeros(3)
    if node.has("tip_linear_m_s"):
        linear = node["tip_linear_m_s"].to_vector(3, minimum=-MAX_TIP_SPEED_M_S, maximum=MAX_TIP_SPEED_M_S)
    if node.has("tip_angular_rad_s"):
        angular = node["tip_angular_rad_s"].to_vector(3, minimum=-MAX_TIP_RATE_RAD_S, maximum=MAX_TIP_RATE_RAD_S)
    return TeleoperationSegment(duration, twist=np.concatenate([linear, angular]))


class TeleoperationFollower:
    """Joint setpoints that follow a teleoperation script.

    Args:
        kinematics: The arm and needle (tip Jacobian).
        script: The commands (a :class:`TeleoperationScript` or any :class:`TeleoperationSource`).
        damping: Damping of the least-squares pseudo-inverse (keeps joint steps bounded near singularities).
        max_rate: (J,) largest joint speed (rad/s, or m/s for a prismatic joint); None: unbounded.
    """

    def __init__(
        self,
        kinematics: Kinematics,
        script: TeleoperationSource,
        damping: float = 1e-3,
        max_rate: ArrayLike | None = None,
    ) -> None:
        self.kinematics = kinematics
        self.script = script
        self.damping = damping
        self.max_rate = None if max_rate is None else np.asarray(max_rate, dtype=np.float64)
        self.q = np.zeros(kinematics.n_joints)
        self.start_s = 0.0
        self.last_kind = "hold"
        self._segment = -1
        self._segment_q0 = self.q

    def start(self, q: ArrayLike, t_s: float) -> None:
        """Teleoperation begins at ``t_s`` [s] with the arm at ``q`` (J,).

        Args:
            q: The arm's joints, shape (J,), in [rad] (or [m] for a prismatic joint), within the joint limits.
            t_s: Case time in [s]; the script's times count from it.

        Raises:
            KinematicsInputError: ``q`` is not finite or outside the joint limits.
        """
        self.q = self.kinematics.check_limits(q)
        self.start_s = t_s
        self._segment = -1

    def next_setpoint(self, t_s: float, dt_s: float) -> NDArray[np.float64]:
        """The setpoint (J,) for ``t_s`` [s], one period ``dt_s`` [s] after the previous one.

        The command of the period that ends at ``t_s`` applies: a twist is integrated over it, and joint
        targets are approached so that they are reached at the end of their segment.

        Args:
            t_s: Case time in [s].
            dt_s: The control period in [s].

        Returns:
            The joint setpoint, shape (J,), in [rad] (or [m] for a prismatic joint), within the joint limits
            and, if ``max_rate`` is set, within ``max_rate * dt_s`` of the previous one.
        """
        command = self.script.command_at(t_s - 0.5 * dt_s - self.start_s)  # mid-period: robust to rounding
        self.last_kind = command.kind
        if command.segment != self._segment:
            self._segment, self._segment_q0 = command.segment, self.q.copy()
        q = self.q
        if command.kind == "twist":
            assert command.twist is not None
            q = self.q + self._rate(command.twist) * dt_s
        elif command.kind == "joints":
            assert command.joints is not None
            elapsed = t_s - self.start_s - command.segment_start_s
            fraction = 1.0 if command.duration_s <= 0 else min(1.0, elapsed / command.duration_s)
            q = self._segment_q0 + fraction * (command.joints - self._segment_q0)
        if self.max_rate is not None:
            q = self.q + np.clip(q - self.q, -self.max_rate * dt_s, self.max_rate * dt_s)
        self.q = np.clip(q, self.kinematics.q_lower, self.kinematics.q_upper)
        return self.q.copy()

    def _rate(self, twist: NDArray[np.float64]) -> NDArray[np.float64]:
        """Joint velocity (J,) for a tip twist (6,): damped least squares J^T (J J^T + d^2 I)^-1 v."""
        J = self.kinematics.tip_jacobian(self.q)
        gram = J @ J.T + self.damping**2 * np.eye(6)
        rate: NDArray[np.float64] = J.T @ np.linalg.solve(gram, twist)
        return rate
