"""Seed 003's haptic feedback force: a saturated spring-damper pulling the operator towards the model.

Seed 003, eq. (5)-(6): ``F = Kp (p_model - p_robot) + Kd (v_model - v_robot)`` while the tips are more than the
detector's threshold apart (zero otherwise), directed from the robot's tip towards the model's, saturated "with
appropriate gains and saturations" for the haptic device's stability. Seed 003 gives no numbers; the defaults
below are this project's choice for a desktop haptic device (a few newtons at most), stated as such. Tip
velocities are backward differences of the tip positions over the sample times ([Li et al. 2016] maps joint velocities
through the Jacobian; on sampled records the two agree to the sampling error): causal, so the force a live
session sends at a sample (:class:`FeedbackForceStream`, one sample at a time) is the force computed over the
whole record afterwards (:func:`feedback_force`), bit for bit.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np


class FeedbackGains(NamedTuple):
    """Spring-damper gains and saturation.

    Attributes:
        kp_n_per_m: Stiffness [N/m].
        kd_ns_per_m: Damping [N s/m].
        max_force_n: Largest force magnitude sent to the device [N].
    """

    kp_n_per_m: float = 500.0
    kd_ns_per_m: float = 5.0
    max_force_n: float = 3.0


def feedback_force(
    t_s: np.ndarray, robot_tip_m: np.ndarray, model_tip_m: np.ndarray, threshold_m: float, gains: FeedbackGains
) -> np.ndarray:
    """(n, 3) force [N] in base_link at each sample: zero while the tips are within ``threshold_m`` [m].

    Args:
        t_s: (n,) sample times [s], increasing (a sample whose time does not come after its predecessor's gets
            no damping term).
        robot_tip_m: (n, 3) the robot's tip in base_link [m].
        model_tip_m: (n, 3) the model's tip [m].
        threshold_m: Tip deviation above which the force acts [m].
        gains: Stiffness, damping, saturation.
    """
    t = np.asarray(t_s, dtype=np.float64)
    error_m = np.asarray(model_tip_m, dtype=np.float64) - np.asarray(robot_tip_m, dtype=np.float64)
    rate_m_per_s = np.zeros_like(error_m)  # the first sample has no predecessor: no damping term
    rate_m_per_s[1:] = _rate(error_m[1:] - error_m[:-1], t[1:] - t[:-1])
    return _spring_damper(error_m, rate_m_per_s, threshold_m, gains)


def _rate(change_m: np.ndarray, dt_s: np.ndarray) -> np.ndarray:
    """Backward differences ``change / dt``, shape (n, 3), in [m/s].

    Zero (no damping term) where a sample's time does not come after its predecessor's: a repeated sample would
    otherwise send an infinite or NaN force.
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        rate = change_m / dt_s[:, None]
    return np.where((dt_s > 0)[:, None], rate, 0.0)


def _spring_damper(
    error_m: np.ndarray, rate_m_per_s: np.ndarray, threshold_m: float, gains: FeedbackGains
) -> np.ndarray:
    """(n, 3) saturated ``Kp e + Kd de/dt`` [N], zero where ``|e| <= threshold_m``."""
    force_n = gains.kp_n_per_m * error_m + gains.kd_ns_per_m * rate_m_per_s
    force_n[np.linalg.norm(error_m, axis=1) <= threshold_m] = 0.0
    magnitude_n = np.linalg.norm(force_n, axis=1, keepdims=True)
    scale = np.minimum(1.0, gains.max_force_n / np.maximum(magnitude_n, 1e-300))
    return np.asarray(force_n * scale)


class FeedbackForceStream:
    """:func:`feedback_force` one sample at a time (a live session's haptic feedback): the same numbers.

    Args:
        threshold_m: Tip deviation above which the force acts [m].
        gains: Stiffness, damping, saturation.
    """

    def __init__(self, threshold_m: float, gains: FeedbackGains) -> None:
        self.threshold_m = threshold_m
        self.gains = gains
        self._last: tuple[float, np.ndarray] | None = None

    def reset(self) -> None:
        """A new case: the next sample is a first sample (no damping term)."""
        self._last = None

    def push(self, t_s: float, robot_tip_m: np.ndarray, model_tip_m: np.ndarray) -> np.ndarray:
        """The feedback force at one sample, from the two tips.

        Args:
            t_s: Sample time in [s].
            robot_tip_m: The robot's tip in base_link, shape (3,), in [m].
            model_tip_m: The model's tip in base_link, shape (3,), in [m].

        Returns:
            The force in base_link, shape (3,), in [N]; zero while the tips are within the threshold.
        """
        error_m = (np.asarray(model_tip_m, dtype=np.float64) - np.asarray(robot_tip_m, dtype=np.float64))[None, :]
        rate_m_per_s = np.zeros_like(error_m)
        if self._last is not None:
            rate_m_per_s = _rate(error_m - self._last[1], np.array([t_s - self._last[0]]))
        self._last = (float(t_s), error_m)
        return np.asarray(_spring_damper(error_m, rate_m_per_s, self.threshold_m, self.gains)[0])
