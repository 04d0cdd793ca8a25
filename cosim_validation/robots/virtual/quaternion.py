"""Unit quaternions (w, x, y, z) for poses read from the engines and noise added to them."""

from __future__ import annotations

import math

import numpy as np


def quat_multiply(a_wxyz: np.ndarray, b_wxyz: np.ndarray) -> np.ndarray:
    """Hamilton product a b of two (4,) wxyz quaternions (rotation b in the frame of a).

    Args:
        a_wxyz: The first quaternion, (w, x, y, z), shape (4,).
        b_wxyz: The second quaternion, (w, x, y, z), shape (4,).

    Returns:
        The product, (w, x, y, z), shape (4,); a unit quaternion when both are.
    """
    aw, ax, ay, az = a_wxyz
    bw, bx, by, bz = b_wxyz
    return np.array(
        [
            aw * bw - ax * bx - ay * by - az * bz,
            aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw,
        ]
    )


def quat_from_rotvec(rotvec: np.ndarray) -> np.ndarray:
    """(4,) wxyz unit quaternion of the rotation vector ``rotvec``.

    Args:
        rotvec: Rotation axis times angle, shape (3,), in [rad].

    Returns:
        The unit quaternion, (w, x, y, z), shape (4,).
    """
    angle = float(np.linalg.norm(rotvec))
    if angle < 1e-12:
        small: np.ndarray = np.array([1.0, *(0.5 * rotvec)]) / np.sqrt(1.0 + 0.25 * angle * angle)
        return small
    return np.array([np.cos(0.5 * angle), *(np.sin(0.5 * angle) / angle * rotvec)])


def canonical(quat_wxyz: np.ndarray) -> np.ndarray:
    """The same rotation as a normalised (4,) quaternion with w >= 0 (the convention of the records).

    Args:
        quat_wxyz: A non-zero quaternion, (w, x, y, z), shape (4,).

    Returns:
        The unit quaternion with w >= 0, shape (4,), float64.
    """
    w, x, y, z = np.asarray(quat_wxyz, dtype=np.float64).tolist()  # four numbers: scalar arithmetic beats ufuncs
    norm = math.sqrt(w * w + x * x + y * y + z * z)
    if not norm > 0.0:  # a zero quaternion has no rotation: NaN, as numpy's division gave
        return np.full(4, math.nan)
    if w < 0.0:
        norm = -norm
    return np.array((w / norm, x / norm, y / norm, z / norm))


def quat_matrix(quat_wxyz: np.ndarray) -> np.ndarray:
    """(3, 3) rotation matrix of a (4,) wxyz quaternion (normalised first).

    Args:
        quat_wxyz: A non-zero quaternion, (w, x, y, z), shape (4,).

    Returns:
        The rotation matrix, shape (3, 3): its columns are the rotated x, y and z axes.
    """
    w, x, y, z = np.asarray(quat_wxyz, dtype=np.float64) / np.linalg.norm(quat_wxyz)
    return np.array(
        [
            [1.0 - 2.0 * (y * y + z * z), 2.0 * (x * y - w * z), 2.0 * (x * z + w * y)],
            [2.0 * (x * y + w * z), 1.0 - 2.0 * (x * x + z * z), 2.0 * (y * z - w * x)],
            [2.0 * (x * z - w * y), 2.0 * (y * z + w * x), 1.0 - 2.0 * (x * x + y * y)],
        ]
    )
