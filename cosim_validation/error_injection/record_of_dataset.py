"""Recorded robot data as a trajectory record the monitor checks.

The data is an error dataset read from a CRTK-style bag or the dataset CSV (``cosim import-crtk BAG -o X.npz``,
then ``cosim check X.npz``; docs/CRTK.md).

What a recording holds becomes the record's fields: the setpoint as ``q_setpoint``, the encoders as
``q_measured``, the joint origins, axes and tool tip by the model's forward kinematics of the measured joints
(as every record computes them), the marker pose and registration error in the marker fields. What it does not
hold stays unknown: no plan, so every sample is ``Stage.NONE`` (properties naming a stage are UNKNOWN); no
ground truth of the tip (the marker is in the tracker's frame at a hand-eye transform nobody was told), so the
actual tip is NaN; no target. The monitor then decides what needs none of these (obstacles, self-collision,
properties over setpoint and measured joints) and says UNKNOWN, with the reason, for the rest.
"""

from __future__ import annotations

import numpy as np

from cosim_validation.common.record import RobotRole, Stage, TrajectoryRecord, kinematic_record
from cosim_validation.error_injection.dataset import ErrorDataset
from cosim_validation.error_injection.error_types import DatasetError
from cosim_validation.robots.model import Kinematics


def record_of_dataset(
    dataset: ErrorDataset,
    kinematics: Kinematics,
    test_id: str,
    robot: RobotRole = RobotRole.PHYSICAL,
    backend: str = "crtk import",
    source: str = "",
) -> TrajectoryRecord:
    """The rows of ``dataset`` (one recording: one set, times non-decreasing) as one robot's record.

    Args:
        dataset: n rows of the arm ``kinematics`` models (joint values rad, or m for a prismatic joint).
        kinematics: The robot model (joint names must equal the dataset's, in order) with its needle / tool.
        test_id: The record's test id (a name for the recording).
        robot: The role the recorded arm plays (default physical).
        backend: What produced the record, for reports.
        source: The file the rows came from, for error messages (default: the dataset's ``meta['source']``).

    Raises:
        DatasetError: Other joints than the model's, or rows whose time goes backwards (several recordings).
    """
    source = source or str(dataset.meta.get("source", "the dataset"))
    if tuple(dataset.robot.joint_names) != tuple(kinematics.joint_names):
        raise DatasetError(
            f"{source}: joints {', '.join(dataset.robot.joint_names)} differ from the model's "
            f"({', '.join(kinematics.joint_names)})"
        )
    t_s = np.asarray(dataset.time_s, dtype=np.float64)
    if t_s.size > 1 and np.any(np.diff(t_s) < 0):
        first = int(np.argmax(np.diff(t_s) < 0)) + 1
        raise DatasetError(
            f"{source}: time_s goes backwards at row {first} (counting from 0): a record holds one recording"
        )
    n = t_s.shape[0]
    q_measured = np.asarray(dataset.q_measured, dtype=np.float64)
    return kinematic_record(
        kinematics,
        test_id=test_id,
        robot=robot,
        backend=backend,
        t_s=t_s,
        stage=np.full(n, int(Stage.NONE), dtype=np.uint8),
        q_setpoint=dataset.q_setpoint,
        q_measured=q_measured,
        frames=kinematics.record_arrays_where_known(q_measured),
        actual_tip_pos_m=np.full((n, 3), np.nan),
        actual_tip_quat_wxyz=np.full((n, 4), np.nan),
        meta={"source": str(dataset.meta.get("source", source)), "stages": "unknown (no plan)"},
        markers={
            "marker_pos_m": dataset.marker_pos_m,
            "marker_quat_wxyz": _unit(np.asarray(dataset.marker_quat_wxyz, dtype=np.float64)),
            "marker_error_m": np.asarray(dataset.marker_error_m, dtype=np.float64),
        },
    )


def _unit(quat_wxyz: np.ndarray) -> np.ndarray:
    """(n, 4) the quaternions normalised (a dataset takes a tracker's within 10 % of unit; a record holds unit ones).

    NaN rows (not seen) stay NaN.
    """
    with np.errstate(invalid="ignore"):
        return quat_wxyz / np.linalg.norm(quat_wxyz, axis=1, keepdims=True)  # type: ignore[no-any-return]
