"""Kinematic calibration: the arm's joint offsets, ratios, lost motion and wrist coupling with the hand-eye X and Y.

The hand-eye calibration alone (:mod:`~.hand_eye`) takes the nominal model at its word: A_i = FK(q_i). Here
A_i = FK(m(q_i, d_i)), m the :class:`~.joint_map.JointMap` (q_true = offset + scale q + lost motion d + coupling
terms; d_i the direction of each joint's last move), and the
unknowns are m's parameters, X = T_tip_marker and Y = T_base_tracker, found together by nonlinear least squares
(scipy's ``least_squares``, Levenberg-Marquardt) on the residuals of A_i X against Y B_i, both in the frame of
A_i X: the marker position [m] and the rotation vector of R(A_i X)^T R(Y B_i) weighted by ``length_m`` (1 rad
counts as 0.1 m by default, the weight of :func:`~.hand_eye.refine`). In that frame a constant transform on
either side of A_i (which Y or X absorbs) leaves every residual unchanged, not only their sum of squares, so
such a parameter's Jacobian column lies exactly in the span of X's or Y's (in base_link the position residuals
would turn with it, and the column would leave the span by the residual over the lever arm, about 1e-2). The
start is the hand-eye solution with the nominal model.

**What the data cannot tell apart.** The first joint's offset turns the whole arm about a fixed axis, which Y
absorbs; the last joint's offset turns the tip frame by a constant, which X absorbs; a joint that never moves has
a ratio indistinguishable from its offset and no lost motion to see. Such parameters are found in the Jacobian
of the residuals (central differences), each column scaled to unit norm: X and Y's columns span a space first,
then each offset, ratio, coupling and lost-motion column in that order is kept if the part of it outside the
span of the columns kept before it is at least :data:`IDENTIFIABLE_SINE` of it (the sine of its angle to that
span), else it is held at nominal and named in :attr:`KinematicCalibration.held`. The check is made at the start
and again at the solution (until the kept set no longer changes).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.optimize import least_squares
from scipy.spatial.transform import Rotation

from cosim_validation.error_injection.error_types import CalibrationError
from cosim_validation.error_injection.hand_eye import HandEye, calibrate, residuals
from cosim_validation.error_injection.joint_map import JointMap
from cosim_validation.error_injection.transforms import from_rotation
from cosim_validation.robots.model import Kinematics

#: A parameter whose Jacobian column leaves the span of those before it by less than this sine is not identifiable.
IDENTIFIABLE_SINE = 1e-3
#: Fewest tracked poses per estimated parameter (each pose gives six equations; noise needs more).
POSES_PER_PARAMETER = 2
#: Central-difference step of the Jacobian [rad | m | ratio].
_STEP = 1e-6
#: Rounds of (identify, solve) at most.
_ROUNDS = 3


@dataclass(frozen=True)
class KinematicCalibration:
    """The calibrated model, X and Y, and how well it explains the data before and after.

    Attributes:
        joint_map: The calibrated joints (held parameters at nominal).
        hand_eye: X, Y and the residuals with the calibrated model (method ``kinematic``).
        nominal: The hand-eye calibration with the nominal model (the start; its residuals are "before").
        estimated: Names of the kinematic parameters estimated.
        held: Names of those the data cannot identify, held at nominal.
        standard_error: (K,) standard error of each kinematic parameter in :func:`parameter_names` order (from
            the Jacobian at the solution and the residuals' spread, every residual weighted alike) [rad | m |
            ratio]; NaN where held.
    """

    joint_map: JointMap
    hand_eye: HandEye
    nominal: HandEye
    estimated: tuple[str, ...]
    held: tuple[str, ...]
    standard_error: np.ndarray

    def summary(self, joint_names: tuple[str, ...]) -> dict[str, Any]:
        """The model, the held parameters and the residuals before and after (mm, deg) as JSON.

        Args:
            joint_names: The J joint names, in joint order.
        """
        return {
            "joint_map": self.joint_map.to_json(joint_names),
            "estimated": list(self.estimated),
            "held_at_nominal": list(self.held),
            "standard_error": {
                n: float(e)
                for n, e in zip(parameter_names(joint_names, self.joint_map.coupled), self.standard_error, strict=True)
                if np.isfinite(e)
            },
            "before": residual_statistics(self.nominal),
            "after": residual_statistics(self.hand_eye),
        }


def residual_statistics(hand_eye: HandEye) -> dict[str, float]:
    """Mean and 95th percentile of the position [mm] and rotation [deg] residuals.

    Args:
        hand_eye: A calibration with its residuals per pose.
    """
    t_mm, r_deg = 1e3 * hand_eye.translation_residual_m, np.degrees(hand_eye.rotation_residual_rad)
    return {
        "translation_mean_mm": float(t_mm.mean()),
        "translation_p95_mm": float(np.percentile(t_mm, 95)),
        "rotation_mean_deg": float(np.mean(r_deg)),
        "rotation_p95_deg": float(np.percentile(r_deg, 95)),
    }


def default_coupled(n_joints: int) -> tuple[tuple[int, int], ...]:
    """Candidate couplings within the last three joints (the wrist): (J-3 -> J-2) and (J-2 -> J-1).

    Args:
        n_joints: J, the arm's joint count.
    """
    return tuple((j - 1, j) for j in range(max(1, n_joints - 2), n_joints))


def parameter_names(joint_names: tuple[str, ...], coupled: tuple[tuple[int, int], ...]) -> tuple[str, ...]:
    """Names of the kinematic parameters in vector order: offsets, scales, couplings, lost motions.

    Args:
        joint_names: The J joint names, in joint order.
        coupled: (driving, driven) 0-based joint index pairs whose coupling is a parameter.
    """
    return (
        tuple(f"offset {n}" for n in joint_names)
        + tuple(f"scale {n}" for n in joint_names)
        + tuple(f"coupling {joint_names[a]}->{joint_names[b]}" for a, b in coupled)
        + tuple(f"lost motion {n}" for n in joint_names)
    )


class _Problem:
    """The residuals of A_i X vs Y B_i as a function of [kinematic parameters, X (6), Y (6)]."""

    def __init__(
        self,
        kinematics: Kinematics,
        q: np.ndarray,
        directions: np.ndarray,
        B: np.ndarray,
        coupled: tuple[tuple[int, int], ...],
        length_m: float,
    ) -> None:
        self.kinematics, self.q, self.directions, self.B = kinematics, q, directions, B
        self.coupled, self.length_m = coupled, length_m
        self.n_kinematic = 3 * q.shape[1] + len(coupled)
        self._last: tuple[bytes, np.ndarray] | None = None  # the kinematic parameters of the last A_i, and the A_i

    def joint_map(self, p: np.ndarray) -> JointMap:
        j = self.q.shape[1]
        c = 2 * j + len(self.coupled)
        return JointMap(p[:j].copy(), 1.0 + p[j : 2 * j], self.coupled, p[2 * j : c].copy(), p[c : c + j].copy())

    def transforms(self, p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        k = self.n_kinematic
        R = Rotation.from_rotvec(np.stack([p[k : k + 3], p[k + 6 : k + 9]])).as_matrix()
        return from_rotation(R[0], p[k + 3 : k + 6])[0], from_rotation(R[1], p[k + 9 : k + 12])[0]

    def true_joints(self, p: np.ndarray) -> np.ndarray:
        """(n, J) the true joints of the measured ones under the kinematic parameters of ``p``.

        Args:
            p: The parameters: the kinematic ones, then X's and Y's.
        """
        return self.joint_map(p).apply(self.q, self.directions)

    def tool_poses(self, p: np.ndarray) -> np.ndarray:
        """The tool poses A_i under the kinematic parameters of ``p`` (read only).

        The last ones are kept: a step in X or Y (12 of the Jacobian's columns, each evaluated once or twice)
        leaves them as they were.

        Args:
            p: The parameters: the kinematic ones, then X's and Y's.
        """
        key = p[: self.n_kinematic].tobytes()
        if self._last is not None and self._last[0] == key:
            return self._last[1]
        pos, R = self.kinematics.tip_poses(self.true_joints(p))
        poses = from_rotation(R, pos)
        poses.setflags(write=False)  # shared with later calls
        self._last = (key, poses)
        return poses

    def __call__(self, p: np.ndarray) -> np.ndarray:
        X, Y = self.transforms(p)
        AX, YB = self.tool_poses(p) @ X, Y @ self.B
        gap = np.einsum("nji,njk->nik", AX[:, :3, :3], YB[:, :3, :3])
        rotation = Rotation.from_matrix(gap).as_rotvec() * self.length_m
        position = np.einsum("nji,nj->ni", AX[:, :3, :3], YB[:, :3, 3] - AX[:, :3, 3])
        return np.concatenate([position.ravel(), rotation.ravel()])

    def jacobian(self, p: np.ndarray) -> np.ndarray:
        """(6n, P) central-difference Jacobian."""
        columns = []
        for i in range(p.size):
            step = np.zeros_like(p)
            step[i] = _STEP
            columns.append((self(p + step) - self(p - step)) / (2.0 * _STEP))
        return np.stack(columns, axis=1)


def identifiable(jacobian: np.ndarray, n_kinematic: int, sine: float = IDENTIFIABLE_SINE) -> np.ndarray:
    """(K,) bool: the kinematic columns (the first ``n_kinematic``) that are identifiable.

    A column is kept when it leaves the span of X and Y's columns (the rest) and of the kinematic columns kept
    before it by at least ``sine`` (columns scaled to unit norm).

    Args:
        jacobian: The residuals' Jacobian, shape (6n, K + 12): the K kinematic columns, then X's and Y's.
        n_kinematic: K, the number of kinematic columns.
        sine: The smallest sine of a column's angle to the span before it for the column to be kept.
    """
    norms = np.linalg.norm(jacobian, axis=0)
    unit = jacobian / np.where(norms > 0.0, norms, 1.0)
    basis, _ = np.linalg.qr(unit[:, n_kinematic:])
    keep = np.zeros(n_kinematic, dtype=bool)
    tiny = 1e-9 * norms.max()
    for k in range(n_kinematic):
        rest = unit[:, k] - basis @ (basis.T @ unit[:, k])
        rest -= basis @ (basis.T @ rest)  # twice: Gram-Schmidt keeps its orthogonality
        size = float(np.linalg.norm(rest))
        if norms[k] > tiny and size >= sine:
            keep[k] = True
            basis = np.column_stack([basis, rest / size])
    return keep


def _check_counts(n_poses: int, n_parameters: int, names: str) -> None:
    needed = POSES_PER_PARAMETER * n_parameters
    if n_poses < needed:
        raise CalibrationError(
            f"kinematic calibration: {n_poses} tracked poses for {n_parameters} parameters ({names}); at least "
            f"{needed} are needed ({POSES_PER_PARAMETER} per parameter)"
        )


def _start(hand_eye: HandEye, n_kinematic: int) -> np.ndarray:
    rotvec = Rotation.from_matrix(np.stack([hand_eye.X[:3, :3], hand_eye.Y[:3, :3]])).as_rotvec()
    xy = np.concatenate([rotvec[0], hand_eye.X[:3, 3], rotvec[1], hand_eye.Y[:3, 3]])
    return np.concatenate([np.zeros(n_kinematic), xy])


def _solve(problem: _Problem, p0: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """Least squares over the kept kinematic parameters and X, Y; the others stay at ``p0``'s values."""
    free = np.concatenate([keep, np.ones(12, dtype=bool)])
    p = p0.copy()

    def cost(x: np.ndarray) -> np.ndarray:
        p[free] = x
        return problem(p)

    result = least_squares(cost, p0[free], method="lm", x_scale="jac")
    out = p0.copy()
    out[free] = result.x
    return out


def calibrate_kinematics(
    kinematics: Kinematics,
    q_measured: np.ndarray,
    B: np.ndarray,
    directions: np.ndarray | None = None,
    coupled: tuple[tuple[int, int], ...] | None = None,
    length_m: float = 0.1,
) -> KinematicCalibration:
    """Joint offsets, ratios, couplings and lost motions with X and Y from measured joints and marker poses.

    Args:
        kinematics: The nominal model.
        q_measured: (n, J) measured joints of the tracked poses [rad | m].
        B: (n, 4, 4) marker poses in the tracker's frame.
        directions: (n, J) direction of each joint's last move (+1, -1, 0); None: not known (no lost motion).
        coupled: (driving, driven) pairs whose coupling is estimated (default: :func:`default_coupled`).
        length_m: Weight of a rotation residual: 1 rad counts as ``length_m`` of position error [m].

    Raises:
        CalibrationError: Too few poses for the parameters, or motion that leaves X or Y open.
    """
    q = np.asarray(q_measured, dtype=np.float64)
    coupled = default_coupled(q.shape[1]) if coupled is None else coupled
    names = parameter_names(kinematics.joint_names, coupled)
    j = q.shape[1]
    what = f"{j} joint offsets, {j} ratios, {len(coupled)} couplings, {j} lost motions, X and Y"
    _check_counts(len(q), len(names) + 12, what)
    nominal = calibrate(kinematics_poses(kinematics, q), B)
    d = np.zeros_like(q) if directions is None else np.asarray(directions, dtype=np.float64)
    problem = _Problem(kinematics, q, d, np.asarray(B, dtype=np.float64), coupled, length_m)
    p, keep, error = _fit(problem, _start(nominal, problem.n_kinematic))
    X, Y = problem.transforms(p)
    A = problem.tool_poses(p)
    hand_eye = HandEye(X, Y, *residuals(A, problem.B, X, Y), "kinematic")
    estimated = tuple(n for n, k in zip(names, keep, strict=True) if k)
    held = tuple(n for n, k in zip(names, keep, strict=True) if not k)
    return KinematicCalibration(problem.joint_map(p), hand_eye, nominal, estimated, held, error)


def _fit(problem: _Problem, p0: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The solution, which kinematic parameters were estimated, and their standard errors (NaN: held).

    The identifiable parameters are found at the start, the problem solved with the others at nominal, and found
    again at the solution until they no longer change (at most :data:`_ROUNDS` times).
    """
    keep = identifiable(problem.jacobian(p0), problem.n_kinematic)
    for _ in range(_ROUNDS):
        p = _solve(problem, p0, keep)  # held parameters stay at nominal
        jacobian = problem.jacobian(p)
        now = identifiable(jacobian, problem.n_kinematic) & keep
        if (now == keep).all():
            break
        keep = now
    else:
        p = _solve(problem, p0, keep)
        jacobian = problem.jacobian(p)
    return p, keep, _standard_errors(jacobian, problem(p), keep)


def _standard_errors(jacobian: np.ndarray, residual: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """(K,) standard errors of the kinematic parameters (NaN where held).

    The sqrt of the diagonal of s^2 (J^T J)^-1 over the free columns, s^2 the residuals' sum of squares over
    their degrees of freedom.
    """
    free = np.concatenate([keep, np.ones(12, dtype=bool)])
    J = jacobian[:, free]
    s2 = float(residual @ residual) / max(1, residual.size - J.shape[1])
    covariance = s2 * np.linalg.pinv(J.T @ J)
    out = np.full(keep.size, np.nan)
    out[keep] = np.sqrt(np.diag(covariance)[: int(keep.sum())])
    return out


def kinematics_poses(kinematics: Kinematics, q: np.ndarray) -> np.ndarray:
    """Nominal tip poses of joint vectors (one batch of forward kinematics).

    Args:
        kinematics: The nominal model.
        q: Joint vectors, shape (n, J), in [rad] (or [m] for a prismatic joint).

    Returns:
        T_base_tip in base_link, shape (n, 4, 4), translations in [m].
    """
    pos, R = kinematics.tip_poses(q)
    return from_rotation(R, pos)
