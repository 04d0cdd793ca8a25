"""Validation of what a backend is given: joint vectors and durations."""

from __future__ import annotations

import math

import numpy as np
from numba import njit
from numpy.typing import ArrayLike

from cosim_validation.robots.virtual.errors import BackendInputError

# Setpoints may touch a limit; rounding in a planner must not make them fail by a hair.
LIMIT_TOLERANCE_RAD = 1e-9


def checked_joint_vector(
    value: ArrayLike,
    what: str,
    joint_names: tuple[str, ...],
    q_lower: np.ndarray,
    q_upper: np.ndarray,
    units: tuple[str, ...],
) -> np.ndarray:
    """``value`` as a finite (J,) float64 vector inside the joint limits.

    Args:
        value: The joint vector, shape (J,), in [rad], or [m] for a prismatic joint.
        what: What it is, for the message (e.g. ``mujoco setpoint``).
        joint_names: Names of the J joints.
        q_lower: (J,) lower limits [rad, or m for a prismatic joint].
        q_upper: (J,) upper limits [rad, or m for a prismatic joint].
        units: The unit of each joint's position (``rad``, or ``m`` for a prismatic joint), for the message.

    Raises:
        BackendInputError: Wrong shape, NaN or infinite entries, or a joint outside its limits.
    """
    try:
        q = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise BackendInputError(f"{what}: expected {len(joint_names)} joint positions, got {value!r}") from None
    if q.shape == (len(joint_names),) and _first_outside(q, q_lower, q_upper, LIMIT_TOLERANCE_RAD) < 0:
        return q  # every setpoint of a run passes here: one compiled loop instead of six ufunc calls
    if q.shape != (len(joint_names),):
        raise BackendInputError(f"{what}: expected shape ({len(joint_names)},), got shape {q.shape}: {value!r}")
    bad = ~np.isfinite(q)
    if bad.any():
        i = int(np.argmax(bad))
        raise BackendInputError(f"{what}: {joint_names[i]} is {float(q[i])!r}; joint positions must be finite")
    outside = (q < q_lower - LIMIT_TOLERANCE_RAD) | (q > q_upper + LIMIT_TOLERANCE_RAD)
    if outside.any():
        i = int(np.argmax(outside))
        raise BackendInputError(
            f"{what}: {joint_names[i]} = {float(q[i])!r} {units[i]} is outside its limits "
            f"[{float(q_lower[i])!r}, {float(q_upper[i])!r}] {units[i]}"
        )
    return q


def checked_duration(value: float, what: str) -> float:
    """``value`` as a finite duration > 0 [s].

    Args:
        value: The duration [s] (an int or float, not a bool).
        what: What it is, for the message (e.g. ``mujoco command duration_s``).

    Raises:
        BackendInputError: Not a number, not finite, or <= 0.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)):
        raise BackendInputError(f"{what}: expected a duration in seconds, got {value!r}")
    duration = float(value)
    if not math.isfinite(duration) or duration <= 0.0:
        raise BackendInputError(f"{what}: expected a finite duration > 0 s, got {value!r}")
    return duration


@njit(cache=True)
def _first_outside(q: np.ndarray, q_lower: np.ndarray, q_upper: np.ndarray, tolerance: float) -> int:
    """Index of the first entry of ``q`` (J,) that is not finite or outside [lower - tol, upper + tol]; -1 if none."""
    for j in range(q.shape[0]):
        if not np.isfinite(q[j]) or not q_lower[j] - tolerance <= q[j] <= q_upper[j] + tolerance:
            return j
    return -1
