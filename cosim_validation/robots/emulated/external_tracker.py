"""An external tracker (optical, on the needle) reporting the actual tip pose with noise."""

from __future__ import annotations

import numpy as np

from cosim_validation.robots.emulated.emulated_config import TrackerConfig
from cosim_validation.robots.emulated.tracker_kernels import noisy_tip


class ExternalTracker:
    """Adds the tracker's white noise to the true tip pose.

    Args:
        config: Position and orientation noise.
        rng: The tracker's random stream (seeded by the arm).
    """

    def __init__(self, config: TrackerConfig, rng: np.random.Generator) -> None:
        self._position_std_m = config.position_noise_std_m
        self._orientation_std_rad = config.orientation_noise_std_rad
        self._rng = rng

    def measure(self, tip_pos_m: np.ndarray, tip_quat_wxyz: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """A measurement of the true pose: position (3,) [m] and orientation (4,) wxyz (w >= 0), both noisy.

        Orientation noise is a small rotation of the tip frame (rotation vector with independent normal components).

        Args:
            tip_pos_m: The true tip position in base_link, shape (3,), in [m].
            tip_quat_wxyz: The true tip orientation in base_link, (w, x, y, z), shape (4,).
        """
        position_noise = self._rng.normal(0.0, self._position_std_m, 3)
        rotation_noise = self._rng.normal(0.0, self._orientation_std_rad, 3)
        return noisy_tip(tip_pos_m, tip_quat_wxyz, position_noise, rotation_noise)
