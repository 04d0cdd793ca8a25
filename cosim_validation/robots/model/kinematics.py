"""Forward kinematics, needle-tip pose and tip Jacobian of a serial arm with a needle of given length."""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from cosim_validation.robots.model.errors import KinematicsInputError
from cosim_validation.robots.model.fk_kernels import fk_batch, jacobian_from_frames
from cosim_validation.robots.model.kinematic_chain import KinematicChain, load_chain

#: Needle lengths a surgical needle can have [m]: 1 mm to 1 m (the case study's is 0.3 m). Outside, MuJoCo
#: cannot build the needle (1e-9 m and 1e300 m ended in a traceback).
NEEDLE_LENGTH_M: tuple[float, float] = (1e-3, 1.0)


class RecordKinematics(NamedTuple):
    """The kinematic arrays of a :class:`~cosim_validation.common.record.TrajectoryRecord` for n joint vectors.

    Attributes:
        joint_pos_m: (n, J, 3) joint origins in base_link [m].
        joint_axis: (n, J, 3) unit joint axes in base_link.
        tip_pos_m: (n, 3) needle-tip positions in base_link [m].
        tip_quat_wxyz: (n, 4) needle-tip orientations (w >= 0); the frame's +z is the needle direction.
    """

    joint_pos_m: np.ndarray
    joint_axis: np.ndarray
    tip_pos_m: np.ndarray
    tip_quat_wxyz: np.ndarray


class TipPose(NamedTuple):
    """Pose of the needle tip in base_link.

    Attributes:
        pos_m: (3,) tip position [m].
        R: (3, 3) orientation; column 2 (+z) is the unit needle direction, towards the tip.
    """

    pos_m: np.ndarray
    R: np.ndarray

    @property
    def axis(self) -> np.ndarray:
        """(3,) unit needle direction (towards the tip)."""
        return self.R[:, 2].copy()


class Kinematics:
    """Kinematics of an arm from its URDF plus a straight needle along the mount frame's +z.

    Args:
        chain: The serial chain (see :func:`~cosim_validation.robots.model.kinematic_chain.load_chain`).
        needle_length_m: Needle length from the mount frame to the tip [m], within :data:`NEEDLE_LENGTH_M`
            (1 mm to 1 m).

    Raises:
        KinematicsInputError: The needle length is not a number from 1 mm to 1 m.
    """

    def __init__(self, chain: KinematicChain, needle_length_m: float) -> None:
        lo, hi = NEEDLE_LENGTH_M
        if not isinstance(needle_length_m, (int, float)) or not lo <= needle_length_m <= hi:
            raise KinematicsInputError(
                f"needle_length_m must be a needle's length, {lo:g} to {hi:g} m, got {needle_length_m!r}"
            )
        self.chain = chain
        self.needle_length_m = float(needle_length_m)
        T_mount_tip = np.eye(4)
        T_mount_tip[2, 3] = self.needle_length_m
        self.T_last_tip: np.ndarray = chain.T_last_mount @ T_mount_tip
        self.T_last_tip.setflags(write=False)

    @classmethod
    def from_urdf(cls, urdf_path: str | Path, needle_length_m: float, mount_frame: str = "needle_mount") -> Kinematics:
        """Build from a URDF file (read with pinocchio).

        Args:
            urdf_path: The arm's URDF file.
            needle_length_m: Needle length from the mount frame to the tip, in [m].
            mount_frame: The URDF frame the needle is mounted on; the needle runs along its +z.
        """
        return cls(load_chain(urdf_path, mount_frame), needle_length_m)

    def with_needle_length(self, needle_length_m: float) -> Kinematics:
        """The same arm with another needle length [m].

        Args:
            needle_length_m: The new needle length from the mount frame to the tip, in [m], within
                :data:`NEEDLE_LENGTH_M` (1 mm to 1 m).

        Raises:
            KinematicsInputError: The needle length is not a number from 1 mm to 1 m.
        """
        return Kinematics(self.chain, needle_length_m)

    # ------------------------------------------------------------------ properties
    @property
    def joint_names(self) -> tuple[str, ...]:
        """Names of the J joints, base to tool."""
        return self.chain.joint_names

    @property
    def joint_units(self) -> tuple[str, ...]:
        """Unit of each joint's position, base to tool: ``"m"`` for a prismatic joint, else ``"rad"``."""
        return tuple(self.chain.joint_unit(j) for j in range(self.n_joints))

    @property
    def n_joints(self) -> int:
        """Number of joints J."""
        return self.chain.n_joints

    @property
    def q_lower(self) -> np.ndarray:
        """(J,) URDF lower position limits [rad, or m for a prismatic joint]."""
        return self.chain.q_lower

    @property
    def q_upper(self) -> np.ndarray:
        """(J,) URDF upper position limits [rad, or m for a prismatic joint]."""
        return self.chain.q_upper

    # ------------------------------------------------------------------ input checks
    def as_joint_batch(self, q: ArrayLike, name: str = "q") -> np.ndarray:
        """``q`` as a finite (n, J) float64 array; a single (J,) vector becomes (1, J).

        Args:
            q: Joint vectors, shape (n, J) or (J,), in [rad], or [m] for a prismatic joint.
            name: What the error message calls ``q``.

        Returns:
            The joint vectors, shape (n, J), float64, C-contiguous.

        Raises:
            KinematicsInputError: Wrong shape, or NaN/inf entries (naming the first one).
        """
        arr = np.asarray(q, dtype=np.float64)
        if arr.ndim == 1:
            arr = arr[None, :]
        if arr.ndim != 2 or arr.shape[1] != self.n_joints:
            raise KinematicsInputError(
                f"{name} must have shape (n, {self.n_joints}) or ({self.n_joints},), got {np.shape(q)}"
            )
        if not np.isfinite(arr).all():
            row, col = np.argwhere(~np.isfinite(arr))[0]
            raise KinematicsInputError(
                f"{name}[{row}, {col}] ({self.joint_names[col]}) is not finite: {arr[row, col]!r}"
            )
        return np.ascontiguousarray(arr)

    def as_joint_vector(self, q: ArrayLike, name: str = "q") -> np.ndarray:
        """``q`` as one finite (1, J) float64 row, for the methods that take one joint vector.

        Args:
            q: One joint vector, shape (J,), in [rad], or [m] for a prismatic joint.
            name: What the error message calls ``q``.

        Returns:
            The joint vector as a batch of one, shape (1, J), float64, C-contiguous.

        Raises:
            KinematicsInputError: Not shape (J,) (a batch of several would otherwise be cut to its first row), or
                NaN/inf entries.
        """
        if np.ndim(q) != 1:
            raise KinematicsInputError(
                f"{name} must be one joint vector of shape ({self.n_joints},), got {np.shape(q)}"
            )
        return self.as_joint_batch(q, name)

    def limit_violations(self, q: ArrayLike, margin_rad: float = 0.0) -> list[str]:
        """Descriptions of the joints of a (J,) vector outside [lower + margin, upper - margin]; empty if none.

        Args:
            q: One joint vector, shape (J,), in [rad], or [m] for a prismatic joint.
            margin_rad: How far inside each URDF limit the joints must stay, in [rad] (the same number is taken as [m]
                for a prismatic joint).
        """
        qv = self.as_joint_vector(q)[0]
        lower, upper = self.q_lower + margin_rad, self.q_upper - margin_rad
        unit = self.chain.joint_unit
        return [
            f"{self.joint_names[j]} = {float(qv[j])!r} {unit(int(j))} outside [{lower[j]:.4f}, {upper[j]:.4f}]"
            for j in np.flatnonzero((qv < lower) | (qv > upper))
        ]

    def check_limits(self, q: ArrayLike, margin_rad: float = 0.0, name: str = "q") -> np.ndarray:
        """``q`` (J,) if finite and within the URDF limits (shrunk by ``margin_rad``), else raise.

        Args:
            q: One joint vector, shape (J,), in [rad], or [m] for a prismatic joint.
            margin_rad: How far inside each URDF limit the joints must stay, in [rad] (the same number is taken as [m]
                for a prismatic joint).
            name: What the error message calls ``q``.

        Returns:
            The joint vector, shape (J,), float64.

        Raises:
            KinematicsInputError: Naming every joint out of its limits.
        """
        row: np.ndarray = self.as_joint_vector(q, name)[0]  # a malformed q is named as the caller calls it
        violations = self.limit_violations(row, margin_rad)
        if violations:
            raise KinematicsInputError(f"{name} violates joint limits: {'; '.join(violations)}")
        return row

    # ------------------------------------------------------------------ kinematics
    def record_arrays(self, q: ArrayLike) -> RecordKinematics:
        """Joint origins, joint axes and tip poses of n joint vectors (n, J), as a TrajectoryRecord holds them.

        Args:
            q: Joint vectors, shape (n, J) or one (J,), in [rad], or [m] for a prismatic joint.

        Returns:
            The arrays of :class:`RecordKinematics`, n rows each, in base_link.
        """
        joint_pos, joint_axis, tip_pos, _, tip_quat = self._fk(self.as_joint_batch(q))
        return RecordKinematics(joint_pos, joint_axis, tip_pos, tip_quat)

    def record_arrays_where_known(self, q: np.ndarray) -> RecordKinematics:
        """:meth:`record_arrays` of the samples of (n, J) ``q`` whose joints are all known; NaN in the others.

        Args:
            q: Joint vectors, shape (n, J), in [rad], or [m] for a prismatic joint; NaN where a joint is not known.

        Returns:
            The arrays of :class:`RecordKinematics`, n rows each, in base_link; NaN rows for the samples not known.
        """
        known = np.isfinite(q).all(axis=1)
        if known.all():
            return self.record_arrays(q)
        n, j = q.shape
        out = RecordKinematics(
            np.full((n, j, 3), np.nan), np.full((n, j, 3), np.nan), np.full((n, 3), np.nan), np.full((n, 4), np.nan)
        )
        if known.any():
            for mine, theirs in zip(out, self.record_arrays(q[known]), strict=True):
                mine[known] = theirs
        return out

    def tip_poses(self, q: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
        """Tip positions and orientations of n joint vectors, in base_link.

        Args:
            q: Joint vectors, shape (n, J) or one (J,), in [rad], or [m] for a prismatic joint.

        Returns:
            Tip positions, shape (n, 3), in [m], and orientations, shape (n, 3, 3), whose column 2 is the needle
            direction.
        """
        _, _, tip_pos, tip_R, _ = self._fk(self.as_joint_batch(q))
        return tip_pos, tip_R

    def tip_pose(self, q: ArrayLike) -> TipPose:
        """Needle-tip pose of one joint vector (J,).

        Args:
            q: One joint vector, shape (J,), in [rad], or [m] for a prismatic joint.
        """
        _, _, tip_pos, tip_R, _ = self._fk(self.as_joint_vector(q))
        return TipPose(tip_pos[0], tip_R[0])

    def tip_transform(self, q: ArrayLike) -> np.ndarray:
        """(4, 4) homogeneous transform of the needle-tip frame in base_link for one joint vector (J,).

        Args:
            q: One joint vector, shape (J,), in [rad], or [m] for a prismatic joint.

        Returns:
            The tip frame in base_link, shape (4, 4), translation in [m]; its +z is the needle direction.
        """
        pose = self.tip_pose(q)
        T = np.eye(4)
        T[:3, :3] = pose.R
        T[:3, 3] = pose.pos_m
        return T

    def tip_jacobian(self, q: ArrayLike) -> np.ndarray:
        """(6, J) geometric Jacobian of the tip for one joint vector: rows (v [m/s], omega [rad/s]) in base_link.

        Args:
            q: One joint vector, shape (J,), in [rad], or [m] for a prismatic joint.

        Returns:
            Shape (6, J): the tip's linear velocity [m/s] over its angular velocity [rad/s], in base_link, per unit
            joint velocity ([rad/s], or [m/s] for a prismatic joint).
        """
        joint_pos, joint_axis, tip_pos, _, _ = self._fk(self.as_joint_vector(q))
        return np.asarray(jacobian_from_frames(joint_pos[0], joint_axis[0], self.chain.joint_type, tip_pos[0]))

    def needle_segments(self, q: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
        """The needle of each joint vector as a segment from its start (mount) point to its tip.

        Args:
            q: Joint vectors, shape (n, J) or one (J,), in [rad], or [m] for a prismatic joint.

        Returns:
            Needle start (mount) points, shape (n, 3), and tip points, shape (n, 3), in base_link, in [m].
        """
        tip_pos, tip_R = self.tip_poses(q)
        return tip_pos - self.needle_length_m * tip_R[:, :, 2], tip_pos

    def _fk(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        chain = self.chain
        result = fk_batch(q, chain.T_parent_joint, chain.axis_in_joint, chain.joint_type, self.T_last_tip)
        return (result[0], result[1], result[2], result[3], result[4])
