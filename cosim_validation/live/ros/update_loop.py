"""A ros2_control controller manager's update loop over an emulated arm, run in the session's time.

The core of ``controller_manager_emulator``, without ROS.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from cosim_validation.assembly import BackendPort
from cosim_validation.robots.robot_backend import BackendSample

#: the joint trajectory controller: the command (J,) for a time [s] given the measured joints, None: hold
Setpoint = Callable[[float, np.ndarray], "np.ndarray | None"]


class UpdateLoop:
    """A controller manager's update loop over an emulated arm, in the session's time.

    Each update (every ``1 / update_rate_hz`` s) asks the trajectory controller for its command at the end of
    the period and lets the arm track it over the period (the hardware's write); the arm is read (the
    broadcaster's state, the encoders' noise drawn) once, at the end of each command, as the batch robot is
    read once per setpoint. Between reads the controller sees the last reading.

    Args:
        port: The emulated arm (reset and reseeded through it).
        update_rate_hz: The controller manager's update rate [Hz] (rokae_ros2: 250 on the real arm).
    """

    def __init__(self, port: BackendPort, update_rate_hz: float) -> None:
        self.port = port
        self.period_ns = max(1, round(1e9 / float(update_rate_hz)))
        self._now_ns: int | None = None
        self._q = np.zeros(len(port.backend.joint_names))
        self._command: np.ndarray | None = None

    @property
    def now_ns(self) -> int | None:
        """The arm's time [ns] (None: not since the last reset)."""
        return self._now_ns

    def reset(self) -> None:
        """After the port's reset: the arm rests, its time starts with the next command."""
        rest = self.port.reset_sample
        assert rest is not None
        self._now_ns, self._q, self._command = None, rest.q_measured.copy(), None

    def run_until(self, end_ns: int, setpoint: Setpoint) -> BackendSample | None:
        """Run the updates up to ``end_ns``; the reading there, or None if the arm is there already.

        The first command after a reset only reads the arm at rest (as the batch robot's first setpoint).

        Args:
            end_ns: The session time to run to, in [ns].
            setpoint: The trajectory controller: the command (J,) for a time [s] given the measured joints, None:
                hold.
        """
        if self._now_ns is None:
            rest = self.port.reset_sample
            assert rest is not None
            self._now_ns = int(end_ns)
            self._command = setpoint(end_ns / 1e9, self._q)
            return rest
        if end_ns <= self._now_ns:
            return None
        backend, t_ns = self.port.backend, self._now_ns
        while t_ns < end_ns:
            next_ns = min(t_ns + self.period_ns, int(end_ns))
            desired = setpoint(next_ns / 1e9, self._q)
            if desired is not None:
                self._command = desired
            if self._command is not None:
                backend.command(self._command, (next_ns - t_ns) / 1e9)
            backend.advance((next_ns - t_ns) / 1e9)
            t_ns = next_ns
        sample = backend.read()
        self._now_ns, self._q = int(end_ns), sample.q_measured.copy()
        return sample
