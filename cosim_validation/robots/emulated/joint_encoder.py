"""Joint encoders: quantised readings with white noise."""

from __future__ import annotations

import numpy as np

from cosim_validation.robots.emulated.emulated_config import EncoderConfig


class JointEncoder:
    """Reads joint angles the way an encoder does.

    Args:
        config: Noise and resolution.
        rng: The random stream of this encoder set (seeded by the arm).
    """

    def __init__(self, config: EncoderConfig, rng: np.random.Generator) -> None:
        self._noise_std_rad = config.noise_std_rad
        self._resolution_rad = config.resolution_rad
        self._rng = rng

    def read(self, q: np.ndarray) -> np.ndarray:
        """(J,) readings of the true joint values ``q``: noise, then quantisation.

        Args:
            q: The true joint values, shape (J,), in [rad], or [m] for a prismatic joint (the noise and resolution,
                configured in [rad], are applied to every joint as they are).

        Returns:
            The readings, shape (J,), in the unit of ``q``.
        """
        noisy = q + self._rng.normal(0.0, self._noise_std_rad, q.shape)
        if self._resolution_rad > 0.0:
            return np.round(noisy / self._resolution_rad) * self._resolution_rad
        return noisy
