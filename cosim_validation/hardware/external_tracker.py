"""An external tracker (optical, on the needle) reporting the actual tip pose with noise."""

from __future__ import annotations

import numpy as np

from cosim_validation.hardware.emulated_config import TrackerConfig


def quat_multiply(a_wxyz: np.ndarray, b_wxyz: np.ndarray) -> np.ndarray:
    """Hamilton product a b of two (4,) wxyz quaternions."""
    aw, ax, ay, az = a_wxyz
    bw, bx, by, bz = b_wxyz
    return np.array(
        [
            aw * bw - ax * bx - ay * by - az * bz,
            aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw,
        ]
    )


def quat_from_rotvec(rotvec: np.ndarray) -> np.ndarray:
    """(4,) wxyz unit quaternion of the rotation vector ``rotvec`` ((3,) [rad])."""
    angle = float(np.linalg.norm(rotvec))
    if angle < 1e-12:
        small: np.ndarray = np.array([1.0, *(0.5 * rotvec)]) / np.sqrt(1.0 + 0.25 * angle * angle)
        return small
    return np.array([np.cos(0.5 * angle), *(np.sin(0.5 * angle) / angle * rotvec)])


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
        """A measurement of the true pose: position (3,) [m] and orientation (4,) wxyz, both noisy.

        Orientation noise is a small rotation of the tip frame (rotation vector with independent
        normal components).
        """
        position = tip_pos_m + self._rng.normal(0.0, self._position_std_m, 3)
        noise = quat_from_rotvec(self._rng.normal(0.0, self._orientation_std_rad, 3))
        quat = quat_multiply(tip_quat_wxyz, noise)
        return position, quat / np.linalg.norm(quat)
