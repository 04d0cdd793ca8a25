"""Inverse kinematics of the needle tip: a position and a needle axis (or a full orientation)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from cosim_validation.robots.model.errors import KinematicsInputError
from cosim_validation.robots.model.ik_kernels import solve_ik, track_poses
from cosim_validation.robots.model.kinematics import Kinematics

_GOOD_MARGIN_RAD = 0.15  # a cold solution this far inside every limit is taken at once (rad, or m)
_GENERIC_SEEDS = 24  # start postures of arms other than 7-axis ones, spread over the joint ranges

# (joint 2, joint 4, joint 6) of the seed arm shapes of a 7-axis z-y-z-y-z-y-z arm (the ER3 Pro) [rad]
_ARM_SHAPES: tuple[tuple[float, float, float], ...] = (
    (0.4, 1.6, 1.0),
    (0.1, 1.2, 1.5),
    (0.8, 1.9, 0.5),
    (-0.3, 1.9, 1.8),
    (0.6, 0.8, -0.6),
    (-0.4, -1.6, -1.0),
)


@dataclass(frozen=True)
class IkSettings:
    """Tolerances and gains of the solver.

    Attributes:
        tol_pos_m: Converged when the tip is this close to the target [m].
        tol_rot_rad: ... and the needle axis (or orientation) within this angle [rad].
        max_iter: Iterations per solve.
        posture_gain: Fraction of the distance to the reference posture closed per iteration, in the nullspace.
        damping: Least-squares damping (regularises singular configurations).
    """

    tol_pos_m: float = 1e-7
    tol_rot_rad: float = 1e-6
    max_iter: int = 150
    posture_gain: float = 0.1
    damping: float = 1e-3


class IkResult(NamedTuple):
    """One solve.

    Attributes:
        q: (J,) joint vector, always within the solver's limits [rad].
        position_error_m: Remaining tip position error [m].
        orientation_error_rad: Remaining needle-axis (or orientation) error [rad].
        converged: Whether both errors are within tolerance.
    """

    q: np.ndarray
    position_error_m: float
    orientation_error_rad: float
    converged: bool


class PathIkResult(NamedTuple):
    """A followed sequence of tip poses.

    Attributes:
        q: (n, J) joint vectors [rad].
        position_error_m: (n,) tip position errors [m].
        orientation_error_rad: (n,) orientation errors [rad].
        converged: Whether every pose converged.
    """

    q: np.ndarray
    position_error_m: np.ndarray
    orientation_error_rad: np.ndarray
    converged: bool


def frame_with_axis(axis: np.ndarray) -> np.ndarray:
    """(3, 3) a rotation whose column 2 is the unit ``axis`` (the other two columns are arbitrary).

    Args:
        axis: The direction of column 2, shape (3,), any non-zero length.
    """
    z = axis / np.linalg.norm(axis)
    helper = np.array([1.0, 0.0, 0.0]) if abs(z[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    x = np.cross(helper, z)
    x /= np.linalg.norm(x)
    return np.column_stack((x, np.cross(z, x), z))


def _finite_vector(value: ArrayLike, name: str, shape: tuple[int, ...]) -> np.ndarray:
    arr = np.asarray(value, dtype=np.float64)
    if arr.shape != shape:
        raise KinematicsInputError(f"{name} must have shape {shape}, got {arr.shape}")
    if not np.isfinite(arr).all():
        raise KinematicsInputError(f"{name} must be finite, got {arr.tolist()!r}")
    return arr


class InverseKinematics:
    """Damped least-squares IK of the needle tip within joint limits; deterministic.

    Args:
        kinematics: Arm and needle.
        q_lower: (J,) lowest allowed joint angles (e.g. URDF limits + margin) [rad].
        q_upper: (J,) highest allowed joint angles [rad].
        q_posture: (J,) preferred posture for solves without a reference (e.g. the home pose) [rad].
        settings: Tolerances and gains.
    """

    def __init__(
        self,
        kinematics: Kinematics,
        q_lower: np.ndarray,
        q_upper: np.ndarray,
        q_posture: np.ndarray,
        settings: IkSettings | None = None,
    ) -> None:
        self.kinematics = kinematics
        self.q_lower = np.ascontiguousarray(q_lower, dtype=np.float64)
        self.q_upper = np.ascontiguousarray(q_upper, dtype=np.float64)
        self.q_posture = kinematics.check_limits(q_posture, name="q_posture")
        self.settings = settings or IkSettings()

    def _args(self) -> tuple[Any, ...]:
        s = self.settings
        chain = self.kinematics.chain
        return (
            self.q_lower,
            self.q_upper,
            chain.T_parent_joint,
            chain.axis_in_joint,
            chain.joint_type,
            self.kinematics.T_last_tip,
            s.max_iter,
            s.tol_pos_m,
            s.tol_rot_rad,
            s.posture_gain,
            s.damping,
        )

    def _converged(self, err_p: float, err_r: float) -> bool:
        return bool(err_p < self.settings.tol_pos_m and err_r < self.settings.tol_rot_rad)

    def solve_from(
        self, q_init: ArrayLike, tip_pos_m: ArrayLike, R_target: ArrayLike, *, full_orientation: bool = False
    ) -> IkResult:
        """One solve from ``q_init`` (J,), pulled towards ``q_init`` in the nullspace.

        Args:
            q_init: (J,) start [rad, or m for a prismatic joint].
            tip_pos_m: (3,) tip position in base_link [m].
            R_target: (3, 3) orientation; only column 2 (the needle axis) counts unless ``full_orientation``.
            full_orientation: Meet the whole of ``R_target``, not only the needle axis.
        """
        q0 = self.kinematics.as_joint_batch(q_init, "q_init")[0]
        pos = _finite_vector(tip_pos_m, "tip_pos_m", (3,))
        R = _finite_vector(R_target, "R_target", (3, 3))
        q, err_p, err_r, _ = solve_ik(q0, pos, R, full_orientation, q0, *self._args())
        return IkResult(q, err_p, err_r, self._converged(err_p, err_r))

    def solve(self, tip_pos_m: ArrayLike, needle_axis: ArrayLike) -> IkResult:
        """Tip at ``tip_pos_m`` with the needle along ``needle_axis``, from deterministic seeds.

        Seeds start at the preferred posture and then turn the arm towards the target. Among the converged solutions at
        least ``_GOOD_MARGIN_RAD`` inside every joint limit, the one closest to the preferred posture is returned (a
        home-like arm, consistent from target to target; the solve from the preferred posture itself is taken at once
        when it qualifies); failing that, the converged one farthest from the limits; failing that, the one with the
        smallest position error.

        Args:
            tip_pos_m: Tip position in base_link, shape (3,), in [m].
            needle_axis: Needle direction (towards the tip) in base_link, shape (3,), non-zero; the roll about it is
                free.

        Raises:
            KinematicsInputError: Wrong shapes, non-finite values, or a zero ``needle_axis``.
        """
        pos = _finite_vector(tip_pos_m, "tip_pos_m", (3,))
        axis = _finite_vector(needle_axis, "needle_axis", (3,))
        if np.linalg.norm(axis) < 1e-9:
            raise KinematicsInputError(f"needle_axis must be a non-zero vector, got {axis.tolist()!r}")
        R = frame_with_axis(axis)
        results = []
        for seed in self._seeds(pos):
            q, err_p, err_r, _ = solve_ik(seed, pos, R, False, self.q_posture, *self._args())
            results.append(IkResult(q, err_p, err_r, self._converged(err_p, err_r)))
            if len(results) == 1 and results[0].converged and self.limit_margin(q) >= _GOOD_MARGIN_RAD:
                return results[0]  # from the preferred posture itself: nothing can be closer to it
        converged = [r for r in results if r.converged]
        good = [r for r in converged if self.limit_margin(r.q) >= _GOOD_MARGIN_RAD]
        if good:
            return min(good, key=lambda r: float(np.linalg.norm(r.q - self.q_posture)))
        if converged:
            return max(converged, key=lambda r: self.limit_margin(r.q))
        return min(results, key=lambda r: r.position_error_m)

    def limit_margin(self, q: np.ndarray) -> float:
        """Smallest distance of the joints (J,) from the solver's limits [rad, or m for a prismatic joint].

        Args:
            q: Joint positions, shape (J,), in [rad], or [m] for a prismatic joint.
        """
        return float(np.min(np.minimum(q - self.q_lower, self.q_upper - q)))

    def solve_rolls(self, q_solution: ArrayLike, n_rolls: int) -> list[IkResult]:
        """Solutions with the same tip position and needle axis, turned about the needle by 360/n_rolls deg steps.

        The needle's roll is the redundancy a 5-D task leaves besides the elbow; other rolls place the wrist elsewhere,
        which matters for motions that follow.

        Args:
            q_solution: The solution to start from, shape (J,), in [rad], or [m] for a prismatic joint.
            n_rolls: Number of rolls tried, the given one included.

        Returns:
            The converged solutions, the given one first.
        """
        q0 = self.kinematics.as_joint_batch(q_solution, "q_solution")[0]
        pose = self.kinematics.tip_pose(q0)
        out = [IkResult(q0, 0.0, 0.0, True)]
        for k in range(1, n_rolls):
            angle = 2.0 * np.pi * k / n_rolls
            c, s = np.cos(angle), np.sin(angle)
            R = pose.R @ np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
            result = self.solve_from(q0, pose.pos_m, R, full_orientation=True)
            if result.converged:
                out.append(result)
        return out

    def _seeds(self, tip_pos_m: np.ndarray) -> list[np.ndarray]:
        """Deterministic start postures, the preferred one first.

        Then arm shapes facing the target (7-axis arm) or postures spread over the joint ranges (any other arm).

        The shapes cover both elbow and wrist flips of the z-y-z-y-z-y-z arm (signs of joints 2, 4, 6 with
        joint 5 at 0 or pi), so tilted needles that need a flipped wrist are found too.
        """
        home = self.q_posture
        if self.kinematics.n_joints != 7:
            return [home.copy(), *spread_postures(self.q_lower, self.q_upper, _GENERIC_SEEDS)]
        azimuth = float(np.arctan2(tip_pos_m[1], tip_pos_m[0]))
        seeds = [home.copy()]
        for j5 in (0.0, np.pi, -np.pi):
            for j1 in (azimuth, azimuth - 0.7, azimuth + 0.7):
                for j2, j4, j6 in _ARM_SHAPES:
                    seed = np.array([j1, j2, 0.0, j4, j5, j6 if j5 == 0.0 else -j6, 0.0])
                    seeds.append(np.clip(seed, self.q_lower, self.q_upper))
        return seeds

    def track(
        self, q_start: ArrayLike, tip_pos_m: ArrayLike, R_target: ArrayLike, *, full_orientation: bool = True
    ) -> PathIkResult:
        """Follow n tip poses by continuation from ``q_start`` (smooth redundancy resolution along a path).

        Args:
            q_start: (J,) joint vector at the first pose [rad, or m for a prismatic joint].
            tip_pos_m: (n, 3) tip positions in base_link [m].
            R_target: (n, 3, 3) or (3, 3) (constant) orientations.
            full_orientation: Hold the whole orientation (else only the needle axis).
        """
        q0 = self.kinematics.as_joint_batch(q_start, "q_start")[0]
        pos = np.ascontiguousarray(tip_pos_m, dtype=np.float64)
        if pos.ndim != 2 or pos.shape[1] != 3 or not np.isfinite(pos).all():
            raise KinematicsInputError(f"tip_pos_m must be a finite (n, 3) array, got shape {pos.shape}")
        R = np.asarray(R_target, dtype=np.float64)
        R = np.ascontiguousarray(np.broadcast_to(R, (len(pos), 3, 3)) if R.shape == (3, 3) else R)
        if R.shape != (len(pos), 3, 3) or not np.isfinite(R).all():
            raise KinematicsInputError(f"R_target must be finite (3, 3) or ({len(pos)}, 3, 3), got {R.shape}")
        q, err_p, err_r = track_poses(q0, pos, R, full_orientation, *self._args())
        ok = bool(np.all(err_p < self.settings.tol_pos_m) and np.all(err_r < self.settings.tol_rot_rad))
        return PathIkResult(q, err_p, err_r, ok)


def spread_postures(q_lower: np.ndarray, q_upper: np.ndarray, count: int) -> list[np.ndarray]:
    """``count`` joint vectors spread over the box [q_lower, q_upper] (J,) by a Halton sequence (deterministic).

    Points k = 1 .. count; coordinate j uses the j-th prime as base, so the postures fill the ranges evenly.

    Args:
        q_lower: Lower corner of the box, shape (J,), in the joints' units ([rad], or [m] for a prismatic joint).
        q_upper: Upper corner of the box, shape (J,), in the joints' units.
        count: Number of joint vectors.

    Raises:
        KinematicsInputError: More joints than the sequence has primes (12).
    """
    primes = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37)
    n = len(q_lower)
    if n > len(primes):
        raise KinematicsInputError(f"spread postures need at most {len(primes)} joints, got {n}")
    out = []
    for k in range(1, count + 1):
        u = np.array([_radical_inverse(k, primes[j]) for j in range(n)])
        out.append(q_lower + u * (q_upper - q_lower))
    return out


def _radical_inverse(k: int, base: int) -> float:
    """The van der Corput radical inverse of ``k`` in ``base``, in [0, 1)."""
    value, scale = 0.0, 1.0 / base
    while k > 0:
        value += (k % base) * scale
        k //= base
        scale /= base
    return value
