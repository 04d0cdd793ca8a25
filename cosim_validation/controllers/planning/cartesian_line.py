"""Straight-line motion of the needle tip with a constant orientation, sampled and solved by IK."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cosim_validation.controllers.planning.errors import PlanningError
from cosim_validation.controllers.planning.joint_motion import limit_ratios
from cosim_validation.controllers.planning.time_scaling import profile_samples
from cosim_validation.robots.model import CommandLimits
from cosim_validation.robots.model.inverse_kinematics import InverseKinematics

_MAX_RETIMING = 6


@dataclass(frozen=True)
class CartesianLimits:
    """Limits of the tip along a straight line.

    Attributes:
        velocity_m_s: Tip speed [m/s].
        acceleration_m_s2: Tip acceleration [m/s^2].
        jerk_m_s3: Tip jerk [m/s^3].
    """

    velocity_m_s: float
    acceleration_m_s2: float
    jerk_m_s3: float

    def slower(self, factor: float) -> CartesianLimits:
        """Limits for the same path ``factor`` (> 1) times slower.

        Args:
            factor: How many times slower, > 1.
        """
        return CartesianLimits(
            self.velocity_m_s / factor, self.acceleration_m_s2 / factor**2, self.jerk_m_s3 / factor**3
        )


def line_motion(
    ik: InverseKinematics,
    q_start: np.ndarray,
    start_m: np.ndarray,
    end_m: np.ndarray,
    cartesian: CartesianLimits,
    joint_limits: CommandLimits,
    dt_s: float,
    what: str,
) -> np.ndarray:
    """Joint samples moving the tip from ``start_m`` to ``end_m`` on a straight line, orientation fixed.

    The orientation is the one of ``q_start`` (whose tip must be at ``start_m``). The line is sampled at
    ``dt_s`` along a jerk-limited profile; IK follows the samples by continuation. If the sampled joint
    speeds or accelerations exceed ``joint_limits``, the profile is slowed down and solved again.

    Args:
        ik: Solver (its limits are the joint position limits of the motion).
        q_start: (J,) joint vector at the start [rad].
        start_m: (3,) tip position at the start of the line, in base_link [m].
        end_m: (3,) tip position at the end of the line, in base_link [m].
        cartesian: Tip limits along the line.
        joint_limits: Joint limits the samples must respect.
        dt_s: Sample period [s].
        what: Name of the motion, for error messages.

    Returns:
        (N + 1, J) joint vectors, the first ``q_start``.

    Raises:
        PlanningError: ``unreachable`` when IK cannot follow the line within the joint limits.
    """
    R = ik.kinematics.tip_pose(q_start).R
    direction = end_m - start_m
    length = float(np.linalg.norm(direction))
    unit = direction / length if length > 0 else np.zeros(3)
    limits = cartesian
    for _ in range(_MAX_RETIMING):
        s = profile_samples(length, limits.velocity_m_s, limits.acceleration_m_s2, limits.jerk_m_s3, dt_s)
        points = start_m + s[:, None] * unit
        result = ik.track(q_start, points[1:], R, full_orientation=False)
        if not result.converged:
            worst = int(np.argmax(result.position_error_m))
            raise PlanningError(
                f"{what}: the tip cannot follow the straight line within the joint limits "
                f"(error {result.position_error_m[worst] * 1e3:.3f} mm at {s[worst + 1] * 1e3:.1f} of "
                f"{length * 1e3:.1f} mm)",
                "unreachable",
            )
        q = np.concatenate((q_start[None, :], result.q))
        velocity_ratio, acceleration_ratio = limit_ratios(q, joint_limits, dt_s)
        factor = max(velocity_ratio, np.sqrt(acceleration_ratio))
        if factor <= 1.0:
            return q
        limits = limits.slower(1.05 * factor)
    raise PlanningError(f"{what}: joint speed limits cannot be met along the line (near a singularity)", "unreachable")
