"""Resolved-rate motion of the needle tip: one damped-least-squares step towards a 5-DOF goal (numpy only).

The task is the tip position (3) and the needle direction (2): rotation about the needle is free. The two
orientation rows are the angular-velocity rows of the geometric Jacobian projected on the tip frame's x and y
axes. A step asks for the whole remaining error in one control period, limited to a tip speed and an angular
speed, maps it to the joints with the damped pseudo-inverse (Nakamura and Hanafusa, "Inverse kinematic solutions
with singularity robustness for robot manipulator control", J. Dyn. Sys. Meas. Control 108(3), 1986), adds a
null-space pull towards a rest posture, scales the joint step to the joint velocity limits and clips it into the
joint limits minus a margin.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cosim_controller_example.urdf_chain import UrdfChain


@dataclass(frozen=True)
class RateLimits:
    """Limits of one resolved-rate step.

    Attributes:
        dt_s: Control period [s].
        tip_speed_m_s: Largest tip speed asked for [m/s].
        turn_speed_rad_s: Largest needle turning speed asked for [rad/s].
        joint_speed: (J,) largest joint speeds [rad/s] (the arm's commanding limits times a headroom factor).
        margin: Joint positions stay this far inside the URDF limits [rad].
        damping: Damping of the pseudo-inverse [m] (a few mm: small steps near singularities).
        posture_gain: Fraction of the distance to the rest posture taken per step in the null space.
    """

    dt_s: float
    tip_speed_m_s: float
    turn_speed_rad_s: float
    joint_speed: np.ndarray
    margin: float = 0.02
    damping: float = 0.005
    posture_gain: float = 0.05


@dataclass(frozen=True)
class PoseError:
    """How far the tip is from a 5-DOF goal: ``position_m`` [m] and ``angle_rad`` between needle axes [rad]."""

    position_m: float
    angle_rad: float

    def within(self, position_m: float, angle_rad: float) -> bool:
        """Whether both errors are at most the tolerances."""
        return self.position_m <= position_m and self.angle_rad <= angle_rad


def pose_error(chain: UrdfChain, q: np.ndarray, goal_m: np.ndarray, axis: np.ndarray) -> PoseError:
    """The tip's distance from ``goal_m`` and the angle between the needle and the unit ``axis`` at ``q``."""
    p, R = chain.tip(q)
    cos = float(np.clip(R[:, 2] @ axis, -1.0, 1.0))
    return PoseError(float(np.linalg.norm(goal_m - p)), float(np.arccos(cos)))


def resolved_rate_step(
    chain: UrdfChain, q: np.ndarray, goal_m: np.ndarray, axis: np.ndarray, limits: RateLimits, rest: np.ndarray
) -> np.ndarray:
    """The joint vector one control period from ``q`` towards the tip at ``goal_m`` with the needle along ``axis``.

    Args:
        chain: The arm's kinematics.
        q: (J,) current joint vector.
        goal_m: (3,) goal tip position [m].
        axis: (3,) unit goal needle direction.
        limits: Speeds, joint limits margin, damping.
        rest: (J,) posture the null-space motion pulls towards.

    Returns:
        (J,) the next joint vector, within the joint limits minus ``limits.margin``.
    """
    p, R = chain.tip(q)
    jac = chain.jacobian(q)
    task = np.vstack([jac[:3], R[:, 0] @ jac[3:], R[:, 1] @ jac[3:]])
    turn = _rotation_vector(R[:, 2], axis)
    move = _limited(goal_m - p, limits.tip_speed_m_s * limits.dt_s)
    twist = _limited(np.array([R[:, 0] @ turn, R[:, 1] @ turn]), limits.turn_speed_rad_s * limits.dt_s)
    error = np.concatenate([move, twist])
    lower, upper = chain.lower + limits.margin, chain.upper - limits.margin
    free = np.ones(chain.n_joints, bool)
    locked = np.zeros(chain.n_joints)  # the motion of the joints held at a limit
    for _ in range(chain.n_joints):
        dq = locked + _damped_step(task * free, error - task @ locked, rest - q, limits) * free
        dq = _speed_limited(dq, limits)
        outside = free & ((q + dq < lower) | (q + dq > upper))
        if not outside.any():
            break
        # a joint that would leave its limits stops on them; the others take over its share of the task
        locked[outside] = np.clip(q + dq, lower, upper)[outside] - q[outside]
        free &= ~outside
    q_next: np.ndarray = np.clip(q + dq, lower, upper)
    return q_next


def _damped_step(task: np.ndarray, error: np.ndarray, towards_rest: np.ndarray, limits: RateLimits) -> np.ndarray:
    """Damped least-squares joint step for the task ``error``, plus a null-space pull towards the rest posture."""
    gram = task @ task.T + limits.damping**2 * np.eye(task.shape[0])
    pinv = task.T @ np.linalg.inv(gram)
    null = np.eye(task.shape[1]) - pinv @ task
    step: np.ndarray = pinv @ error + null @ (limits.posture_gain * towards_rest)
    return step


def _speed_limited(dq: np.ndarray, limits: RateLimits) -> np.ndarray:
    ratio = float(np.max(np.abs(dq) / (limits.joint_speed * limits.dt_s)))
    return dq / ratio if ratio > 1.0 else dq


def _rotation_vector(current: np.ndarray, goal: np.ndarray) -> np.ndarray:
    """The rotation vector [rad] turning the unit ``current`` onto the unit ``goal`` (shortest way)."""
    cross = np.cross(current, goal)
    sin = float(np.linalg.norm(cross))
    angle = float(np.arctan2(sin, float(current @ goal)))
    if sin < 1e-12:  # aligned, or opposite: any perpendicular turns it
        if angle < 1e-6:
            return np.zeros(3)
        cross = np.cross(current, [1.0, 0.0, 0.0] if abs(current[0]) < 0.9 else [0.0, 1.0, 0.0])
        sin = float(np.linalg.norm(cross))
    return cross / sin * angle


def _limited(v: np.ndarray, largest: float) -> np.ndarray:
    norm = float(np.linalg.norm(v))
    return v if norm <= largest else v * (largest / norm)
