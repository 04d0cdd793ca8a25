"""Compact storage of trajectory records: ~10x smaller than full records, rebuilt by forward kinematics.

A full :meth:`TrajectoryRecord.to_bytes` blob holds every derived array (joint origins and axes, FK tip
pose): ~200 kB for a 46 s case at 10 Hz, 2 GB per 10,000 cases. The compact form keeps what cannot
be derived: times, stages, the supervisor's mode (only if a sample was supervised; a format-2 file without it
decodes as unsupervised), joint setpoints, measured joints, the actual tip pose and a tracked marker (pose and
registration error), quantized to steps far below any sensor's resolution (10 nrad, 10 nm, 1e-9 for quaternions,
1 ns), delta-coded along time and compressed; what is not known in a sample (NaN: a joint of a silent driver, a
marker the tracker did not see) is kept in a mask beside its array, and what is known in no sample is not stored.
Decoding recomputes the joint origins, axes and tip pose with the nominal
:class:`Kinematics` of the run, exactly as :func:`cosim_validation.robots.virtual.execute_trajectory` made them.
The expected record (a plan: measured = setpoint, actual tip = FK tip) stores its joints once.
"""

from __future__ import annotations

import io
import json
from typing import TYPE_CHECKING, Any

import numpy as np

from cosim_validation.common.exceptions import InputError
from cosim_validation.common.record import RobotRole, TrajectoryRecord
from cosim_validation.common.record.kinematic_record import kinematic_record
from cosim_validation.common.record.trajectory_record import read_npz

if TYPE_CHECKING:
    from cosim_validation.robots.model import Kinematics

FORMAT = "cosim_validation.compact_record/2"
#: The first version: an actual tip pose stored only if known in every sample, no NaN joints, no marker (read).
FORMAT_1 = "cosim_validation.compact_record/1"
_NAN_SUFFIX = "~nan"
_CODED = ("q_setpoint", "q_measured", "actual_pos", "actual_quat", "marker_pos", "marker_quat", "marker_error")
#: every entry compact bytes may hold (each coded array may have its NaN mask); no other entry is unpacked
_ENTRIES = frozenset({"header", "t", "stage", "supervisor", *_CODED, *(f"{k}{_NAN_SUFFIX}" for k in _CODED)})
Q_STEP_RAD = 1e-8
POS_STEP_M = 1e-8
QUAT_STEP = 1e-9
T_STEP_S = 1e-9


def _ints(values: np.ndarray, step: float) -> np.ndarray:
    return np.round(np.asarray(values, dtype=np.float64) / step).astype(np.int64)


def _pack(values: np.ndarray, step: float, ints: np.ndarray | None = None) -> np.ndarray:
    """Quantize (n, ...) to multiples of ``step`` (or take ``ints``), delta-code along axis 0, smallest int type."""
    ints = _ints(values, step) if ints is None else ints
    deltas = np.concatenate([ints[:1], np.diff(ints, axis=0)]) if ints.shape[0] else ints
    for dtype in (np.int8, np.int16, np.int32):
        info = np.iinfo(dtype)
        if deltas.size == 0 or (deltas.min() >= info.min and deltas.max() <= info.max):
            return deltas.astype(dtype)
    return deltas


def _unpack(deltas: np.ndarray, step: float, base: np.ndarray | None = None) -> np.ndarray:
    ints = np.cumsum(deltas.astype(np.int64), axis=0)
    return (ints if base is None else ints + base).astype(np.float64) * step


def is_plan(record: TrajectoryRecord) -> bool:
    """Whether the record is an expected trajectory whose measured joints and actual tip are the plan's.

    Args:
        record: A trajectory record of any robot.
    """
    return (
        record.robot is RobotRole.EXPECTED
        and np.array_equal(record.q_setpoint, record.q_measured)
        and np.array_equal(record.actual_tip_pos_m, record.tip_pos_m)
    )


def encode_record(record: TrajectoryRecord) -> bytes:
    """Compact bytes of ``record`` (see the module docstring for what is kept and how).

    Args:
        record: The record to store; its joints in [rad] (or [m] for a prismatic joint), positions in [m],
            times in [s].
    """
    plan = is_plan(record)
    header = {
        "format": FORMAT,
        "test_id": record.test_id,
        "robot": record.robot.label,
        "backend": record.backend,
        "joint_names": list(record.joint_names),
        "needle_length_m": record.needle_length_m,
        "meta": dict(record.meta),
        "plan": plan,
    }
    arrays: dict[str, Any] = {"t": _pack(record.t_s, T_STEP_S), "stage": record.stage}
    if record.supervisor.any():  # a supervised case; an unsupervised one stores nothing more
        arrays["supervisor"] = record.supervisor
    setpoint = _put(arrays, "q_setpoint", record.q_setpoint, Q_STEP_RAD)
    if not plan:  # measured minus setpoint, in steps: small numbers
        _put(arrays, "q_measured", record.q_measured, Q_STEP_RAD, base=setpoint)
        for key, values, step in (
            ("actual_pos", record.actual_tip_pos_m, POS_STEP_M),
            ("actual_quat", record.actual_tip_quat_wxyz, QUAT_STEP),
            ("marker_pos", record.marker_pos_m, POS_STEP_M),
            ("marker_quat", record.marker_quat_wxyz, QUAT_STEP),
            ("marker_error", record.marker_error_m, POS_STEP_M),
        ):
            if np.isfinite(values).any():  # none known (a simulator without a tracker): nothing stored
                _put(arrays, key, values, step)
    buffer = io.BytesIO()
    np.savez_compressed(buffer, header=np.frombuffer(json.dumps(header).encode(), dtype=np.uint8), **arrays)
    return buffer.getvalue()


def _put(
    arrays: dict[str, Any], key: str, values: np.ndarray, step: float, base: np.ndarray | None = None
) -> np.ndarray:
    """Store ``values`` under ``key`` quantized and delta-coded (minus ``base`` steps if given).

    The non-finite entries (a joint or pose not known in a sample) go in a mask ``key~nan`` beside them. Returns the
    steps.
    """
    finite = np.isfinite(values)
    if not finite.all():
        arrays[f"{key}{_NAN_SUFFIX}"] = ~finite
    ints = _ints(np.where(finite, values, 0.0), step)
    arrays[key] = _pack(values, step, ints if base is None else ints - base)
    return ints


def _get(
    arrays: dict[str, np.ndarray], key: str, step: float, shape: tuple[int, ...], base: np.ndarray | None = None
) -> np.ndarray:
    """Inverse of :func:`_put`; all NaN of ``shape`` if ``key`` was not stored."""
    if key not in arrays:
        return np.full(shape, np.nan)
    ints = np.cumsum(arrays[key].astype(np.int64), axis=0)
    values = (ints if base is None else ints + base).astype(np.float64) * step
    mask = arrays.get(f"{key}{_NAN_SUFFIX}")
    if mask is not None:
        values[mask.astype(bool)] = np.nan
    return values.reshape(shape)


def decode_record(data: bytes, kinematics: Kinematics | None, source: str = "<bytes>") -> TrajectoryRecord:
    """A record from compact bytes (this format or its first version), or from full record bytes.

    Full bytes are those of :meth:`TrajectoryRecord.to_bytes`.

    Args:
        data: The stored bytes.
        kinematics: The run's nominal arm and needle; needed for compact bytes only.
        source: Where the bytes come from, for error messages.

    Raises:
        InputError: Not a record, or compact bytes without kinematics or with other joints.
    """
    header, arrays = read_npz(data, source, _ENTRIES)  # only the compact entries; a full record is read again below
    if header.get("format") not in (FORMAT, FORMAT_1):
        return TrajectoryRecord.from_bytes(data, source)
    if kinematics is None:
        raise InputError(f"{source}: a compact trajectory record needs the robot model to be rebuilt")
    if tuple(header["joint_names"]) != kinematics.joint_names:
        raise InputError(f"{source}: joints {header['joint_names']} differ from the robot model's")
    n, j = _shape_of(arrays, "q_setpoint", len(kinematics.joint_names), source)
    setpoint_steps = np.cumsum(arrays["q_setpoint"].astype(np.int64), axis=0)
    q_setpoint = _get(arrays, "q_setpoint", Q_STEP_RAD, (n, j))
    q_measured = q_setpoint if header["plan"] else _get(arrays, "q_measured", Q_STEP_RAD, (n, j), setpoint_steps)
    fk = kinematics.record_arrays_where_known(q_measured)
    if header["plan"]:
        actual_pos, actual_quat = fk.tip_pos_m, fk.tip_quat_wxyz
    else:
        actual_pos, actual_quat = (
            _get(arrays, "actual_pos", POS_STEP_M, (n, 3)),
            _get(arrays, "actual_quat", QUAT_STEP, (n, 4)),
        )
    needle_m = float(header["needle_length_m"])
    if not np.isclose(needle_m, kinematics.needle_length_m, rtol=0.0, atol=1e-9):  # the tips are rebuilt with it
        raise InputError(
            f"{source}: needle length {needle_m:g} m differs from the robot model's ({kinematics.needle_length_m:g} m)"
        )
    return kinematic_record(
        kinematics,
        test_id=header["test_id"],
        robot=RobotRole.parse(header["robot"]),
        backend=header["backend"],
        t_s=_unpack(arrays["t"], T_STEP_S),
        stage=arrays["stage"],
        q_setpoint=q_setpoint,
        q_measured=q_measured,
        actual_tip_pos_m=actual_pos,
        actual_tip_quat_wxyz=actual_quat,
        frames=fk,
        meta=header.get("meta", {}),
        markers={
            "marker_pos_m": _get(arrays, "marker_pos", POS_STEP_M, (n, 3)),
            "marker_quat_wxyz": _get(arrays, "marker_quat", QUAT_STEP, (n, 4)),
            "marker_error_m": _get(arrays, "marker_error", POS_STEP_M, (n,)),
        },
        supervisor=arrays.get("supervisor"),
    )


def _shape_of(arrays: dict[str, np.ndarray], key: str, joints: int, source: str) -> tuple[int, int]:
    """(n, J) of the stored ``key``, which must hold one column per joint of the header (3 of 7 was a traceback)."""
    shape = arrays[key].shape if key in arrays else ()
    if len(shape) != 2 or shape[1] != joints:
        raise InputError(f"{source}: not a trajectory record ({key} has shape {shape}, expected (n, {joints}))")
    return int(shape[0]), int(shape[1])
