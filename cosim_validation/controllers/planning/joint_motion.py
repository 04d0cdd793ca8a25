"""Joint-space motion: straight lines between joint vectors, time-scaled within the joint limits."""

from __future__ import annotations

from itertools import pairwise

import numpy as np

from cosim_validation.controllers.planning.time_scaling import profile_samples
from cosim_validation.robots.model import CommandLimits


def joint_line(q_from: np.ndarray, q_to: np.ndarray, limits: CommandLimits, dt_s: float) -> np.ndarray:
    """Samples of a rest-to-rest straight move in joint space within velocity, acceleration and jerk limits.

    Every joint moves in proportion (the path is the straight segment), so a collision check of the
    segment covers the motion.

    Args:
        q_from: (J,) start [rad].
        q_to: (J,) goal [rad].
        limits: Per-joint limits used for the move.
        dt_s: Sample period [s].

    Returns:
        (N + 1, J) joint vectors at t = 0, dt, ..., the first ``q_from``, the last ``q_to``; N >= 1.
    """
    delta = q_to - q_from
    moving = np.abs(delta) > 1e-12
    if not moving.any():
        return np.stack([q_from, q_to])
    span = np.abs(delta[moving])
    u = profile_samples(
        1.0,
        float(np.min(limits.velocity[moving] / span)),
        float(np.min(limits.acceleration[moving] / span)),
        float(np.min(limits.jerk[moving] / span)),
        dt_s,
    )
    q: np.ndarray = q_from + u[:, None] * delta
    q[-1] = q_to
    return q


def joint_polyline(waypoints: np.ndarray, limits: CommandLimits, dt_s: float) -> np.ndarray:
    """Samples through joint waypoints (m, J), stopping at each (so the path is exactly the polyline).

    Args:
        waypoints: Joint waypoints, shape (m, J), in [rad], or [m] for a prismatic joint.
        limits: Joint velocity, acceleration and jerk limits of every line.
        dt_s: Sampling period, in [s].

    Returns:
        (N + 1, J) joint vectors, the first ``waypoints[0]``, the last ``waypoints[-1]``.
    """
    parts = [waypoints[:1]]
    for a, b in pairwise(waypoints):
        parts.append(joint_line(a, b, limits, dt_s)[1:])
    return np.concatenate(parts)


def scaled(limits: CommandLimits, velocity_scale: float, acceleration_scale: float) -> CommandLimits:
    """Limits with velocity and acceleration scaled down (the planner leaves headroom for tracking).

    Args:
        limits: The commanding limits.
        velocity_scale: Factor on the velocity limits (``planning.joint_velocity_scale``, in (0, 1]).
        acceleration_scale: Factor on the acceleration limits (``planning.joint_acceleration_scale``, in (0, 1]); the
            jerk limits are kept.
    """
    return CommandLimits(
        limits.velocity * velocity_scale,
        limits.acceleration * acceleration_scale,
        limits.jerk,
    )


def limit_ratios(q: np.ndarray, limits: CommandLimits, dt_s: float) -> tuple[float, float]:
    """Largest ratios of sampled joint speed and acceleration to their limits (<= 1: within).

    Args:
        q: (n, J) samples at period ``dt_s`` [rad], at rest before the first and after the last.
        limits: Per-joint limits.
        dt_s: Sample period [s].

    Returns:
        (velocity ratio, acceleration ratio) from finite differences of the samples.
    """
    if len(q) < 2:
        return 0.0, 0.0
    padded = np.concatenate((q[:1], q, q[-1:]))  # at rest outside the samples
    velocity = np.abs(np.diff(q, axis=0)) / dt_s
    acceleration = np.abs(np.diff(padded, 2, axis=0)) / dt_s**2
    return (
        float(np.max(velocity / limits.velocity)),
        float(np.max(acceleration / limits.acceleration)),
    )
