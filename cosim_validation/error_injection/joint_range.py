"""A dataset's joints against the arm's joint limits: a file in degrees or millimetres is refused, not learned from.

A recorded arm may overshoot a limit a little (its controller's soft limit, encoder noise); a value far beyond it is
of another unit or another arm.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from cosim_validation.error_injection.dataset import ErrorDataset, joint_columns
from cosim_validation.error_injection.error_types import DatasetError

if TYPE_CHECKING:
    from cosim_validation.robots.model import Kinematics

#: How far beyond its URDF limit a recorded joint may lie, by unit (rad, m)
LIMIT_SLACK = {"rad": 0.1, "m": 0.01}
_OTHER_UNIT = {"rad": "degrees", "m": "millimetres"}


def check_joint_range(dataset: ErrorDataset, kinematics: Kinematics, source: str) -> None:
    """Refuse a setpoint or measured joint beyond the arm's limits by more than :data:`LIMIT_SLACK`.

    Args:
        dataset: The rows read from ``source``.
        kinematics: The arm the dataset is for (its joint limits and units).
        source: The file, for the message.

    Raises:
        DatasetError: Naming the column, the row, the value and the limits.
    """
    units = kinematics.joint_units
    slack = np.array([LIMIT_SLACK[u] for u in units])
    low, high = kinematics.q_lower - slack, kinematics.q_upper + slack
    for prefix, q in (("setpoint", dataset.q_setpoint), ("measured", dataset.q_measured)):
        outside = (q < low) | (q > high)  # NaN (a sample not recorded) compares False
        if not outside.any():
            continue
        row, j = (int(v) for v in np.argwhere(outside)[0])
        column = joint_columns(prefix, kinematics.joint_names, units)[j]
        raise DatasetError(
            f"{source}: column {column!r}: row {row + 1} holds {q[row, j]:.6g} {units[j]}, beyond the joint's limits "
            f"[{kinematics.q_lower[j]:.4g}, {kinematics.q_upper[j]:.4g}] {units[j]} (in {_OTHER_UNIT[units[j]]}? "
            "the dataset's joints are in rad, and m for a prismatic joint)"
        )
