"""First-order hold of streamed joint setpoints at the physics rate.

A real-time joint interface receives setpoints at the session rate (10 Hz) and servoes at 1 kHz. It
interpolates linearly: from the reference it holds now to the new setpoint, over the announced duration,
then holds the setpoint. Every engine uses this one class, so all of them see the same reference.
Time is counted in whole physics steps, which keeps the reference exact over long runs.
"""

from __future__ import annotations

import numpy as np


class SetpointRamp:
    """The servo reference q_ref(t): piecewise linear in time, constant slope within a ramp.

    Args:
        n_joints: Number of joints J.
        timestep_s: Physics (servo) period [s].
    """

    def __init__(self, n_joints: int, timestep_s: float) -> None:
        self.timestep_s = float(timestep_s)
        self._reference_rad = np.zeros(n_joints)
        self._target_rad = np.zeros(n_joints)
        self._slope_rad_s = np.zeros(n_joints)
        self._steps_left = 0
        #: Changes whenever the slope does (a new ramp, a ramp's end, a reset): an engine that copied the slope
        #: into its actuators need not copy it again while this stays the same.
        self.slope_version = 0

    @property
    def reference_rad(self) -> np.ndarray:
        """(J,) the reference now [rad] (a copy)."""
        return self._reference_rad.copy()

    def copy_reference(self, out: np.ndarray) -> None:
        """Write the (J,) reference now [rad] into ``out`` (e.g. an engine's actuator state), without a new array.

        Args:
            out: A writable array of shape (J,).
        """
        out[:] = self._reference_rad

    @property
    def slope_rad_s(self) -> np.ndarray:
        """(J,) the reference velocity now [rad/s] (zero when holding)."""
        return self._slope_rad_s.copy() if self._steps_left else np.zeros_like(self._slope_rad_s)

    @property
    def steps_left(self) -> int:
        """Physics steps until the reference reaches the last setpoint (0 when holding)."""
        return self._steps_left

    def reset(self, q: np.ndarray) -> None:
        """Hold ``q``.

        Args:
            q: The reference to hold, shape (J,), in [rad], or [m] for a prismatic joint.
        """
        self._reference_rad = np.array(q, dtype=np.float64)
        self._target_rad = self._reference_rad.copy()
        self._slope_rad_s[:] = 0.0
        self._steps_left = 0
        self.slope_version += 1

    def start(self, q_target_rad: np.ndarray, duration_s: float) -> None:
        """Ramp from the current reference to ``q_target_rad`` in ``duration_s`` (rounded to whole steps, >= 1).

        Args:
            q_target_rad: The new setpoint, shape (J,), in [rad], or [m] for a prismatic joint.
            duration_s: Time to reach it, in [s]; rounded to whole physics steps, at least one.
        """
        steps = max(1, round(duration_s / self.timestep_s))
        self._target_rad = np.array(q_target_rad, dtype=np.float64)
        self._slope_rad_s = (self._target_rad - self._reference_rad) / (steps * self.timestep_s)
        self._steps_left = steps
        self.slope_version += 1

    def next_segment(self, max_steps: int) -> tuple[int, np.ndarray]:
        """The next stretch of constant slope: (number of steps <= ``max_steps``, (J,) slope [rad/s]).

        Args:
            max_steps: Most physics steps the stretch may have.
        """
        steps, slope = self.segment(max_steps)
        return steps, slope.copy()

    def segment(self, max_steps: int) -> tuple[int, np.ndarray]:
        """:meth:`next_segment` without a copy: the slope returned is the ramp's own array.

        Read it before :meth:`consume`; never write it.

        Args:
            max_steps: Most physics steps the stretch may have.
        """
        steps = max_steps if self._steps_left == 0 else min(max_steps, self._steps_left)
        return steps, self._slope_rad_s  # zero while holding

    def consume(self, steps: int) -> bool:
        """Advance the reference by ``steps`` physics steps; True if a ramp ended (reference == target).

        Args:
            steps: Number of physics steps, >= 0.
        """
        if self._steps_left == 0:
            return False
        taken = min(steps, self._steps_left)
        self._reference_rad += taken * self.timestep_s * self._slope_rad_s
        self._steps_left -= taken
        if self._steps_left == 0:
            self._reference_rad = self._target_rad.copy()
            self._slope_rad_s[:] = 0.0
            self.slope_version += 1
            return True
        return False
