"""The one constructor of a record whose kinematic fields come from forward kinematics of its joints."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

import numpy as np

from cosim_validation.common.record.robot_role import RobotRole
from cosim_validation.common.record.trajectory_record import TrajectoryRecord


class JointFrames(Protocol):
    """The kinematic arrays of n joint vectors (:class:`~cosim_validation.robots.model.kinematics.RecordKinematics`).

    Attributes:
        joint_pos_m: (n, J, 3) joint origins in base_link [m].
        joint_axis: (n, J, 3) unit joint axes in base_link.
        tip_pos_m: (n, 3) needle-tip positions in base_link [m].
        tip_quat_wxyz: (n, 4) needle-tip orientations.
    """

    @property
    def joint_pos_m(self) -> np.ndarray:
        """Joint origins in base_link, shape (n, J, 3), in [m]."""
        ...

    @property
    def joint_axis(self) -> np.ndarray:
        """Unit joint axes in base_link, shape (n, J, 3)."""
        ...

    @property
    def tip_pos_m(self) -> np.ndarray:
        """Needle-tip positions in base_link, shape (n, 3), in [m]."""
        ...

    @property
    def tip_quat_wxyz(self) -> np.ndarray:
        """Needle-tip orientations in base_link as (w, x, y, z) quaternions, shape (n, 4)."""
        ...


class RecordModel(Protocol):
    """What the constructor needs of an arm model (:class:`~cosim_validation.robots.model.Kinematics`)."""

    @property
    def joint_names(self) -> tuple[str, ...]:
        """Names of the J actuated joints, base to tool."""
        ...

    @property
    def needle_length_m(self) -> float:
        """Needle length from the mount frame to the tip in [m]."""
        ...

    def record_arrays(self, q: np.ndarray) -> JointFrames:
        """Forward kinematics of joint vectors.

        Args:
            q: Joint vectors, shape (n, J), in [rad] (or [m] for a prismatic joint).

        Returns:
            The joint origins, joint axes and needle tips of the n vectors, in base_link.
        """
        ...


def kinematic_record(
    model: RecordModel,
    *,
    test_id: str,
    robot: RobotRole,
    backend: str,
    t_s: np.ndarray,
    stage: np.ndarray,
    q_setpoint: np.ndarray,
    q_measured: np.ndarray,
    actual_tip_pos_m: np.ndarray | None = None,
    actual_tip_quat_wxyz: np.ndarray | None = None,
    frames: JointFrames | None = None,
    meta: Mapping[str, Any] | None = None,
    markers: Mapping[str, np.ndarray] | None = None,
    supervisor: np.ndarray | None = None,
) -> TrajectoryRecord:
    """A record with joint origins, axes and the needle tip from forward kinematics of the measured joints.

    Args:
        model: The nominal arm and needle.
        test_id: Id of the case.
        robot: Role of the robot.
        backend: What produced the samples (``plan``, an engine name, a bag, ...).
        t_s: (n,) sample times since the case start [s].
        stage: (n,) stage of each sample.
        q_setpoint: (n, J) commanded joints [rad or m].
        q_measured: (n, J) measured joints [rad or m]; forward kinematics of these fills the kinematic fields.
        actual_tip_pos_m: (n, 3) actual tip position in base_link [m]; None: the kinematic tip (a plan's
            expected record).
        actual_tip_quat_wxyz: (n, 4) actual tip orientation in base_link (w, x, y, z); None: the kinematic one.
        frames: Forward kinematics of ``q_measured`` computed already (e.g. only where the joints are known);
            None: computed here with ``model.record_arrays``.
        meta: Scalar metadata of the record.
        markers: The tracked marker's arrays by field name (``marker_pos_m``, ``marker_quat_wxyz``,
            ``marker_error_m``); None: not tracked (NaN).
        supervisor: (n,) supervisor mode of each sample; None: unsupervised.

    Returns:
        The record (its shapes checked by :class:`TrajectoryRecord`).
    """
    fk = frames if frames is not None else model.record_arrays(q_measured)
    return TrajectoryRecord(
        test_id=test_id,
        robot=robot,
        backend=backend,
        joint_names=tuple(model.joint_names),
        needle_length_m=float(model.needle_length_m),
        t_s=t_s,
        stage=stage,
        q_setpoint=q_setpoint,
        q_measured=q_measured,
        joint_pos_m=fk.joint_pos_m,
        joint_axis=fk.joint_axis,
        tip_pos_m=fk.tip_pos_m,
        tip_quat_wxyz=fk.tip_quat_wxyz,
        actual_tip_pos_m=fk.tip_pos_m if actual_tip_pos_m is None else actual_tip_pos_m,
        actual_tip_quat_wxyz=fk.tip_quat_wxyz if actual_tip_quat_wxyz is None else actual_tip_quat_wxyz,
        meta=dict(meta or {}),
        supervisor=supervisor,  # type: ignore[arg-type]  # None: TrajectoryRecord fills UNSUPERVISED
        **dict(markers or {}),
    )
