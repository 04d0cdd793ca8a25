"""Rigid poses given as xyz [m] and roll-pitch-yaw [rad] (REP 103: fixed axes x, then y, then z)."""

from __future__ import annotations

import numpy as np

from cosim_validation.common.config import ConfigNode


def rotation_rpy(rpy_rad: np.ndarray) -> np.ndarray:
    """Rotation matrix ``Rz(yaw) @ Ry(pitch) @ Rx(roll)``.

    Args:
        rpy_rad: (3,) float64 roll, pitch, yaw [rad].

    Returns:
        (3, 3) float64 rotation matrix.
    """
    r, p, y = (float(a) for a in rpy_rad)
    cr, sr, cp, sp, cy, sy = np.cos(r), np.sin(r), np.cos(p), np.sin(p), np.cos(y), np.sin(y)
    Rx = np.array([[1.0, 0.0, 0.0], [0.0, cr, -sr], [0.0, sr, cr]])
    Ry = np.array([[cp, 0.0, sp], [0.0, 1.0, 0.0], [-sp, 0.0, cp]])
    Rz = np.array([[cy, -sy, 0.0], [sy, cy, 0.0], [0.0, 0.0, 1.0]])
    return np.asarray(Rz @ Ry @ Rx)


def pose_matrix(xyz_m: np.ndarray, rpy_rad: np.ndarray) -> np.ndarray:
    """Homogeneous transform from a translation and roll-pitch-yaw angles.

    Args:
        xyz_m: (3,) float64 translation [m].
        rpy_rad: (3,) float64 roll, pitch, yaw [rad].

    Returns:
        (4, 4) float64 transform ``T_parent_child``.
    """
    T = np.eye(4)
    T[:3, :3] = rotation_rpy(rpy_rad)
    T[:3, 3] = np.asarray(xyz_m, dtype=np.float64)
    return T


def transform_points(T: np.ndarray, points: np.ndarray) -> np.ndarray:
    """Apply a (4, 4) transform to (N, 3) points.

    Args:
        T: Homogeneous transform ``T_parent_child``, shape (4, 4).
        points: Points in the child frame, shape (N, 3).

    Returns:
        The points in the parent frame, shape (N, 3), float64, in the unit of ``points`` and of ``T``'s
        translation.
    """
    return np.asarray(np.asarray(points, dtype=np.float64) @ T[:3, :3].T + T[:3, 3])


#: A patient lies within reach of the robot, and a model within the patient: farther than this from the origin
#: of its parent frame, a pose is taken as a unit mistake (``patient_pose`` in mm placed the targets 535 m away).
MAX_OFFSET_M = 5.0


def pose_from_config(node: ConfigNode, max_offset_m: float = MAX_OFFSET_M) -> np.ndarray:
    """A (4, 4) transform from a config mapping ``{xyz_m: [x, y, z], rpy_rad: [r, p, y]}``.

    Args:
        node: The mapping.
        max_offset_m: Largest distance of ``xyz_m`` from the parent frame's origin [m].

    Raises:
        ConfigError: Unknown keys, missing keys, vectors that are not 3 finite numbers, or an offset beyond
            ``max_offset_m`` (a pose in millimetres, most likely).
    """
    node.reject_unknown(("xyz_m", "rpy_rad"))
    xyz = node["xyz_m"].to_vector(3)
    offset = float(np.linalg.norm(xyz))
    if offset > max_offset_m:
        raise node["xyz_m"].error(
            f"places the frame {offset:.4g} m away, more than {max_offset_m:g} m (xyz_m is in metres; "
            f"in millimetres it would be {offset / 1000:.4g} m)"
        )
    return pose_matrix(xyz, node["rpy_rad"].to_vector(3))
