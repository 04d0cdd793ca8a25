"""Gear play between motor and link: the classical play (backlash) operator, per joint."""

from __future__ import annotations

import numpy as np


class LostMotion:
    """The link follows the motor only once the play is taken up, so it trails on the side it came from.

    Args:
        width_rad: (J,) full width of the play of each joint [rad] (0 = none).
    """

    def __init__(self, width_rad: np.ndarray) -> None:
        self._half_rad = 0.5 * np.asarray(width_rad, dtype=np.float64)
        self._link_rad = np.zeros_like(self._half_rad)

    @property
    def link_rad(self) -> np.ndarray:
        """(J,) link-side angles after the play [rad]."""
        return self._link_rad.copy()

    def reset(self, motor_rad: np.ndarray) -> None:
        """Centre the play at ``motor_rad``.

        Args:
            motor_rad: Motor-side joint angles, shape (J,), in [rad].
        """
        self._link_rad = np.array(motor_rad, dtype=np.float64)

    def update(self, motor_rad: np.ndarray) -> np.ndarray:
        """Move the motors to ``motor_rad`` ((J,) [rad]); return the (J,) link-side angles [rad].

        Exact for any path whose direction reverses at most once between two updates.

        Args:
            motor_rad: Motor-side joint angles, shape (J,), in [rad].

        Returns:
            The link-side angles after the play, shape (J,), in [rad].
        """
        # the clip of the play operator, as two ufuncs (np.clip's dispatch costs more than the clip on 7 joints)
        self._link_rad = np.minimum(np.maximum(self._link_rad, motor_rad - self._half_rad), motor_rad + self._half_rad)
        return self._link_rad.copy()
