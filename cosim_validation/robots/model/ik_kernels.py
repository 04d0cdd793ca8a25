"""numba kernels of damped-least-squares inverse kinematics for a needle tip.

Task: the tip position (3) plus either the needle axis (2, rotation about the needle is free) or the full
orientation (3). Redundancy is resolved by a nullspace pull towards a reference posture; joint limits are
respected by clamping, locking the joints that push against a limit in the next solve (active set).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from cosim_validation.robots.model.fk_kernels import fk_into, jacobian_into

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
def _task_into(
    J6: np.ndarray,
    tip_pos: np.ndarray,
    tip_R: np.ndarray,
    target_pos: np.ndarray,
    target_R: np.ndarray,
    full: bool,
    A: np.ndarray,
    e: np.ndarray,
) -> tuple[int, float, float]:
    """Task Jacobian into ``A`` (6, J) and error into ``e`` (6,): (rows used m, position error [m], angle [rad]).

    Full orientation: m = 6, the rotation vector of the orientation error. Needle axis only: m = 5, the axis error
    projected on two directions perpendicular to the needle (the roll about it is free).
    """
    nj = J6.shape[1]
    e0 = target_pos[0] - tip_pos[0]
    e1 = target_pos[1] - tip_pos[1]
    e2 = target_pos[2] - tip_pos[2]
    e[0], e[1], e[2] = e0, e1, e2
    for r in range(3):
        for j in range(nj):
            A[r, j] = J6[r, j]
    if full:
        e_w = rotation_log(target_R @ tip_R.T)
        for r in range(3):
            e[3 + r] = e_w[r]
            for j in range(nj):
                A[3 + r, j] = J6[3 + r, j]
        angle = np.sqrt(e_w[0] * e_w[0] + e_w[1] * e_w[1] + e_w[2] * e_w[2])
        return 6, np.sqrt(e0 * e0 + e1 * e1 + e2 * e2), angle
    z0, z1, z2 = tip_R[0, 2], tip_R[1, 2], tip_R[2, 2]
    t0, t1, t2 = target_R[0, 2], target_R[1, 2], target_R[2, 2]
    c0 = z1 * t2 - z2 * t1  # z x z_target: the axis turning the needle onto the target's
    c1 = z2 * t0 - z0 * t2
    c2 = z0 * t1 - z1 * t0
    sin_angle = np.sqrt(c0 * c0 + c1 * c1 + c2 * c2)
    angle = np.arctan2(sin_angle, z0 * t0 + z1 * t1 + z2 * t2)
    # a basis (u, v) perpendicular to the needle: u = z x (a helper axis not along z), v = z x u
    h0, h1 = (1.0, 0.0) if abs(z0) < 0.9 else (0.0, 1.0)
    u0 = -z2 * h1  # z x helper, helper = (h0, h1, 0)
    u1 = z2 * h0
    u2 = z0 * h1 - z1 * h0
    norm_u = np.sqrt(u0 * u0 + u1 * u1 + u2 * u2)
    u0, u1, u2 = u0 / norm_u, u1 / norm_u, u2 / norm_u
    v0 = z1 * u2 - z2 * u1
    v1 = z2 * u0 - z0 * u2
    v2 = z0 * u1 - z1 * u0
    if sin_angle > 1e-12:
        k = angle / sin_angle
        w0, w1, w2 = c0 * k, c1 * k, c2 * k
    elif angle > 1.0:  # opposite: turn about any perpendicular axis
        w0, w1, w2 = u0 * angle, u1 * angle, u2 * angle
    else:
        w0, w1, w2 = 0.0, 0.0, 0.0
    for j in range(nj):
        A[3, j] = u0 * J6[3, j] + u1 * J6[4, j] + u2 * J6[5, j]
        A[4, j] = v0 * J6[3, j] + v1 * J6[4, j] + v2 * J6[5, j]
    e[3] = u0 * w0 + u1 * w1 + u2 * w2
    e[4] = v0 * w0 + v1 * w1 + v2 * w2
    return 5, np.sqrt(e0 * e0 + e1 * e1 + e2 * e2), angle


@njit(cache=True)
def _solve_small(M: np.ndarray, b: np.ndarray, m: int) -> None:
    """Solve M[:m, :m] x = b[:m] in place (x in ``b``, M overwritten): Gaussian elimination, partial pivoting."""
    for k in range(m):
        pivot = k
        for r in range(k + 1, m):
            if abs(M[r, k]) > abs(M[pivot, k]):
                pivot = r
        if pivot != k:
            for c in range(m):
                M[k, c], M[pivot, c] = M[pivot, c], M[k, c]
            b[k], b[pivot] = b[pivot], b[k]
        for r in range(k + 1, m):
            f = M[r, k] / M[k, k]
            if f != 0.0:
                for c in range(k + 1, m):
                    M[r, c] -= f * M[k, c]
                b[r] -= f * b[k]
    for k in range(m - 1, -1, -1):
        total = b[k]
        for c in range(k + 1, m):
            total -= M[k, c] * b[c]
        b[k] = total / M[k, k]


@njit(cache=True)
def _free_gram_into(A: np.ndarray, m: int, locked: np.ndarray, diagonal: float, M: np.ndarray) -> None:
    """M[:m, :m] = A[:m] A[:m]^T over the joints that are not ``locked``, plus ``diagonal`` on the diagonal."""
    for r in range(m):
        for c in range(m):
            total = 0.0
            for j in range(A.shape[1]):
                if not locked[j]:
                    total += A[r, j] * A[c, j]
            M[r, c] = total
        M[r, r] += diagonal


@njit(cache=True)
def _dls_into(
    A: np.ndarray,
    m: int,
    e: np.ndarray,
    dq_null: np.ndarray,
    locked: np.ndarray,
    damping: float,
    M: np.ndarray,
    x: np.ndarray,
    step: np.ndarray,
) -> None:
    """Damped least-squares step with a nullspace term into ``step`` (J,); locked joints do not move.

    ``A[:m]`` is the task Jacobian, ``e[:m]`` the task error; ``M`` (6, 6) and ``x`` (6,) are work space.
    """
    nj = A.shape[1]
    _free_gram_into(A, m, locked, damping * damping, M)  # (A A^T + damping^2 I) x = e
    for r in range(m):
        x[r] = e[r]
    _solve_small(M, x, m)
    for j in range(nj):
        total = 0.0
        if not locked[j]:
            for r in range(m):
                total += A[r, j] * x[r]
        step[j] = total
    # the nullspace projector uses a near-exact pseudo-inverse, so the posture term does not leak into the task
    _free_gram_into(A, m, locked, 1e-12, M)
    for r in range(m):
        total = 0.0
        for j in range(nj):
            if not locked[j]:
                total += A[r, j] * dq_null[j]
        x[r] = total
    _solve_small(M, x, m)
    for j in range(nj):
        if not locked[j]:
            total = 0.0
            for r in range(m):
                total += A[r, j] * x[r]
            step[j] += dq_null[j] - total


@njit(cache=True)
def _limit_push_into(q: np.ndarray, q_lower: np.ndarray, q_upper: np.ndarray, push: np.ndarray) -> None:
    """Write the (J,) nullspace motion away from a limit into ``push``, for joints in the outer 10 % of their range."""
    for j in range(q.shape[0]):
        band = 0.1 * (q_upper[j] - q_lower[j])
        near_lower = q[j] - q_lower[j]
        near_upper = q_upper[j] - q[j]
        push[j] = 0.0
        if near_lower < band:
            push[j] += 0.05 * (band - near_lower)
        if near_upper < band:
            push[j] -= 0.05 * (band - near_upper)


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
    scratch = np.empty((2, 3, 3))
    J6 = np.empty((6, nj))
    A = np.empty((6, nj))
    e = np.empty(6)
    M = np.empty((6, 6))
    x = np.empty(6)
    dq = np.empty(nj)
    dq_null = np.empty(nj)
    locked = np.zeros(nj, dtype=np.bool_)
    err_p = np.inf
    err_r = np.inf
    for it in range(max_iter + 1):
        fk_into(
            q, T_parent_joint, axis_in_joint, joint_type, T_last_tip, joint_pos, joint_axis, tip_pos, tip_R, scratch
        )
        jacobian_into(joint_pos, joint_axis, joint_type, tip_pos, J6)
        m, err_p, err_r = _task_into(J6, tip_pos, tip_R, target_pos, target_R, full_orientation, A, e)
        if (err_p < tol_pos_m and err_r < tol_rot_rad) or it == max_iter:
            return q, err_p, err_r, it
        _limit_push_into(q, q_lower, q_upper, dq_null)
        any_locked = False
        for j in range(nj):
            dq_null[j] += posture_gain * (q_ref[j] - q[j])
            locked[j] = False
        _dls_into(A, m, e, dq_null, locked, damping, M, x, dq)
        for j in range(nj):
            at_lower = q[j] <= q_lower[j] + 1e-12 and dq[j] < 0.0
            at_upper = q[j] >= q_upper[j] - 1e-12 and dq[j] > 0.0
            locked[j] = at_lower or at_upper
            any_locked = any_locked or locked[j]
        if any_locked:
            _dls_into(A, m, e, dq_null, locked, damping, M, x, dq)
        largest = 0.0  # the step's size relative to the largest allowed one (0.25 rad, 0.05 m)
        for j in range(nj):
            allowed = _MAX_STEP_M if joint_type[j] == _PRISMATIC else _MAX_STEP_RAD
            largest = max(largest, abs(dq[j]) / allowed)
        for j in range(nj):
            step = dq[j] / largest if largest > 1.0 else dq[j]
            q[j] = min(max(q[j] + step, q_lower[j]), q_upper[j])
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
