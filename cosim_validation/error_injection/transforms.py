"""Rigid transforms as (n, 4, 4) stacks: from positions and quaternions, inverse, and the gap between two."""

from __future__ import annotations

import numpy as np
from scipy.spatial.transform import Rotation


def poses(position_m: np.ndarray, quat_wxyz: np.ndarray) -> np.ndarray:
    """(n, 4, 4) transforms from positions and unit quaternions.

    Args:
        position_m: Translations, shape (n, 3), in [m].
        quat_wxyz: Unit quaternions (w, x, y, z), shape (n, 4).
    """
    position_m = np.asarray(position_m, dtype=np.float64).reshape(-1, 3)
    quat = np.asarray(quat_wxyz, dtype=np.float64).reshape(-1, 4)
    T = np.tile(np.eye(4), (position_m.shape[0], 1, 1))
    T[:, :3, :3] = Rotation.from_quat(quat[:, [1, 2, 3, 0]]).as_matrix()
    T[:, :3, 3] = position_m
    return T


def from_rotation(R: np.ndarray, position_m: np.ndarray) -> np.ndarray:
    """(n, 4, 4) transforms from rotation matrices and positions.

    Args:
        R: Rotation matrices, shape (n, 3, 3).
        position_m: Translations, shape (n, 3), in [m].
    """
    R = np.asarray(R, dtype=np.float64).reshape(-1, 3, 3)
    T = np.tile(np.eye(4), (R.shape[0], 1, 1))
    T[:, :3, :3] = R
    T[:, :3, 3] = np.asarray(position_m, dtype=np.float64).reshape(-1, 3)
    return T


def quat_wxyz(T: np.ndarray) -> np.ndarray:
    """(n, 4) unit quaternions (w, x, y, z), w >= 0, of transforms (n, 4, 4).

    Args:
        T: Rigid transforms, shape (n, 4, 4) or (4, 4).
    """
    xyzw = Rotation.from_matrix(np.asarray(T)[..., :3, :3].reshape(-1, 3, 3)).as_quat()
    quat = xyzw[:, [3, 0, 1, 2]]
    return np.where(quat[:, :1] < 0.0, -quat, quat)  # type: ignore[no-any-return]


def inverse(T: np.ndarray) -> np.ndarray:
    """The inverse of each rigid transform of ``T`` ((n, 4, 4) or (4, 4)).

    Args:
        T: Rigid transforms, shape (n, 4, 4) or (4, 4), translations in [m].
    """
    T = np.asarray(T, dtype=np.float64)
    R_t = np.swapaxes(T[..., :3, :3], -1, -2)
    out = np.zeros_like(T)
    out[..., :3, :3] = R_t
    out[..., :3, 3] = -np.einsum("...ij,...j->...i", R_t, T[..., :3, 3])
    out[..., 3, 3] = 1.0
    return out


def rotation_angle_rad(R_a: np.ndarray, R_b: np.ndarray) -> np.ndarray:
    """(n,) angle of R_a^T R_b [rad] ([Barragan et al. 2024], eq. 6: arccos((trace - 1) / 2)), for (n, 3, 3) stacks.

    Args:
        R_a: Rotation matrices, shape (n, 3, 3).
        R_b: Rotation matrices, shape (n, 3, 3).
    """
    trace = np.einsum("...ji,...ji->...", R_a, R_b)
    return np.arccos(np.clip(0.5 * (trace - 1.0), -1.0, 1.0))  # type: ignore[no-any-return]


def pose_gap(T_a: np.ndarray, T_b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Translation and rotation gaps between two stacks of poses ([Barragan et al. 2024], eq. 5 and 6).

    Args:
        T_a: Poses, shape (n, 4, 4), translations in [m].
        T_b: The poses compared with ``T_a``, shape (n, 4, 4), translations in [m].

    Returns:
        The translation gaps, shape (n,), in [m], and the rotation gaps, shape (n,), in [rad].
    """
    translation = np.linalg.norm(T_a[..., :3, 3] - T_b[..., :3, 3], axis=-1)
    return translation, rotation_angle_rad(T_a[..., :3, :3], T_b[..., :3, :3])


def nearest_rotation(M: np.ndarray) -> np.ndarray:
    """The rotation matrix nearest to ``M`` (3, 3) in the Frobenius norm (SVD, det +1).

    Args:
        M: A 3 x 3 matrix, shape (3, 3).
    """
    U, _, Vt = np.linalg.svd(M)
    D = np.diag([1.0, 1.0, np.sign(np.linalg.det(U @ Vt))])
    return U @ D @ Vt  # type: ignore[no-any-return]
