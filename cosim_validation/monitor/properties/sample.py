"""One sample of one robot, and a block of samples as column arrays (what atoms are computed on)."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from cosim_validation.common.record import (
    NO_MARKER_POS,
    NO_MARKER_QUAT,
    RobotRole,
    Stage,
    SupervisorMode,
    TrajectoryRecord,
)
from cosim_validation.monitor.properties.errors import TraceError


@dataclass(frozen=True)
class Sample:
    """One sample of one robot, as pushed into the online monitor (one row of a :class:`TrajectoryRecord`).

    Attributes:
        robot: Which robot produced it (EXPECTED samples are the plan the others are compared with).
        t_s: Time since the case start [s].
        stage: Stage of the case at this sample.
        q_setpoint: (J,) commanded joint positions [rad], or [m] for a prismatic joint.
        q_measured: (J,) measured joint positions [rad], or [m] for a prismatic joint.
        joint_pos_m: (J, 3) origin of every joint in base_link [m].
        joint_axis: (J, 3) unit rotation axis of every joint in base_link.
        tip_pos_m: (3,) needle tip from forward kinematics, base_link [m].
        tip_quat_wxyz: (4,) needle-tip orientation (+z along the needle towards the tip).
        actual_tip_pos_m: (3,) tracked or ground-truth tip [m]; NaN if unknown.
        actual_tip_quat_wxyz: (4,) tracked tip orientation; NaN if unknown.
        marker_pos_m: (3,) the tool's marker in an optical tracker's frame [m]; NaN if not seen (keyword only).
        marker_quat_wxyz: (4,) its orientation in the tracker's frame; NaN if not seen.
        marker_error_m: The tracker's registration error [m]; NaN if not seen.
        supervisor: The task supervisor's mode when the sample's setpoint was sent (keyword only; UNSUPERVISED
            without a supervisor).
    """

    robot: RobotRole
    t_s: float
    stage: Stage
    q_setpoint: np.ndarray
    q_measured: np.ndarray
    joint_pos_m: np.ndarray
    joint_axis: np.ndarray
    tip_pos_m: np.ndarray
    tip_quat_wxyz: np.ndarray
    actual_tip_pos_m: np.ndarray
    actual_tip_quat_wxyz: np.ndarray
    marker_pos_m: np.ndarray = dataclasses.field(default_factory=lambda: NO_MARKER_POS, kw_only=True)
    marker_quat_wxyz: np.ndarray = dataclasses.field(default_factory=lambda: NO_MARKER_QUAT, kw_only=True)
    marker_error_m: float = dataclasses.field(default=math.nan, kw_only=True)
    supervisor: SupervisorMode = dataclasses.field(default=SupervisorMode.UNSUPERVISED, kw_only=True)

    @classmethod
    def from_record(cls, record: TrajectoryRecord, k: int) -> Sample:
        """Sample ``k`` of ``record``.

        Args:
            record: The robot's trajectory.
            k: 0-based index of the sample, 0 <= k < ``record.n_samples``.
        """
        return cls(
            robot=record.robot,
            t_s=float(record.t_s[k]),
            stage=Stage(int(record.stage[k])),
            q_setpoint=record.q_setpoint[k],
            q_measured=record.q_measured[k],
            joint_pos_m=record.joint_pos_m[k],
            joint_axis=record.joint_axis[k],
            tip_pos_m=record.tip_pos_m[k],
            tip_quat_wxyz=record.tip_quat_wxyz[k],
            actual_tip_pos_m=record.actual_tip_pos_m[k],
            actual_tip_quat_wxyz=record.actual_tip_quat_wxyz[k],
            marker_pos_m=record.marker_pos_m[k],
            marker_quat_wxyz=record.marker_quat_wxyz[k],
            marker_error_m=float(record.marker_error_m[k]),
            supervisor=SupervisorMode(int(record.supervisor[k])),
        )


def record_samples(record: TrajectoryRecord) -> list[Sample]:
    """Every sample of ``record``, in order (for replaying a record into the online monitor).

    Args:
        record: The robot's trajectory.
    """
    return [Sample.from_record(record, k) for k in range(record.n_samples)]


@dataclass(frozen=True)
class Block:
    """n consecutive samples of one robot as column arrays; every position in base_link [m].

    Attributes:
        t_s: (n,) float64 times [s].
        stage: (n,) uint8 stages.
        supervisor: (n,) uint8 supervisor modes (:class:`SupervisorMode`).
        q_setpoint, q_measured: (n, J) joint positions [rad], or [m] for a prismatic joint.
        joint_pos_m, joint_axis: (n, J, 3) joint origins [m] and unit axes.
        tip_pos_m: (n, 3); tip_quat_wxyz: (n, 4); actual_tip_pos_m: (n, 3); actual_tip_quat_wxyz: (n, 4).
        needle_length_m: Needle length [m].
    """

    t_s: np.ndarray
    stage: np.ndarray
    q_setpoint: np.ndarray
    q_measured: np.ndarray
    joint_pos_m: np.ndarray
    joint_axis: np.ndarray
    tip_pos_m: np.ndarray
    tip_quat_wxyz: np.ndarray
    actual_tip_pos_m: np.ndarray
    actual_tip_quat_wxyz: np.ndarray
    needle_length_m: float
    supervisor: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0, dtype=np.uint8), kw_only=True)

    @property
    def n(self) -> int:
        """Number of samples."""
        return int(self.t_s.shape[0])

    @classmethod
    def from_record(cls, record: TrajectoryRecord) -> Block:
        """All samples of ``record`` (views, no copy).

        Args:
            record: The robot's trajectory.
        """
        return cls(
            record.t_s,
            record.stage,
            record.q_setpoint,
            record.q_measured,
            record.joint_pos_m,
            record.joint_axis,
            record.tip_pos_m,
            record.tip_quat_wxyz,
            record.actual_tip_pos_m,
            record.actual_tip_quat_wxyz,
            record.needle_length_m,
            supervisor=record.supervisor,
        )

    @classmethod
    def from_sample(cls, sample: Sample, needle_length_m: float, n_joints: int) -> Block:
        """One sample as a block of n = 1, after checking its shapes.

        Args:
            sample: The sample.
            needle_length_m: The needle's length in [m].
            n_joints: J, the number of joints the sample's joint fields must have.

        Raises:
            TraceError: A field has the wrong shape or the time is not finite.
        """
        if not math.isfinite(sample.t_s):
            raise TraceError(f"{sample.robot.label} sample: time must be finite, got {sample.t_s!r}")
        shapes = {
            "q_setpoint": (n_joints,),
            "q_measured": (n_joints,),
            "joint_pos_m": (n_joints, 3),
            "joint_axis": (n_joints, 3),
            "tip_pos_m": (3,),
            "tip_quat_wxyz": (4,),
            "actual_tip_pos_m": (3,),
            "actual_tip_quat_wxyz": (4,),
        }
        rows = {}
        for name, shape in shapes.items():
            value = np.asarray(getattr(sample, name), dtype=np.float64)
            if value.shape != shape:
                raise TraceError(
                    f"{sample.robot.label} sample at t={sample.t_s!r} s: {name} has shape {value.shape}, "
                    f"expected {shape}"
                )
            rows[name] = value[None]
        return cls(
            t_s=np.array([sample.t_s], dtype=np.float64),
            stage=np.array([int(sample.stage)], dtype=np.uint8),
            supervisor=np.array([int(sample.supervisor)], dtype=np.uint8),
            needle_length_m=needle_length_m,
            **rows,
        )

    @classmethod
    def concat(cls, blocks: list[Block], n_joints: int, needle_length_m: float) -> Block:
        """The samples of ``blocks`` one after the other (an empty block if there are none).

        Args:
            blocks: The blocks, in order.
            n_joints: J, the number of joints of an empty block.
            needle_length_m: The needle's length of an empty block, in [m] (otherwise the first block's is kept).
        """
        if not blocks:
            return cls(
                np.zeros(0),
                np.zeros(0, dtype=np.uint8),
                np.zeros((0, n_joints)),
                np.zeros((0, n_joints)),
                np.zeros((0, n_joints, 3)),
                np.zeros((0, n_joints, 3)),
                np.zeros((0, 3)),
                np.zeros((0, 4)),
                np.zeros((0, 3)),
                np.zeros((0, 4)),
                needle_length_m,
            )
        names = [f.name for f in dataclasses.fields(cls) if f.name != "needle_length_m"]
        columns = {name: np.concatenate([getattr(b, name) for b in blocks]) for name in names}
        return cls(needle_length_m=blocks[0].needle_length_m, **columns)

    def take(self, index: np.ndarray) -> Block:
        """The samples at ``index`` (an (m,) int array), in that order.

        Args:
            index: 0-based sample indices, shape (m,), int; they may repeat and come in any order.
        """
        return Block(
            self.t_s[index],
            self.stage[index],
            self.q_setpoint[index],
            self.q_measured[index],
            self.joint_pos_m[index],
            self.joint_axis[index],
            self.tip_pos_m[index],
            self.tip_quat_wxyz[index],
            self.actual_tip_pos_m[index],
            self.actual_tip_quat_wxyz[index],
            self.needle_length_m,
            supervisor=self.supervisor[index],
        )
