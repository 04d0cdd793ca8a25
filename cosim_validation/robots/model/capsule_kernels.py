"""Capsule clearance in numba: the broad phase of the arm's self-collision check.

A capsule (segment p-q with radius r) contains the cylinder of the same axis and radius, so the distance
between two capsules is a lower bound of the distance between the cylinders they stand for: a configuration
whose capsules all keep apart is free of self-collision without asking MuJoCo.

Along a trajectory most configurations need no geometry at all. Turning joint k by Δ moves every point
distal to it by at most R_k ``|Δ|``, R_k a bound of the point's distance from the joint's origin (the sum of the
chain's offsets from joint k to the point's frame, each with the largest travel of a prismatic joint between,
plus the point's offset in that frame: triangle inequality, whatever the other joints do); sliding a prismatic
joint by Δ moves every distal point by exactly ``|Δ|`` (R_k = 1). Two capsules that are both distal to joint k
turn together and keep their distance; otherwise one of them moves relative to the other. Going from q to q'
one joint at a time therefore changes the smallest clearance by at most Σ_k R_k ``|q'_k - q_k|``, and a sample
within that reach of the last computed one (an anchor) whose clearance exceeded the threshold by more is free.

Closest points of two segments: minimise ``|p1 + s d1 - (p2 + t d2)|²`` over s, t in [0, 1]. The unconstrained
minimiser in s for the infinite lines is clamped to [0, 1], then t follows from s and is clamped, and s is
recomputed from the clamped t (the standard construction, e.g. C. Ericson, *Real-Time Collision Detection*,
2005, section 5.1.9); degenerate segments (points) and parallel ones are handled separately.
"""

from __future__ import annotations

import numpy as np
from numba import njit

_PRISMATIC = 1  # joint_type of a prismatic joint (robot.kinematic_chain)

#: Squared length below which a segment counts as a point [m²].
DEGENERATE_M2 = 1e-24


@njit(cache=True, inline="always")
def _clamp01(x: float) -> float:
    return 0.0 if x < 0.0 else (1.0 if x > 1.0 else x)


@njit(cache=True)
def segment_distance(p1: np.ndarray, q1: np.ndarray, p2: np.ndarray, q2: np.ndarray) -> float:
    """Euclidean distance between the segments p1-q1 and p2-q2 (3-D) [m].

    Args:
        p1: First end of segment 1, shape (3,), in [m].
        q1: Second end of segment 1, shape (3,), in [m].
        p2: First end of segment 2, shape (3,), in [m].
        q2: Second end of segment 2, shape (3,), in [m].
    """
    d1x, d1y, d1z = q1[0] - p1[0], q1[1] - p1[1], q1[2] - p1[2]
    d2x, d2y, d2z = q2[0] - p2[0], q2[1] - p2[1], q2[2] - p2[2]
    rx, ry, rz = p1[0] - p2[0], p1[1] - p2[1], p1[2] - p2[2]
    a = d1x * d1x + d1y * d1y + d1z * d1z
    e = d2x * d2x + d2y * d2y + d2z * d2z
    f = d2x * rx + d2y * ry + d2z * rz
    if a <= DEGENERATE_M2 and e <= DEGENERATE_M2:
        s = 0.0
        t = 0.0
    elif a <= DEGENERATE_M2:
        s = 0.0
        t = _clamp01(f / e)
    else:
        c = d1x * rx + d1y * ry + d1z * rz
        if e <= DEGENERATE_M2:
            t = 0.0
            s = _clamp01(-c / a)
        else:
            b = d1x * d2x + d1y * d2y + d1z * d2z
            denom = a * e - b * b  # >= 0; 0 for parallel segments, where any s gives a closest pair
            s = _clamp01((b * f - c * e) / denom) if denom > DEGENERATE_M2 * a * e else 0.0
            t = (b * s + f) / e
            if t < 0.0:
                t = 0.0
                s = _clamp01(-c / a)
            elif t > 1.0:
                t = 1.0
                s = _clamp01((b - c) / a)
    dx = rx + s * d1x - t * d2x
    dy = ry + s * d1y - t * d2y
    dz = rz + s * d1z - t * d2z
    return float(np.sqrt(dx * dx + dy * dy + dz * dz))


@njit(cache=True, inline="always")
def _rotate_about(R: np.ndarray, axis: np.ndarray, angle: float, out: np.ndarray) -> None:
    """Out = R @ rot(axis, angle) (Rodrigues; axis a unit vector), without allocating."""
    c, s = np.cos(angle), np.sin(angle)
    t = 1.0 - c
    x, y, z = axis[0], axis[1], axis[2]
    m00, m01, m02 = t * x * x + c, t * x * y - s * z, t * x * z + s * y
    m10, m11, m12 = t * x * y + s * z, t * y * y + c, t * y * z - s * x
    m20, m21, m22 = t * x * z - s * y, t * y * z + s * x, t * z * z + c
    for r in range(3):
        a, b, d = R[r, 0], R[r, 1], R[r, 2]
        out[r, 0] = a * m00 + b * m10 + d * m20
        out[r, 1] = a * m01 + b * m11 + d * m21
        out[r, 2] = a * m02 + b * m12 + d * m22


@njit(cache=True)
def _clearance_at(
    q: np.ndarray,
    T_parent_joint: np.ndarray,
    axis_in_joint: np.ndarray,
    joint_type: np.ndarray,
    point_joint: np.ndarray,
    point_local: np.ndarray,
    radius: np.ndarray,
    pairs: np.ndarray,
    frames_R: np.ndarray,
    frames_p: np.ndarray,
    ends: np.ndarray,
    tmp: np.ndarray,
) -> float:
    """Smallest capsule clearance at one joint vector, with caller-provided scratch arrays."""
    nj = q.shape[0]
    for r in range(3):
        for c in range(3):
            frames_R[0, r, c] = 1.0 if r == c else 0.0
        frames_p[0, r] = 0.0
    for j in range(nj):
        P = T_parent_joint[j]
        R = frames_R[j]
        for r in range(3):
            frames_p[j + 1, r] = frames_p[j, r] + R[r, 0] * P[0, 3] + R[r, 1] * P[1, 3] + R[r, 2] * P[2, 3]
            for c in range(3):
                tmp[r, c] = R[r, 0] * P[0, c] + R[r, 1] * P[1, c] + R[r, 2] * P[2, c]
        if joint_type[j] == _PRISMATIC:  # slide along the axis (in the joint frame, tmp) by q [m]
            a = axis_in_joint[j]
            for r in range(3):
                frames_p[j + 1, r] += q[j] * (tmp[r, 0] * a[0] + tmp[r, 1] * a[1] + tmp[r, 2] * a[2])
                for c in range(3):
                    frames_R[j + 1, r, c] = tmp[r, c]
        else:
            _rotate_about(tmp, axis_in_joint[j], q[j], frames_R[j + 1])
    for k in range(point_local.shape[0]):
        f = point_joint[k]
        R = frames_R[f]
        x, y, z = point_local[k, 0], point_local[k, 1], point_local[k, 2]
        for r in range(3):
            ends[k, r] = frames_p[f, r] + R[r, 0] * x + R[r, 1] * y + R[r, 2] * z
    best = np.inf
    for k in range(pairs.shape[0]):
        a = pairs[k, 0]
        b = pairs[k, 1]
        gap = segment_distance(ends[2 * a], ends[2 * a + 1], ends[2 * b], ends[2 * b + 1]) - radius[a] - radius[b]
        best = gap if gap < best else best
    return best


@njit(cache=True)
def clearance_lower_bounds(
    q: np.ndarray,
    T_parent_joint: np.ndarray,
    axis_in_joint: np.ndarray,
    joint_type: np.ndarray,
    point_joint: np.ndarray,
    point_local: np.ndarray,
    radius: np.ndarray,
    pairs: np.ndarray,
    reach: np.ndarray,
    threshold: float,
) -> np.ndarray:
    """Guaranteed lower bounds of the smallest capsule clearance along a sequence of joint vectors.

    Exact (the capsule geometry is evaluated) where the Lipschitz bound from the last evaluated sample does not already
    clear ``threshold``; elsewhere that bound, which is >= threshold.

    Args:
        q: (n, J) joint vectors [rad, or m for a prismatic joint], in the order of the trajectory (any order is
            correct; this one is fast).
        T_parent_joint: (J, 4, 4) joint placements at zero joint value, translations in [m] (see
            :func:`fk_kernels.fk_into`).
        axis_in_joint: (J, 3) joint axes in their own frames.
        joint_type: (J,) 0 revolute, 1 prismatic.
        point_joint: (2G,) frame of each capsule end (0 = base, j = after joint j).
        point_local: (2G, 3) the capsule ends in their frames [m].
        radius: (G,) capsule radii [m].
        pairs: (P, 2) capsule pairs, indices into the G capsules.
        reach: (J,) R_k [m/rad, or m/m]: how far joint k can move any point distal to it per unit of its value.
        threshold: Clearance that needs no exact evaluation when the bound clears it [m].

    Returns:
        (n,) lower bounds [m].
    """
    n, nj = q.shape
    out = np.empty(n)
    frames_R = np.empty((nj + 1, 3, 3))
    frames_p = np.empty((nj + 1, 3))
    ends = np.empty((point_local.shape[0], 3))
    tmp = np.empty((3, 3))
    anchor = -1
    anchor_value = -np.inf
    for i in range(n):
        if anchor >= 0:
            moved = 0.0
            for j in range(nj):
                moved += reach[j] * abs(q[i, j] - q[anchor, j])
            bound = anchor_value - moved
            if bound >= threshold:
                out[i] = bound
                continue
        value = _clearance_at(
            q[i],
            T_parent_joint,
            axis_in_joint,
            joint_type,
            point_joint,
            point_local,
            radius,
            pairs,
            frames_R,
            frames_p,
            ends,
            tmp,
        )
        out[i] = value
        anchor = i
        anchor_value = value
    return out
