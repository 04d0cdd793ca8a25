"""Time parametrisation of a path given as joint waypoints (a planner that returns only a path, e.g. MoveIt).

The path is re-timed the way :class:`~.five_stage_planner.FiveStagePlanner` times its own motions: a jerk-limited
rest-to-rest profile of a path parameter (:func:`~.time_scaling.profile_samples`), sampled at the sampling period,
slowed down until the sampled joint speeds and accelerations are within the limits (as :func:`~.cartesian_line.
line_motion` does). The joints are interpolated linearly between waypoints, so the timed motion stays on the path.
"""

from __future__ import annotations

from itertools import pairwise

import numpy as np

from cosim_validation.controllers.planning.cartesian_line import CartesianLimits
from cosim_validation.controllers.planning.errors import PlanningError
from cosim_validation.controllers.planning.joint_motion import limit_ratios
from cosim_validation.controllers.planning.time_scaling import profile_samples
from cosim_validation.robots.model import CommandLimits

_MAX_RETIMING = 8
_CORNER_COS = float(np.cos(np.radians(15.0)))  # a joint path turning more than 15 deg stops at the corner


def _along(waypoints: np.ndarray, nodes: np.ndarray, s: np.ndarray) -> np.ndarray:
    """Joint vectors (len(s), J) at path parameters ``s`` (linear between the waypoints at ``nodes``)."""
    return np.column_stack([np.interp(s, nodes, waypoints[:, j]) for j in range(waypoints.shape[1])])


def _retimed(
    waypoints: np.ndarray, nodes: np.ndarray, limits: CartesianLimits, joint_limits: CommandLimits, dt_s: float
) -> np.ndarray:
    """(N + 1, J) samples along ``waypoints`` whose parameter ``nodes`` follows a profile within ``limits``."""
    for _ in range(_MAX_RETIMING):
        s = profile_samples(float(nodes[-1]), limits.velocity_m_s, limits.acceleration_m_s2, limits.jerk_m_s3, dt_s)
        q = _along(waypoints, nodes, s)
        q[0], q[-1] = waypoints[0], waypoints[-1]
        velocity_ratio, acceleration_ratio = limit_ratios(q, joint_limits, dt_s)
        factor = max(velocity_ratio, float(np.sqrt(acceleration_ratio)))
        if factor <= 1.0:
            return q
        limits = limits.slower(1.05 * factor)
    raise PlanningError("the path cannot be timed within the joint speed limits", "unreachable")


def _distinct(waypoints: np.ndarray) -> np.ndarray:
    """The waypoints without repeats (a planner may return a state twice)."""
    keep = np.concatenate(([True], np.any(np.abs(np.diff(waypoints, axis=0)) > 1e-12, axis=1)))
    return waypoints[keep]


def time_joint_path(waypoints: np.ndarray, joint_limits: CommandLimits, dt_s: float) -> np.ndarray:
    """Samples at ``dt_s`` along a joint path (m, J), rest to rest, stopping at its sharp corners.

    Args:
        waypoints: (m, J) joint vectors of the path [rad], m >= 1.
        joint_limits: Per-joint limits of the motion.
        dt_s: Sample period [s].

    Returns:
        (N + 1, J) joint vectors, the first ``waypoints[0]``, the last ``waypoints[-1]``.
    """
    path = _distinct(np.asarray(waypoints, dtype=np.float64))
    if len(path) < 2:
        return np.stack([path[0], path[0]])
    steps = np.diff(path, axis=0)
    lengths = np.linalg.norm(steps, axis=1)
    units = steps / lengths[:, None]
    turns = np.flatnonzero(np.einsum("ij,ij->i", units[:-1], units[1:]) < _CORNER_COS) + 1
    bounds = [0, *turns.tolist(), len(path) - 1]
    parts = [path[:1]]
    for start, end in pairwise(bounds):
        part = path[start : end + 1]
        nodes = np.concatenate(([0.0], np.cumsum(np.linalg.norm(np.diff(part, axis=0), axis=1))))
        units_part = np.abs(np.diff(part, axis=0)) / np.diff(nodes)[:, None]
        worst = np.max(units_part, axis=0)  # largest joint rate per unit of path
        moving = worst > 1e-12
        limits = CartesianLimits(
            float(np.min(joint_limits.velocity[moving] / worst[moving])),
            float(np.min(joint_limits.acceleration[moving] / worst[moving])),
            float(np.min(joint_limits.jerk[moving] / worst[moving])),
        )
        parts.append(_retimed(part, nodes, limits, joint_limits, dt_s)[1:])
    return np.concatenate(parts)


def time_tip_path(
    waypoints: np.ndarray, tip_m: np.ndarray, tip_limits: CartesianLimits, joint_limits: CommandLimits, dt_s: float
) -> np.ndarray:
    """Samples at ``dt_s`` along a Cartesian path, the tip within ``tip_limits`` along its arc length.

    Args:
        waypoints: (m, J) joint vectors of the path [rad] (e.g. MoveIt's Cartesian path), m >= 1.
        tip_m: (m, 3) the tip position of each waypoint, in base_link [m].
        tip_limits: Tip speed, acceleration and jerk along the path.
        joint_limits: Per-joint limits the samples must respect (the profile is slowed down until they do).
        dt_s: Sample period [s].

    Returns:
        (N + 1, J) joint vectors, the first ``waypoints[0]``, the last ``waypoints[-1]``.
    """
    path = np.asarray(waypoints, dtype=np.float64)
    nodes = np.concatenate(([0.0], np.cumsum(np.linalg.norm(np.diff(tip_m, axis=0), axis=1))))
    keep = np.concatenate(([True], np.diff(nodes) > 1e-9))
    path, nodes = path[keep], nodes[keep]
    if len(path) < 2:
        return np.stack([path[0], path[-1]])
    return _retimed(path, nodes, tip_limits, joint_limits, dt_s)
