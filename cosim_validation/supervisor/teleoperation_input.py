"""The latest teleoperation command of a live session, as a :class:`~.teleoperation.TeleoperationSource`.

The controller node puts every message of the teleoperation topics here (a tip twist from
``geometry_msgs/TwistStamped``, or joint targets from ``sensor_msgs/JointState``); the control loop asks for
the command of each period. A command older than ``stale_s`` of wall time is no command (``hold``): a surgeon's
device that stops sending stops the robot. Thread-safe (ROS callbacks write, the loop reads).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike

from cosim_validation.common.exceptions import InputError
from cosim_validation.supervisor.teleoperation import TeleoperationCommand


class LatestTeleoperation:
    """Holds the newest teleoperation command.

    Args:
        n_joints: J, the length of a joint target.
        stale_s: A command older than this (wall time) is no longer followed [s].
        clock: Wall clock [s] (``time.monotonic``; tests pass their own).
    """

    def __init__(self, n_joints: int, stale_s: float = 0.5, clock: Callable[[], float] = time.monotonic) -> None:
        self.n_joints = n_joints
        self.stale_s = stale_s
        self._clock = clock
        self._lock = threading.Lock()
        self._command: TeleoperationCommand | None = None
        self._received_s = -np.inf
        self._count = 0

    def twist(self, linear_m_s: ArrayLike, angular_rad_s: ArrayLike) -> None:
        """A tip twist in base_link: linear (3,) [m/s], angular (3,) [rad/s].

        Args:
            linear_m_s: The tip's linear velocity in base_link, shape (3,), in [m/s].
            angular_rad_s: The tip's angular velocity in base_link, shape (3,), in [rad/s].

        Raises:
            InputError: Not finite or of the wrong length.
        """
        twist = np.concatenate([np.asarray(linear_m_s, dtype=np.float64), np.asarray(angular_rad_s, dtype=np.float64)])
        if twist.shape != (6,) or not np.all(np.isfinite(twist)):
            raise InputError(f"teleoperation twist: expected 3 + 3 finite values, got {twist.tolist()}")
        self._store("twist", twist, None)

    def joints(self, q: ArrayLike) -> None:
        """Joint targets (J,) (rad, or m for a prismatic joint), reached as fast as the velocity limits allow.

        Args:
            q: Joint targets, shape (J,) with J = ``n_joints``, in [rad], or [m] for a prismatic joint.

        Raises:
            InputError: Not finite or of the wrong length.
        """
        target = np.asarray(q, dtype=np.float64)
        if target.shape != (self.n_joints,) or not np.all(np.isfinite(target)):
            raise InputError(f"teleoperation joints: expected {self.n_joints} finite positions, got {target.tolist()}")
        self._store("joints", None, target)

    def _store(self, kind: str, twist: np.ndarray | None, joints: np.ndarray | None) -> None:
        with self._lock:
            self._count += 1
            self._command = TeleoperationCommand(kind, self._count, 0.0, twist, joints, 0.0)
            self._received_s = self._clock()

    def clear(self) -> None:
        """Forget the last command (a new teleoperation starts from silence)."""
        with self._lock:
            self._command, self._received_s = None, -np.inf

    def command_at(self, t_s: float) -> TeleoperationCommand:
        """The newest command, or ``hold`` when there is none or it is stale (``t_s`` is not used: live time).

        Args:
            t_s: Time since the start of teleoperation [s]; not used (a command's age is measured on the wall clock),
                it is there for :class:`~.teleoperation.TeleoperationSource`.
        """
        with self._lock:
            command, fresh = self._command, self._clock() - self._received_s <= self.stale_s
        if command is None or not fresh:
            return TeleoperationCommand("hold", -1, 0.0, None, None)
        return command
