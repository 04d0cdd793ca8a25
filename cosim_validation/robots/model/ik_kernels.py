"""numba kernels of damped-least-squares inverse kinematics for a needle tip.

Task: the tip position (3) plus either the needle axis (2, rotation about the needle is free) or the full
orientation (3). Redundancy is resolved by a nullspace pull towards a reference posture; joint limits are
respected by clamping, locking the joints that push against a limit in the next solve (active set).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from cosim_validation.robots.model.fk_kernels import fk_into, jacobian_from_frames

_MAX_STEP_RAD = 0.25  # largest revolute joint change per iteration, keeps the linearisation valid
_MAX_STEP_M = 0.05  # largest prismatic joint change per iteration
_PRISMATIC = 1  # joint_type of a prismatic joint (robot.kinematic_chain)


@njit(cache=True)
def rotation_log(R: np.ndarray) -> np.ndarray:
    """(3,) rotation vector (axis * angle [rad]) of the rotation matrix R (3, 3).

    Args:
        R: A rotation matrix, shape (3, 3).

    Returns:
        The rotation vector, shape (3,), its norm the angle in [rad], in [0, pi].
    """
    cos_angle = min(1.0, max(-1.0, 0.5 * (R[0, 0] + R[1, 1] + R[2, 2] - 1.0)))
    angle = np.arccos(cos_angle)
    w = np.array([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]])
    out: np.ndarray
    if angle < 1e-9:
        out = 0.5 * w
    elif angle < np.pi - 1e-6:
        out = angle / (2.0 * np.sin(angle)) * w
    else:  # near pi: axis from the diagonal of (R + I) / 2 = a a^T
        k = np.argmax(np.array([R[0, 0], R[1, 1], R[2, 2]]))
        out = angle * (R[:, k] + np.eye(3)[:, k]) / np.sqrt(2.0 * (1.0 + R[k, k]))
    return out


@njit(cache=True)
def _perpendicular_basis(z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    helper = np.array([1.0, 0.0, 0.0]) if abs(z[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    u = np.cross(z, helper)
    u /= np.sqrt(np.sum(u * u))
    return u, np.cross(z, u)


@njit(cache=True)
def _axis_error(z: np.ndarray, z_target: np.ndarray) -> tuple[np.ndarray, float]:
    """Rotation vector turning z onto z_target (3,) and its angle [rad]."""
    c = np.cross(z, z_target)
    s = np.sqrt(np.sum(c * c))
    angle = np.arctan2(s, np.dot(z, z_target))
    if s > 1e-12:
        return c * (angle / s), angle
    if angle > 1.0:  # opposite: any perpendicular axis
        u, _ = _perpendicular_basis(z)
        return u * angle, angle
    return np.zeros(3), angle


@njit(cache=True)
def _task(
    J6: np.ndarray, tip_pos: np.ndarray, tip_R: np.ndarray, target_pos: np.ndarray, target_R: np.ndarray, full: bool
) -> tuple[np.ndarray, np.ndarray, float, float]:
    """Task Jacobian (m, J), error (m,), position error [m] and orientation error [rad]."""
    e_p = target_pos - tip_pos
    if full:
        e_w = rotation_log(target_R @ tip_R.T)
        angle = np.sqrt(np.sum(e_w * e_w))
        A = J6.copy()
        e = np.concatenate((e_p, e_w))
    else:
        z = np.ascontiguousarray(tip_R[:, 2])
        e_w, angle = _axis_error(z, np.ascontiguousarray(target_R[:, 2]))
        u, v = _perpendicular_basis(z)
        A = np.empty((5, J6.shape[1]))
        A[:3] = J6[:3]
        A[3] = u @ J6[3:]
        A[4] = v @ J6[3:]
        e = np.concatenate((e_p, np.array([np.dot(u, e_w), np.dot(v, e_w)])))
    return A, e, np.sqrt(np.sum(e_p * e_p)), angle


@njit(cache=True)
def _dls_step(A: np.ndarray, e: np.ndarray, dq_null: np.ndarray, locked: np.ndarray, damping: float) -> np.ndarray:
    """Damped least-squares step with a nullspace term; locked joints do not move."""
    A = A.copy()
    dq_null = dq_null.copy()
    for j in range(A.shape[1]):
        if locked[j]:
            A[:, j] = 0.0
            dq_null[j] = 0.0
    eye = np.eye(A.shape[0])
    dq = A.T @ np.linalg.solve(A @ A.T + damping * damping * eye, e)
    # the nullspace projector uses a near-exact pseudo-inverse, so the posture term does not leak into the task
    projected = dq_null - A.T @ np.linalg.solve(A @ A.T + 1e-12 * eye, A @ dq_null)
    step: np.ndarray = dq + projected
    return step


@njit(cache=True)
def _limit_push(q: np.ndarray, q_lower: np.ndarray, q_upper: np.ndarray) -> np.ndarray:
    """(J,) nullspace motion away from a limit, for joints within the outer 10 % of their range [rad]."""
    push = np.zeros(q.shape[0])
    for j in range(q.shape[0]):
        band = 0.1 * (q_upper[j] - q_lower[j])
        near_lower = q[j] - q_lower[j]
        near_upper = q_upper[j] - q[j]
        if near_lower < band:
            push[j] += 0.05 * (band - near_lower)
        if near_upper < band:
            push[j] -= 0.05 * (band - near_upper)
    return push


@njit(cache=True)
def solve_ik(
    q_init: np.ndarray,
    target_pos: np.ndarray,
    target_R: np.ndarray,
    full_orientation: bool,
    q_ref: np.ndarray,
    q_lower: np.ndarray,
    q_upper: np.ndarray,
    T_parent_joint: np.ndarray,
    axis_in_joint: np.ndarray,
    joint_type: np.ndarray,
    T_last_tip: np.ndarray,
    max_iter: int,
    tol_pos_m: float,
    tol_rot_rad: float,
    posture_gain: float,
    damping: float,
) -> tuple[np.ndarray, float, float, int]:
    """Iterate to a joint vector whose tip meets the target.

    Args:
        q_init: (J,) start [rad, or m for a prismatic joint].
        target_pos: (3,) tip position in base_link [m].
        target_R: (3, 3) target orientation; only column 2 (needle axis) is used unless ``full_orientation``.
        full_orientation: Meet the whole target orientation, not only the needle axis.
        q_ref: (J,) posture pulled towards in the nullspace [rad, or m].
        q_lower: (J,) lower limits the solution stays within [rad, or m].
        q_upper: (J,) upper limits the solution stays within [rad, or m].
        T_parent_joint: (J, 4, 4) joint placements at zero joint value, translations in [m] (see
            :func:`fk_kernels.fk_into`).
        axis_in_joint: (J, 3) joint axes in their own frames.
        joint_type: (J,) 0 revolute, 1 prismatic (see :func:`fk_kernels.fk_into`).
        T_last_tip: (4, 4) tip frame in the last joint frame, translation in [m].
        max_iter: Largest number of iterations.
        tol_pos_m: Converged when the tip is this close to the target [m].
        tol_rot_rad: ... and the needle axis (or orientation) within this angle [rad].
        posture_gain: Fraction of (q_ref - q) applied per iteration in the nullspace.
        damping: Damping of the least-squares solve [m].

    Returns:
        q (J,), final position error [m], final orientation error [rad], iterations used.
    """
    nj = q_init.shape[0]
    q = np.minimum(np.maximum(q_init, q_lower), q_upper)
    joint_pos = np.empty((nj, 3))
    joint_axis = np.empty((nj, 3))
    tip_pos = np.empty(3)
    tip_R = np.empty((3, 3))
    err_p = np.inf
    err_r = np.inf
    for it in range(max_iter + 1):
        fk_into(q, T_parent_joint, axis_in_joint, joint_type, T_last_tip, joint_pos, joint_axis, tip_pos, tip_R)
        J6 = jacobian_from_frames(joint_pos, joint_axis, joint_type, tip_pos)
        A, e, err_p, err_r = _task(J6, tip_pos, tip_R, target_pos, target_R, full_orientation)
        if (err_p < tol_pos_m and err_r < tol_rot_rad) or it == max_iter:
            return q, err_p, err_r, it
        dq_null = posture_gain * (q_ref - q) + _limit_push(q, q_lower, q_upper)
        locked = np.zeros(nj, dtype=np.bool_)
        dq = _dls_step(A, e, dq_null, locked, damping)
        for j in range(nj):
            at_lower = q[j] <= q_lower[j] + 1e-12 and dq[j] < 0.0
            at_upper = q[j] >= q_upper[j] - 1e-12 and dq[j] > 0.0
            locked[j] = at_lower or at_upper
        if locked.any():
            dq = _dls_step(A, e, dq_null, locked, damping)
        largest = 0.0  # the step's size relative to the largest allowed one (0.25 rad, 0.05 m)
        for j in range(nj):
            allowed = _MAX_STEP_M if joint_type[j] == _PRISMATIC else _MAX_STEP_RAD
            largest = max(largest, abs(dq[j]) / allowed)
        if largest > 1.0:
            dq /= largest
        q = np.minimum(np.maximum(q + dq, q_lower), q_upper)
    return q, err_p, err_r, max_iter


@njit(cache=True)
def track_poses(
    q_start: np.ndarray,
    target_pos: np.ndarray,
    target_R: np.ndarray,
    full_orientation: bool,
    q_lower: np.ndarray,
    q_upper: np.ndarray,
    T_parent_joint: np.ndarray,
    axis_in_joint: np.ndarray,
    joint_type: np.ndarray,
    T_last_tip: np.ndarray,
    max_iter: int,
    tol_pos_m: float,
    tol_rot_rad: float,
    posture_gain: float,
    damping: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Follow n tip poses by continuation: each solve starts from, and is pulled towards, the previous one.

    Args:
        q_start: (J,) joint vector at (or near) the first pose [rad, or m for a prismatic joint].
        target_pos: (n, 3) tip positions in base_link [m].
        target_R: (n, 3, 3) orientations (column 2 = needle axis).
        full_orientation: Meet the whole target orientations, not only the needle axes.
        q_lower: (J,) lower limits the solutions stay within [rad, or m].
        q_upper: (J,) upper limits the solutions stay within [rad, or m].
        T_parent_joint: (J, 4, 4) joint placements at zero joint value, translations in [m] (see
            :func:`fk_kernels.fk_into`).
        axis_in_joint: (J, 3) joint axes in their own frames.
        joint_type: (J,) 0 revolute, 1 prismatic.
        T_last_tip: (4, 4) tip frame in the last joint frame, translation in [m].
        max_iter: Largest number of iterations per pose.
        tol_pos_m: Converged when the tip is this close to the target [m].
        tol_rot_rad: ... and the needle axis (or orientation) within this angle [rad].
        posture_gain: Fraction of the distance to the previous solution closed per iteration, in the nullspace.
        damping: Damping of the least-squares solve [m].

    Returns:
        q (n, J) [rad, or m], position errors (n,) [m], orientation errors (n,) [rad].
    """
    n = target_pos.shape[0]
    out = np.empty((n, q_start.shape[0]))
    err_p = np.empty(n)
    err_r = np.empty(n)
    q = q_start.copy()
    for i in range(n):
        q, err_p[i], err_r[i], _ = solve_ik(
            q,
            target_pos[i],
            target_R[i],
            full_orientation,
            q,
            q_lower,
            q_upper,
            T_parent_joint,
            axis_in_joint,
            joint_type,
            T_last_tip,
            max_iter,
            tol_pos_m,
            tol_rot_rad,
            posture_gain,
            damping,
        )
        out[i] = q
    return out, err_p, err_r
