"""Hand-eye and robot-world calibration AX = YB: where the marker sits on the tool, where the tracker stands.

For every sample i the robot's forward kinematics gives A_i = T_base_tool (nominal model, measured joints) and
the tracker gives B_i = T_tracker_marker; the unknowns are X = T_tool_marker (the marker on the last link) and
Y = T_base_tracker. Both products are T_base_marker, so A_i X = Y B_i.

:func:`solve_closed_form` is Shah's method (M. Shah, "Solving the robot-world/hand-eye calibration problem using
the Kronecker product", J. Mechanisms Robotics 5(3), 2013): the rotations satisfy
(R_A (x) I) vec(R_X) - (I (x) R_B^T) vec(R_Y) = 0 (row-major vec), whose null vector is found by SVD and made
orthonormal; the translations then solve R_A t_X - t_Y = R_Y t_B - t_A by linear least squares.
:func:`refine` then minimises the position and rotation residuals of A_i X vs Y B_i over X and Y
(scipy's least_squares, rotations as rotation vectors, the rotation residual weighted by ``length_m``).
Motion that leaves X or Y open (every rotation about one axis, no rotation at all, too few poses) is a
:class:`CalibrationError` naming the singular values that show it.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy.optimize import least_squares
from scipy.spatial.transform import Rotation

from cosim_validation.error_injection.error_types import CalibrationError
from cosim_validation.error_injection.transforms import from_rotation, inverse, nearest_rotation, pose_gap

#: Fewest pose pairs accepted (3 suffice in theory; noise needs more).
MIN_POSES = 10

#: The rotation problem is open when its second-smallest singular value is below this share of the largest.
DEGENERATE_RATIO = 1e-3


class HandEye(NamedTuple):
    """A calibration and how well it explains the data.

    Attributes:
        X: (4, 4) T_tool_marker.
        Y: (4, 4) T_base_tracker.
        translation_residual_m: (n,) ``|p(A_i X) - p(Y B_i)|`` [m].
        rotation_residual_rad: (n,) angle between R(A_i X) and R(Y B_i) [rad].
        method: ``shah`` or ``shah+refined``.
    """

    X: np.ndarray
    Y: np.ndarray
    translation_residual_m: np.ndarray
    rotation_residual_rad: np.ndarray
    method: str

    def actual_tool_poses(self, B: np.ndarray) -> np.ndarray:
        """The tool's actual poses in base_link, Y B_i X^-1, from marker poses.

        Args:
            B: Marker poses T_tracker_marker from the tracker, shape (n, 4, 4), translations in [m].

        Returns:
            T_base_tool, shape (n, 4, 4), translations in [m].
        """
        return self.Y @ np.asarray(B) @ inverse(self.X)  # type: ignore[no-any-return]

    def summary(self) -> dict[str, float | str]:
        """Residual statistics in mm and degrees (JSON)."""
        t_mm, r_deg = 1e3 * self.translation_residual_m, np.degrees(self.rotation_residual_rad)
        return {
            "method": self.method,
            "poses": int(t_mm.size),
            "translation_mean_mm": float(t_mm.mean()),
            "translation_max_mm": float(t_mm.max()),
            "rotation_mean_deg": float(r_deg.mean()),
            "rotation_max_deg": float(r_deg.max()),
        }


def _checked(A: np.ndarray, B: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    A, B = np.asarray(A, dtype=np.float64), np.asarray(B, dtype=np.float64)
    if A.ndim != 3 or A.shape[1:] != (4, 4) or A.shape != B.shape:
        raise CalibrationError(f"calibration: expected two (n, 4, 4) stacks of poses, got {A.shape} and {B.shape}")
    if A.shape[0] < MIN_POSES:
        raise CalibrationError(f"calibration: {A.shape[0]} pose pairs, at least {MIN_POSES} are needed")
    if not (np.isfinite(A).all() and np.isfinite(B).all()):
        raise CalibrationError("calibration: poses are not all finite (drop marker dropouts first)")
    tool_m, tool_rad = _spread(A)
    marker_m, marker_rad = _spread(B)
    if marker_m < FROZEN_RATIO * tool_m and marker_rad < FROZEN_RATIO * tool_rad:  # every ratio fitted to 0, exit 0
        raise CalibrationError(
            f"calibration: the tracked marker did not move (within {1e3 * marker_m:.3g} mm and "
            f"{np.degrees(marker_rad):.3g} deg over {A.shape[0]} poses) while the tool moved {1e3 * tool_m:.3g} mm and "
            f"{np.degrees(tool_rad):.3g} deg: the tracker did not follow the tool (a frozen or repeated reading)"
        )
    return A, B


#: A marker whose poses spread less than this fraction of the tool's (in position and in rotation) did not follow it
FROZEN_RATIO = 0.01


def _spread(T: np.ndarray) -> tuple[float, float]:
    """How far the poses T (n, 4, 4) reach from the first: the largest distance [m] and rotation angle [rad]."""
    distance = float(np.linalg.norm(T[:, :3, 3] - T[0, :3, 3], axis=1).max())
    relative = np.einsum("ji,njk->nik", T[0, :3, :3], T[:, :3, :3])
    cos = np.clip((np.trace(relative, axis1=1, axis2=2) - 1.0) / 2.0, -1.0, 1.0)
    return distance, float(np.arccos(cos).max())


def residuals(A: np.ndarray, B: np.ndarray, X: np.ndarray, Y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Translation and rotation residuals of A_i X vs Y B_i.

    Args:
        A: Tool poses T_base_tool from forward kinematics, shape (n, 4, 4), translations in [m].
        B: Marker poses T_tracker_marker from the tracker, shape (n, 4, 4), translations in [m].
        X: T_tool_marker, shape (4, 4), translation in [m].
        Y: T_base_tracker, shape (4, 4), translation in [m].

    Returns:
        The translation residuals, shape (n,), in [m], and the rotation residuals, shape (n,), in [rad].
    """
    return pose_gap(A @ X, Y @ B)


def solve_closed_form(A: np.ndarray, B: np.ndarray) -> HandEye:
    """Shah's closed-form solution of A_i X = Y B_i.

    Args:
        A: Tool poses T_base_tool from forward kinematics, shape (n, 4, 4), translations in [m].
        B: Marker poses T_tracker_marker from the tracker, shape (n, 4, 4), translations in [m].

    Raises:
        CalibrationError: Too few or non-finite poses, or motion that leaves the rotations open.
    """
    A, B = _checked(A, B)
    n = A.shape[0]
    R_A, R_B = A[:, :3, :3], B[:, :3, :3]
    eye = np.eye(3)
    K = np.concatenate(
        [
            np.einsum("nij,kl->nikjl", R_A, eye).reshape(n * 9, 9),
            -np.einsum("ij,nlk->nikjl", eye, R_B).reshape(n * 9, 9),
        ],
        axis=1,
    )
    _, s, Vt = np.linalg.svd(K, full_matrices=False)
    if s[-2] < DEGENERATE_RATIO * s[0]:
        raise CalibrationError(
            "calibration: the motion leaves the hand-eye rotation open (singular values "
            f"{s[-2]:.3g} and {s[-1]:.3g} of {s[0]:.3g}): rotate the tool about at least two different axes"
        )
    v = Vt[-1]
    M_X, M_Y = v[:9].reshape(3, 3), v[9:].reshape(3, 3)
    scale = np.sign(np.linalg.det(M_X)) / abs(np.linalg.det(M_X)) ** (1.0 / 3.0)
    R_X, R_Y = nearest_rotation(scale * M_X), nearest_rotation(scale * M_Y)
    C = np.concatenate([R_A, np.broadcast_to(-eye, (n, 3, 3))], axis=2).reshape(3 * n, 6)
    d = (np.einsum("ij,nj->ni", R_Y, B[:, :3, 3]) - A[:, :3, 3]).reshape(3 * n)
    s_t = np.linalg.svd(C, compute_uv=False)
    if s_t[-1] < DEGENERATE_RATIO * s_t[0]:
        raise CalibrationError(
            f"calibration: the motion leaves the hand-eye translation open (singular value {s_t[-1]:.3g} of "
            f"{s_t[0]:.3g}): rotate the tool more between poses"
        )
    t = np.linalg.lstsq(C, d, rcond=None)[0]
    X, Y = from_rotation(R_X, t[:3])[0], from_rotation(R_Y, t[3:])[0]
    return HandEye(X, Y, *residuals(A, B, X, Y), "shah")


def _unpack(p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    R = Rotation.from_rotvec(np.stack([p[0:3], p[6:9]])).as_matrix()
    return from_rotation(R[0], p[3:6])[0], from_rotation(R[1], p[9:12])[0]


def refine(A: np.ndarray, B: np.ndarray, start: HandEye, length_m: float = 0.1) -> HandEye:
    """Nonlinear least squares of the pose residuals of A_i X vs Y B_i, from ``start``.

    Args:
        A: Tool poses T_base_tool from forward kinematics, shape (n, 4, 4), translations in [m].
        B: Marker poses T_tracker_marker from the tracker, shape (n, 4, 4), translations in [m].
        start: The closed-form solution.
        length_m: Weight of a rotation residual: 1 rad counts as ``length_m`` of position error [m].
    """
    A, B = _checked(A, B)
    rotvec = Rotation.from_matrix(np.stack([start.X[:3, :3], start.Y[:3, :3]])).as_rotvec()
    p0 = np.concatenate([rotvec[0], start.X[:3, 3], rotvec[1], start.Y[:3, 3]])

    def cost(p: np.ndarray) -> np.ndarray:
        X, Y = _unpack(p)
        AX, YB = A @ X, Y @ B
        position = (AX[:, :3, 3] - YB[:, :3, 3]).ravel()
        gap = np.einsum("nji,njk->nik", AX[:, :3, :3], YB[:, :3, :3])
        rotation = Rotation.from_matrix(gap).as_rotvec().ravel() * length_m
        return np.concatenate([position, rotation])

    result = least_squares(cost, p0, method="lm", x_scale="jac")
    X, Y = _unpack(result.x)
    return HandEye(X, Y, *residuals(A, B, X, Y), "shah+refined")


def calibrate(A: np.ndarray, B: np.ndarray, refined: bool = True) -> HandEye:
    """Shah's closed form, then (by default) the nonlinear refinement.

    Args:
        A: Tool poses T_base_tool from forward kinematics, shape (n, 4, 4), translations in [m].
        B: Marker poses T_tracker_marker from the tracker, shape (n, 4, 4), translations in [m].
        refined: Refine the closed-form solution by nonlinear least squares.
    """
    start = solve_closed_form(A, B)
    return refine(A, B, start) if refined else start
