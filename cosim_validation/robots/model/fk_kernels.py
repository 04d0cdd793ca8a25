"""numba kernels of serial-chain forward kinematics, the tip Jacobian and rotation helpers.

The chain is given as arrays (see :class:`~cosim_validation.robots.model.kinematic_chain.KinematicChain`):
joint placements ``T_parent_joint`` (J, 4, 4), joint axes ``axis_in_joint`` (J, 3), joint types
``joint_type`` (J,) (0 revolute: q in rad turns about the axis; 1 prismatic: q in m slides along it) and the
tool placement ``T_last_tip`` (4, 4) in the last joint frame. Every output is in base_link.
"""

from __future__ import annotations

import numpy as np
from numba import njit

#: ``joint_type`` value of a prismatic joint (see :mod:`cosim_validation.robots.model.kinematic_chain`).
_PRISMATIC = 1


@njit(cache=True)
def _axis_angle_into(axis: np.ndarray, angle: float, R: np.ndarray) -> None:
    """Write the rotation by ``angle`` [rad] about the unit ``axis`` (3,) into ``R`` (3, 3) (Rodrigues)."""
    c = np.cos(angle)
    s = np.sin(angle)
    t = 1.0 - c
    x, y, z = axis[0], axis[1], axis[2]
    R[0, 0] = c + x * x * t
    R[0, 1] = x * y * t - z * s
    R[0, 2] = x * z * t + y * s
    R[1, 0] = y * x * t + z * s
    R[1, 1] = c + y * y * t
    R[1, 2] = y * z * t - x * s
    R[2, 0] = z * x * t - y * s
    R[2, 1] = z * y * t + x * s
    R[2, 2] = c + z * z * t


@njit(cache=True)
def _rotate_by(R: np.ndarray, B: np.ndarray, work: np.ndarray) -> None:
    """R <- R @ B for (3, 3) matrices (B may be a view), through ``work`` (3, 3); no allocation."""
    for i in range(3):
        for j in range(3):
            work[i, j] = R[i, 0] * B[0, j] + R[i, 1] * B[1, j] + R[i, 2] * B[2, j]
    R[:, :] = work


@njit(cache=True)
def fk_into(
    q: np.ndarray,
    T_parent_joint: np.ndarray,
    axis_in_joint: np.ndarray,
    joint_type: np.ndarray,
    T_last_tip: np.ndarray,
    joint_pos: np.ndarray,
    joint_axis: np.ndarray,
    tip_pos: np.ndarray,
    tip_R: np.ndarray,
    scratch: np.ndarray,
) -> None:
    """Forward kinematics of one joint vector, written into the output arrays; no allocation (an iterative loop's).

    Args:
        q: (J,) joint values [rad, or m for a prismatic joint].
        T_parent_joint: (J, 4, 4) joint placements at zero joint value.
        axis_in_joint: (J, 3) joint axes in their own frames.
        joint_type: (J,) int64, 0 revolute, 1 prismatic.
        T_last_tip: (4, 4) tip frame in the last joint frame.
        joint_pos: (J, 3) out: joint origins in base_link [m] (a prismatic joint's before its travel).
        joint_axis: (J, 3) out: unit joint axes in base_link.
        tip_pos: (3,) out: tip position in base_link [m].
        tip_R: (3, 3) out: tip orientation (columns = tip axes in base_link).
        scratch: (2, 3, 3) work space, overwritten.
    """
    R = tip_R  # the running rotation lives in the output until the tool is added
    R[:, :] = 0.0
    R[0, 0] = R[1, 1] = R[2, 2] = 1.0
    p = tip_pos
    p[:] = 0.0
    work, turn = scratch[0], scratch[1]
    for j in range(q.shape[0]):
        P = T_parent_joint[j]
        for i in range(3):
            p[i] += R[i, 0] * P[0, 3] + R[i, 1] * P[1, 3] + R[i, 2] * P[2, 3]
        joint_pos[j] = p
        _rotate_by(R, P[:3, :3], work)
        a = axis_in_joint[j]
        for i in range(3):
            joint_axis[j, i] = R[i, 0] * a[0] + R[i, 1] * a[1] + R[i, 2] * a[2]
        if joint_type[j] == _PRISMATIC:
            for i in range(3):
                p[i] += q[j] * joint_axis[j, i]
        else:
            _axis_angle_into(a, q[j], turn)
            _rotate_by(R, turn, work)
    T = T_last_tip
    for i in range(3):
        p[i] += R[i, 0] * T[0, 3] + R[i, 1] * T[1, 3] + R[i, 2] * T[2, 3]
    _rotate_by(R, T[:3, :3], work)


@njit(cache=True)
def jacobian_into(
    joint_pos: np.ndarray, joint_axis: np.ndarray, joint_type: np.ndarray, tip_pos: np.ndarray, J: np.ndarray
) -> None:
    """Write the (6, J) geometric Jacobian of the tip into ``J`` (see :func:`jacobian_from_frames`).

    Args:
        joint_pos: Joint origins o_j in base_link, shape (J, 3), in [m].
        joint_axis: Unit joint axes a_j in base_link, shape (J, 3).
        joint_type: Shape (J,), 0 revolute, 1 prismatic.
        tip_pos: The tip p_tip in base_link, shape (3,), in [m].
        J: Out: shape (6, J).
    """
    for j in range(joint_pos.shape[0]):
        a = joint_axis[j]
        if joint_type[j] == _PRISMATIC:
            J[0, j] = a[0]
            J[1, j] = a[1]
            J[2, j] = a[2]
            J[3, j] = 0.0
            J[4, j] = 0.0
            J[5, j] = 0.0
            continue
        r0 = tip_pos[0] - joint_pos[j, 0]
        r1 = tip_pos[1] - joint_pos[j, 1]
        r2 = tip_pos[2] - joint_pos[j, 2]
        J[0, j] = a[1] * r2 - a[2] * r1
        J[1, j] = a[2] * r0 - a[0] * r2
        J[2, j] = a[0] * r1 - a[1] * r0
        J[3, j] = a[0]
        J[4, j] = a[1]
        J[5, j] = a[2]


@njit(cache=True)
def jacobian_from_frames(
    joint_pos: np.ndarray, joint_axis: np.ndarray, joint_type: np.ndarray, tip_pos: np.ndarray
) -> np.ndarray:
    """(6, J) geometric Jacobian of the tip, rows (v, omega) in base_link axes.

    Column j is ``(a_j x (p_tip - o_j), a_j)`` for a revolute joint and ``(a_j, 0)`` for a prismatic one: tip linear
    velocity [m/s] and angular velocity [rad/s] per unit joint rate [rad/s, or m/s] (pinocchio's LOCAL_WORLD_ALIGNED
    convention).

    Args:
        joint_pos: Joint origins o_j in base_link, shape (J, 3), in [m].
        joint_axis: Unit joint axes a_j in base_link, shape (J, 3).
        joint_type: Shape (J,), 0 revolute, 1 prismatic.
        tip_pos: The tip p_tip in base_link, shape (3,), in [m].
    """
    J = np.empty((6, joint_pos.shape[0]))
    jacobian_into(joint_pos, joint_axis, joint_type, tip_pos, J)
    return J


@njit(cache=True)
def matrix_to_quat_wxyz(R: np.ndarray) -> np.ndarray:
    """(4,) unit quaternion (w, x, y, z) with w >= 0 of the rotation matrix R (3, 3).

    Args:
        R: Rotation matrix, shape (3, 3), float64 (proper orthonormal).
    """
    q = np.empty(4)
    tr = R[0, 0] + R[1, 1] + R[2, 2]
    if tr > 0.0:
        s = 2.0 * np.sqrt(tr + 1.0)
        q[0] = 0.25 * s
        q[1] = (R[2, 1] - R[1, 2]) / s
        q[2] = (R[0, 2] - R[2, 0]) / s
        q[3] = (R[1, 0] - R[0, 1]) / s
    elif R[0, 0] > R[1, 1] and R[0, 0] > R[2, 2]:
        s = 2.0 * np.sqrt(1.0 + R[0, 0] - R[1, 1] - R[2, 2])
        q[0] = (R[2, 1] - R[1, 2]) / s
        q[1] = 0.25 * s
        q[2] = (R[0, 1] + R[1, 0]) / s
        q[3] = (R[0, 2] + R[2, 0]) / s
    elif R[1, 1] > R[2, 2]:
        s = 2.0 * np.sqrt(1.0 + R[1, 1] - R[0, 0] - R[2, 2])
        q[0] = (R[0, 2] - R[2, 0]) / s
        q[1] = (R[0, 1] + R[1, 0]) / s
        q[2] = 0.25 * s
        q[3] = (R[1, 2] + R[2, 1]) / s
    else:
        s = 2.0 * np.sqrt(1.0 + R[2, 2] - R[0, 0] - R[1, 1])
        q[0] = (R[1, 0] - R[0, 1]) / s
        q[1] = (R[0, 2] + R[2, 0]) / s
        q[2] = (R[1, 2] + R[2, 1]) / s
        q[3] = 0.25 * s
    if q[0] < 0.0:
        q = -q
    unit: np.ndarray = q / np.sqrt(np.sum(q * q))
    return unit


@njit(cache=True)
def fk_batch(
    q: np.ndarray, T_parent_joint: np.ndarray, axis_in_joint: np.ndarray, joint_type: np.ndarray, T_last_tip: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Forward kinematics of n joint vectors.

    Args:
        q: (n, J) joint values [rad, or m for a prismatic joint].
        T_parent_joint: (J, 4, 4) joint placements at zero joint value, translations in [m].
        axis_in_joint: (J, 3) joint axes in their own frames.
        joint_type: (J,) 0 revolute, 1 prismatic.
        T_last_tip: (4, 4) tip frame in the last joint frame, translation in [m].

    Returns:
        joint_pos (n, J, 3) [m], joint_axis (n, J, 3), tip_pos (n, 3) [m], tip_R (n, 3, 3),
        tip_quat_wxyz (n, 4); all in base_link.
    """
    n, nj = q.shape
    joint_pos = np.empty((n, nj, 3))
    joint_axis = np.empty((n, nj, 3))
    tip_pos = np.empty((n, 3))
    tip_R = np.empty((n, 3, 3))
    tip_quat = np.empty((n, 4))
    scratch = np.empty((2, 3, 3))
    for i in range(n):
        fk_into(
            q[i],
            T_parent_joint,
            axis_in_joint,
            joint_type,
            T_last_tip,
            joint_pos[i],
            joint_axis[i],
            tip_pos[i],
            tip_R[i],
            scratch,
        )
        tip_quat[i] = matrix_to_quat_wxyz(tip_R[i])
    return joint_pos, joint_axis, tip_pos, tip_R, tip_quat


@njit(cache=True)
def link_points_batch(
    q: np.ndarray,
    T_parent_joint: np.ndarray,
    axis_in_joint: np.ndarray,
    joint_type: np.ndarray,
    point_joint: np.ndarray,
    point_local: np.ndarray,
) -> np.ndarray:
    """Positions in base_link of points fixed to the links, for n joint vectors.

    Args:
        q: (n, J) joint values [rad, or m for a prismatic joint].
        T_parent_joint: (J, 4, 4) joint placements at zero joint value, translations in [m].
        axis_in_joint: (J, 3) joint axes in their own frames.
        joint_type: (J,) 0 revolute, 1 prismatic.
        point_joint: (P,) int, the joint whose child link carries each point (0 = base_link, j = after joint j).
        point_local: (P, 3) the points in their link frame [m].

    Returns:
        (n, P, 3) points in base_link [m].
    """
    n, nj = q.shape
    out = np.empty((n, point_local.shape[0], 3))
    frames_R = np.empty((nj + 1, 3, 3))
    frames_p = np.empty((nj + 1, 3))
    R = np.empty((3, 3))
    p = np.empty(3)
    axis = np.empty(3)
    work = np.empty((3, 3))
    turn = np.empty((3, 3))
    for i in range(n):
        R[:, :] = 0.0
        R[0, 0] = R[1, 1] = R[2, 2] = 1.0
        p[:] = 0.0
        frames_R[0] = R
        frames_p[0] = p
        for j in range(nj):
            P = T_parent_joint[j]
            for r in range(3):
                p[r] += R[r, 0] * P[0, 3] + R[r, 1] * P[1, 3] + R[r, 2] * P[2, 3]
            _rotate_by(R, P[:3, :3], work)
            a = axis_in_joint[j]
            if joint_type[j] == _PRISMATIC:
                for r in range(3):
                    axis[r] = R[r, 0] * a[0] + R[r, 1] * a[1] + R[r, 2] * a[2]
                for r in range(3):
                    p[r] += q[i, j] * axis[r]
            else:
                _axis_angle_into(a, q[i, j], turn)
                _rotate_by(R, turn, work)
            frames_R[j + 1] = R
            frames_p[j + 1] = p
        for k in range(point_local.shape[0]):
            j = point_joint[k]
            Rj = frames_R[j]
            x = point_local[k]
            for r in range(3):
                out[i, k, r] = frames_p[j, r] + (Rj[r, 0] * x[0] + Rj[r, 1] * x[1] + Rj[r, 2] * x[2])
    return out
