"""Importing a dVRK calibration collection CSV: joints by number, the marker pose as position and rotation vector.

Calibration scripts of the da Vinci Research Kit write one row per pose with the joints numbered in the arm's
order rather than named, and no time column. This import reads such a file for the configured robot:

=====================================  ===================================================================
column                                 meaning
=====================================  ===================================================================
``setpoint_q1`` .. ``setpoint_qN``     the commanded joints in the robot's joint order [rad; m for an
                                       insertion (prismatic) joint]
``measured_q1`` .. ``measured_qN``     the encoders' joints, same order and units
``marker_x``, ``marker_y``,            the marker's position in the tracker frame [m]
``marker_z``
``marker_rx``, ``marker_ry``,          its orientation as a rotation vector (axis times angle) [rad]
``marker_rz``
``registration_error``                 the tracker's registration error [m]; empty: marker not seen
=====================================  ===================================================================

Every row is a training row of one segment, in file order (the history of the networks follows the rows);
``time_s`` is 0 on every row (the file has none; nothing but the order is used). A file whose q-columns are for
another joint count, or whose rotation vector has not three columns, is one :class:`DatasetError` naming the
robot, the columns expected and the columns the file has.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import numpy as np

from cosim_validation.common.quoting import one_line
from cosim_validation.error_injection.dataset import ErrorDataset
from cosim_validation.error_injection.error_types import DatasetError
from cosim_validation.error_injection.robot_identity import RobotIdentity

POSITION = ("marker_x", "marker_y", "marker_z")
ROTVEC = ("marker_rx", "marker_ry", "marker_rz")
REGISTRATION_ERROR = "registration_error"
_Q = re.compile(r"^(setpoint|measured)_q(\d+)$")


def is_dvrk_csv(path: str | Path) -> bool:
    """Whether the CSV at ``path`` has the dVRK collection's header (numbered joint columns).

    False when it cannot be read (the reader then says why).

    Args:
        path: The CSV file.
    """
    import csv

    from cosim_validation.common.config.bounded_file import regular_file_problem

    if regular_file_problem(path) is not None:
        return False  # the reader says what it is
    try:
        with open(path, newline="") as stream:
            header = next(csv.reader(stream), [])
    except (OSError, UnicodeDecodeError, csv.Error):
        return False
    return any(_Q.match(c.strip()) for c in header)


def expected_columns(n_joints: int) -> list[str]:
    """The columns of a file for a robot of ``n_joints`` joints.

    Args:
        n_joints: J, the robot's joint count.
    """
    joints = [f"{kind}_q{i}" for kind in ("setpoint", "measured") for i in range(1, n_joints + 1)]
    return [*joints, *POSITION, *ROTVEC, REGISTRATION_ERROR]


def _check_columns(columns: list[str], robot: RobotIdentity, source: str) -> None:
    n = robot.n_joints
    numbered = sorted({int(m.group(2)) for c in columns if (m := _Q.match(c))})
    rotvec = [c for c in columns if re.fullmatch(r"marker_r[a-z]+", c)]
    missing = [c for c in expected_columns(n) if c not in columns]
    problem = None
    if numbered and numbered != list(range(1, n + 1)):
        problem = f"joints q{numbered[0]}..q{numbered[-1]} ({len(numbered)} joints)"
    elif rotvec and sorted(rotvec) != sorted(ROTVEC):
        problem = f"a rotation vector of {len(rotvec)} columns ({', '.join(rotvec)})"
    elif missing:
        problem = f"columns {', '.join(missing)} missing"
    if problem is not None:
        raise DatasetError(
            f"{source}: dVRK collection CSV for robot {'/'.join(robot.joint_names)} ({n} joints): {problem}; "
            f"expected {', '.join(expected_columns(n))}; the file has {', '.join(columns)}"
        )


def _numbers(frame: object, name: str, source: str) -> np.ndarray:
    import pandas as pd

    values = pd.to_numeric(frame[name], errors="coerce").to_numpy(dtype=np.float64)  # type: ignore[index]
    text = frame[name].notna().to_numpy() & ~np.isfinite(values)  # type: ignore[index]
    if text.any():  # text, or a number past a float's range ('1e400' was called text)
        row = int(np.argmax(text))
        cell = one_line(str(frame[name].iloc[row]), 40)  # type: ignore[index]
        raise DatasetError(
            f"{source}: column {name!r}: expected finite numbers, found {cell!r} in data row {row + 1} (line {row + 2})"
        )
    return values  # type: ignore[no-any-return]


def read_dvrk_csv(
    path: str | Path, robot: RobotIdentity, joint_units: tuple[str, ...], warn: Callable[[str], None] | None = None
) -> ErrorDataset:
    """The rows of a dVRK collection CSV for ``robot`` as a dataset (every row ``train``, one segment).

    Args:
        path: The CSV file.
        robot: The robot the rows are of (its joint count must match the file's q-columns).
        joint_units: The unit of each joint, ``rad`` or ``m``, shape (J,).
        warn: Told, in one line, of columns the file has that are not read; None: not told.

    Raises:
        DatasetError: Unreadable, a column missing, q-columns for another joint count, a rotation vector of the
            wrong length, or text in a numeric column.
    """
    from cosim_validation.error_injection.dataset_io import (
        check_marker,
        csv_frame,
        quaternions_of_rotation_vectors,
        report_unread,
    )

    path = Path(path)
    frame = csv_frame(path)
    columns = [str(c) for c in frame.columns]
    _check_columns(columns, robot, str(path))
    n_joints = robot.n_joints

    def block(names: list[str] | tuple[str, ...]) -> np.ndarray:
        return np.stack([_numbers(frame, c, str(path)) for c in names], axis=1)

    q_s = block([f"setpoint_q{i}" for i in range(1, n_joints + 1)])
    q_m = block([f"measured_q{i}" for i in range(1, n_joints + 1)])
    registration = _numbers(frame, REGISTRATION_ERROR, str(path))
    unseen = np.isnan(registration)[:, None]  # an empty registration_error: not seen, whatever the other cells hold
    position, rotvec = np.where(unseen, np.nan, block(POSITION)), np.where(unseen, np.nan, block(ROTVEC))
    quat = quaternions_of_rotation_vectors(rotvec, str(path), ROTVEC)  # a seen row's must be whole
    check_marker(position, registration, str(path), POSITION, REGISTRATION_ERROR)  # as the documented CSV's
    n = len(frame)
    report_unread(path, columns, expected_columns(n_joints), warn)
    meta = {"source": f"dVRK collection CSV {path.name}", "time": "not in the file (0 on every row)"}
    return ErrorDataset(
        robot,
        tuple(joint_units),
        np.full(n, "train"),
        np.zeros(n, dtype=np.int64),
        np.zeros(n),
        q_s,
        q_m,
        position,
        quat,
        registration,
        meta,
    )
