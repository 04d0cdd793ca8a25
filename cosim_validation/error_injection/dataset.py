"""The error-learning dataset: what a physical robot did at each settled step, as columns.

One row per settled sample ([Barragan et al. 2024], IV-B: the robot stops before each measurement). Columns (units
in the
names; joint columns carry the joint's unit, rad, or m for a prismatic joint):

========================================  ========  ==================================================
column                                    type      meaning
========================================  ========  ==================================================
``set``                                   string    ``train`` (random goals) or ``test`` (held-out motion)
``segment``                               int64     a run from one reset; the history restarts with it
``time_s``                                float64   robot time since the segment's reset [s]
``setpoint_<joint>_<unit>``               float64   the setpoint the controller sent, per joint
``measured_<joint>_<unit>``               float64   the encoders' reading, per joint
``marker_{x,y,z}_m``                      float64   the tool's marker in the tracker's frame [m]; NaN: not seen
``marker_q{w,x,y,z}``                     float64   its orientation (unit quaternion); NaN: not seen
``marker_registration_error_m``           float64   the tracker's registration error [m]; NaN: not seen
========================================  ========  ==================================================

The Parquet file's schema metadata ``cosim_validation.error_dataset`` holds JSON: ``format``, ``robot``
(joint names, model hash: :mod:`~.robot_identity`), ``joint_units``, ``source`` (how it was collected) and the
collection's settings. The documented CSV import takes the same columns (``set`` and ``segment`` optional; the
orientation may be given as a rotation vector ``marker_r{x,y,z}_rad`` instead of ``marker_q*``).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from cosim_validation.common.quoting import one_line
from cosim_validation.error_injection.error_types import DatasetError
from cosim_validation.error_injection.robot_identity import RobotIdentity

SETS = ("train", "test")
MARKER_POSITION = ("marker_x_m", "marker_y_m", "marker_z_m")
MARKER_QUATERNION = ("marker_qw", "marker_qx", "marker_qy", "marker_qz")
#: In the CSV import only: the marker's orientation as a rotation vector [rad], in place of the quaternion.
MARKER_ROTVEC = ("marker_rx_rad", "marker_ry_rad", "marker_rz_rad")
MARKER_ERROR = "marker_registration_error_m"


def joint_columns(prefix: str, joint_names: tuple[str, ...], units: tuple[str, ...]) -> list[str]:
    """``<prefix>_<joint>_<unit>`` per joint.

    Args:
        prefix: ``setpoint`` or ``measured``.
        joint_names: The J joint names, in joint order.
        units: The unit of each joint, ``rad`` or ``m``, shape (J,).
    """
    return [f"{prefix}_{name}_{unit}" for name, unit in zip(joint_names, units, strict=True)]


@dataclass(frozen=True)
class ErrorDataset:
    """Rows of settled samples of one robot (see the module docstring for the columns).

    Attributes:
        robot: The robot the rows come from.
        joint_units: (J,) ``rad`` or ``m`` per joint.
        set_name: (n,) ``train`` or ``test``.
        segment: (n,) int64 run from one reset.
        time_s: (n,) robot time [s].
        q_setpoint: (n, J) setpoints [rad | m].
        q_measured: (n, J) measured joints [rad | m].
        marker_pos_m: (n, 3) marker position in the tracker frame [m] (NaN: not seen).
        marker_quat_wxyz: (n, 4) marker orientation (NaN: not seen).
        marker_error_m: (n,) registration error [m] (NaN: not seen).
        meta: JSON metadata (source, collection settings).
    """

    robot: RobotIdentity
    joint_units: tuple[str, ...]
    set_name: np.ndarray
    segment: np.ndarray
    time_s: np.ndarray
    q_setpoint: np.ndarray
    q_measured: np.ndarray
    marker_pos_m: np.ndarray
    marker_quat_wxyz: np.ndarray
    marker_error_m: np.ndarray
    meta: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        n, j = len(self.time_s), self.robot.n_joints
        shapes = {
            "set": (self.set_name, (n,)),
            "segment": (self.segment, (n,)),
            "setpoint": (self.q_setpoint, (n, j)),
            "measured": (self.q_measured, (n, j)),
            "marker position": (self.marker_pos_m, (n, 3)),
            "marker orientation": (self.marker_quat_wxyz, (n, 4)),
            "registration error": (self.marker_error_m, (n,)),
        }
        for what, (value, shape) in shapes.items():
            if np.shape(value) != shape:
                raise DatasetError(f"dataset: {what} has shape {np.shape(value)}, expected {shape}")
        if len(self.joint_units) != j or any(u not in ("rad", "m") for u in self.joint_units):
            raise DatasetError(f"dataset: joint units {list(self.joint_units)}, expected rad or m per joint")
        bad = sorted(set(np.unique(self.set_name)) - set(SETS))
        if bad:  # a cell of the user's file: quoted short (a 2 MB value was echoed whole)
            shown = ", ".join(repr(one_line(str(v), 60)) for v in bad[:3]) + (", ..." if len(bad) > 3 else "")
            raise DatasetError(f"dataset: column 'set': values {shown}; expected {' or '.join(SETS)}")

    @property
    def n_rows(self) -> int:
        """N."""
        return len(self.time_s)

    def rows(self, mask: np.ndarray) -> ErrorDataset:
        """The rows where ``mask`` (n,) is True, in order.

        Args:
            mask: Rows to keep, shape (n,), bool.
        """
        take = np.asarray(mask, dtype=bool)
        return ErrorDataset(
            self.robot,
            self.joint_units,
            self.set_name[take],
            self.segment[take],
            self.time_s[take],
            self.q_setpoint[take],
            self.q_measured[take],
            self.marker_pos_m[take],
            self.marker_quat_wxyz[take],
            self.marker_error_m[take],
            dict(self.meta),
        )

    def of_set(self, name: str) -> ErrorDataset:
        """The rows of set ``name`` (``train`` or ``test``).

        Args:
            name: ``train`` or ``test``.
        """
        return self.rows(self.set_name == name)

    def segment_starts(self) -> np.ndarray:
        """(n,) bool: True at each row whose segment differs from the row before (and the first)."""
        starts = np.ones(self.n_rows, dtype=bool)
        starts[1:] = self.segment[1:] != self.segment[:-1]
        return starts

    @property
    def marker_seen(self) -> np.ndarray:
        """(n,) bool: the tracker saw the marker (finite pose and registration error)."""
        return (  # type: ignore[no-any-return]
            np.isfinite(self.marker_pos_m).all(axis=1)
            & np.isfinite(self.marker_quat_wxyz).all(axis=1)
            & np.isfinite(self.marker_error_m)
        )

    def columns(self) -> dict[str, np.ndarray]:
        """Column name -> values, in file order."""
        names, units = self.robot.joint_names, self.joint_units
        out: dict[str, np.ndarray] = {
            "set": self.set_name.astype(str),
            "segment": self.segment.astype(np.int64),
            "time_s": self.time_s.astype(np.float64),
        }
        out |= dict(zip(joint_columns("setpoint", names, units), self.q_setpoint.T, strict=True))
        out |= dict(zip(joint_columns("measured", names, units), self.q_measured.T, strict=True))
        out |= dict(zip(MARKER_POSITION, self.marker_pos_m.T, strict=True))
        out |= dict(zip(MARKER_QUATERNION, self.marker_quat_wxyz.T, strict=True))
        return out | {MARKER_ERROR: self.marker_error_m}

    def content_hash(self) -> str:
        """SHA-256 of every column (names and values): the training-data hash of a model."""
        digest = hashlib.sha256()
        for name, values in self.columns().items():
            digest.update(name.encode())
            digest.update(
                np.ascontiguousarray(values).tobytes() if values.dtype.kind != "U" else "|".join(values).encode()
            )
        return digest.hexdigest()
