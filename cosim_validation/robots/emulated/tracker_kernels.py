"""numba kernels of the emulated trackers' per-frame geometry: what a tracker does with its noise draws.

The random draws stay with the trackers (numpy's generator, in the order they always were); these kernels take
them as inputs, so a seeded arm reports the same frames. Quaternions are (w, x, y, z).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from cosim_validation.robots.model.fk_kernels import matrix_to_quat_wxyz


@njit(cache=True)
def _quat_matrix_into(w: float, x: float, y: float, z: float, R: np.ndarray) -> None:
    """Write the rotation matrix of the quaternion (w, x, y, z), normalised first, into ``R`` (3, 3)."""
    norm = math.sqrt(w * w + x * x + y * y + z * z)
    w, x, y, z = w / norm, x / norm, y / norm, z / norm
    R[0, 0] = 1.0 - 2.0 * (y * y + z * z)
    R[0, 1] = 2.0 * (x * y - w * z)
    R[0, 2] = 2.0 * (x * z + w * y)
    R[1, 0] = 2.0 * (x * y + w * z)
    R[1, 1] = 1.0 - 2.0 * (x * x + z * z)
    R[1, 2] = 2.0 * (y * z - w * x)
    R[2, 0] = 2.0 * (x * z - w * y)
    R[2, 1] = 2.0 * (y * z + w * x)
    R[2, 2] = 1.0 - 2.0 * (x * x + y * y)


@njit(cache=True)
def _rotvec_quat(r0: float, r1: float, r2: float) -> tuple[float, float, float, float]:
    """The unit quaternion of the rotation vector (r0, r1, r2) [rad] (a first-order one below 1e-12 rad)."""
    angle = math.sqrt(r0 * r0 + r1 * r1 + r2 * r2)
    if angle < 1e-12:
        n = math.sqrt(1.0 + 0.25 * angle * angle)
        return 1.0 / n, 0.5 * r0 / n, 0.5 * r1 / n, 0.5 * r2 / n
    k = math.sin(0.5 * angle) / angle
    return math.cos(0.5 * angle), k * r0, k * r1, k * r2


@njit(cache=True)
def _canonical(w: float, x: float, y: float, z: float) -> np.ndarray:
    """(4,) the unit quaternion with w >= 0 of the same rotation."""
    norm = math.sqrt(w * w + x * x + y * y + z * z)
    if w < 0.0:
        norm = -norm
    out = np.empty(4)
    out[0], out[1], out[2], out[3] = w / norm, x / norm, y / norm, z / norm
    return out


@njit(cache=True)
def marker_pose(
    T_tracker_base: np.ndarray, T_tool_marker: np.ndarray, tool_pos_m: np.ndarray, tool_quat_wxyz: np.ndarray
) -> tuple[np.ndarray, float, float]:
    """The marker's true pose in the tracker's frame, its distance and how squarely it faces the tracker.

    Args:
        T_tracker_base: (4, 4) base_link in the tracker's frame, translation in [m].
        T_tool_marker: (4, 4) the marker on the tool, translation in [m].
        tool_pos_m: (3,) the tool's true position in base_link [m].
        tool_quat_wxyz: (4,) the tool's true orientation in base_link.

    Returns:
        T_tracker_marker (4, 4) [m], its distance from the tracker [m], and the cosine of the angle between the
        marker's normal (its -z) and the line of sight back to the tracker.
    """
    T_base_tool = np.eye(4)
    _quat_matrix_into(tool_quat_wxyz[0], tool_quat_wxyz[1], tool_quat_wxyz[2], tool_quat_wxyz[3], T_base_tool)
    T_base_tool[0, 3], T_base_tool[1, 3], T_base_tool[2, 3] = tool_pos_m[0], tool_pos_m[1], tool_pos_m[2]
    T = T_tracker_base @ T_base_tool @ T_tool_marker
    distance = math.sqrt(T[0, 3] * T[0, 3] + T[1, 3] * T[1, 3] + T[2, 3] * T[2, 3])
    if distance > 0.0:
        s0, s1, s2 = T[0, 3] / distance, T[1, 3] / distance, T[2, 3] / distance
    else:
        s0, s1, s2 = 0.0, 0.0, 1.0
    cos_view = -(T[0, 2] * s0 + T[1, 2] * s1 + T[2, 2] * s2)
    return T, distance, cos_view


@njit(cache=True)
def noisy_marker(
    T: np.ndarray, distance: float, noise_m: np.ndarray, rotation_noise_rad: np.ndarray, depth_noise_factor: float
) -> tuple[np.ndarray, np.ndarray]:
    """The reported marker pose: the true pose with its position and orientation noise.

    Args:
        T: (4, 4) the marker's true pose in the tracker's frame (see :func:`marker_pose`), translation in [m].
        distance: Its distance from the tracker [m], > 0.
        noise_m: (3,) isotropic position noise drawn for the frame [m]; its component along the line of sight is
            stretched ``depth_noise_factor`` times.
        rotation_noise_rad: (3,) rotation vector of the orientation noise, in the marker's frame [rad].
        depth_noise_factor: How much larger the noise along the line of sight is than across it.

    Returns:
        The marker's position (3,) [m] and orientation (4,) (w >= 0) as reported.
    """
    s0, s1, s2 = T[0, 3] / distance, T[1, 3] / distance, T[2, 3] / distance
    along = (depth_noise_factor - 1.0) * (noise_m[0] * s0 + noise_m[1] * s1 + noise_m[2] * s2)
    position = np.empty(3)
    position[0] = T[0, 3] + (noise_m[0] + along * s0)
    position[1] = T[1, 3] + (noise_m[1] + along * s1)
    position[2] = T[2, 3] + (noise_m[2] + along * s2)
    w, x, y, z = _rotvec_quat(rotation_noise_rad[0], rotation_noise_rad[1], rotation_noise_rad[2])
    turn = np.empty((3, 3))
    _quat_matrix_into(w, x, y, z, turn)
    R = np.ascontiguousarray(T[:3, :3]) @ turn
    q = matrix_to_quat_wxyz(R)
    return position, _canonical(q[0], q[1], q[2], q[3])


@njit(cache=True)
def noisy_tip(
    tip_pos_m: np.ndarray, tip_quat_wxyz: np.ndarray, position_noise_m: np.ndarray, rotation_noise_rad: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """A tip tracker's frame: the true pose with its noise added (the rotation noise in the tip's frame).

    Args:
        tip_pos_m: (3,) the true tip position [m].
        tip_quat_wxyz: (4,) the true tip orientation.
        position_noise_m: (3,) the position noise drawn for the frame [m].
        rotation_noise_rad: (3,) the rotation vector of the orientation noise drawn for the frame [rad].

    Returns:
        The reported position (3,) [m] and orientation (4,) (w >= 0).
    """
    position = tip_pos_m + position_noise_m
    bw, bx, by, bz = _rotvec_quat(rotation_noise_rad[0], rotation_noise_rad[1], rotation_noise_rad[2])
    aw, ax, ay, az = tip_quat_wxyz[0], tip_quat_wxyz[1], tip_quat_wxyz[2], tip_quat_wxyz[3]
    return position, _canonical(
        aw * bw - ax * bx - ay * by - az * bz,
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx,
        aw * bz + ax * by - ay * bx + az * bw,
    )
