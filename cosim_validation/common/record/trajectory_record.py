"""The record of one robot's run of one test case, sampled at the session rate.

This is the contract between the robots (planning, sim, hardware), the monitor (properties),
the results database (campaign) and the ROS layer (nodes, bags). Frames: every position and
orientation is in ``base_link``; the needle-tip frame's +z axis points along the needle, from the
flange towards the tip (the insertion direction).
"""

from __future__ import annotations

import io
import json
import zipfile
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

import numpy as np

from cosim_validation.common.atomic_file import write_atomic
from cosim_validation.common.config.bounded_file import MAX_ARCHIVE_BYTES, parse_json, read_user_bytes
from cosim_validation.common.exceptions import ConfigError, InputError
from cosim_validation.common.quoting import one_line
from cosim_validation.common.record.robot_role import RobotRole
from cosim_validation.common.record.stage import Stage
from cosim_validation.common.record.supervisor_mode import SupervisorMode

_FORMAT = "cosim_validation.trajectory_record/1"
#: The marker position and orientation of a sample in which no optical tracker saw a marker (read-only).
NO_MARKER_POS = np.full(3, np.nan)
NO_MARKER_QUAT = np.full(4, np.nan)
NO_MARKER_POS.setflags(write=False)
NO_MARKER_QUAT.setflags(write=False)
#: Longest needle a record may carry [m] (0: no needle); robot.kinematics.NEEDLE_LENGTH_M bounds a real one.
MAX_NEEDLE_LENGTH_M = 1.0


#: The longest test id a record takes (a folder name when records are exported; file systems allow 255 bytes).
MAX_TEST_ID = 200


def test_id_problem(test_id: str) -> str:
    """What is wrong with ``test_id`` as a record's id, or "" if nothing.

    A test id names a folder when a run's records are exported (``<test_id>/<robot>.npz``) and is printed on one
    line: it must be at most :data:`MAX_TEST_ID` printable characters, without a slash or backslash, and not ``.``
    or ``..`` (empty is allowed: a record made outside a case, e.g. by ``execute_trajectory``).

    Args:
        test_id: The id to check.
    """
    if len(test_id) > MAX_TEST_ID:
        return f"expected at most {MAX_TEST_ID} characters, got {len(test_id)}"
    if not test_id.isprintable():
        return "expected printable characters only (no newline, tab or control character)"
    if "/" in test_id or "\\" in test_id or test_id in (".", ".."):
        return "expected a name without '/' or '\\', and not '.' or '..' (it names a folder when records are exported)"
    return ""


def _quat_wxyz_to_z_axis(quat_wxyz: np.ndarray) -> np.ndarray:
    """Third column of the rotation matrix of unit quaternions (n, 4) -> (n, 3)."""
    w, x, y, z = quat_wxyz[:, 0], quat_wxyz[:, 1], quat_wxyz[:, 2], quat_wxyz[:, 3]
    return np.stack([2 * (x * z + w * y), 2 * (y * z - w * x), 1 - 2 * (x * x + y * y)], axis=1)


@dataclass(frozen=True)
class TrajectoryRecord:
    """n samples of one robot during one case.

    Attributes:
        test_id: Id of the test case.
        robot: Role of the robot (expected plan, virtual, physical).
        backend: What produced it: ``plan``, ``mujoco``, ``pybullet``, ``emulated``, a bag name, ...
        joint_names: Names of the J joints.
        needle_length_m: Needle length [m]; the needle is the segment from
            ``tip_pos_m - needle_length_m * tip_axis`` to ``tip_pos_m``.
        t_s: (n,) float64 sample times since the case start [s], non-decreasing.
        stage: (n,) uint8 :class:`Stage` of each sample.
        q_setpoint: (n, J) commanded joint positions [rad].
        q_measured: (n, J) measured joint positions [rad].
        joint_pos_m: (n, J, 3) origin of every joint in base_link, from the measured joints [m].
        joint_axis: (n, J, 3) unit rotation axis of every joint in base_link.
        tip_pos_m: (n, 3) needle-tip position from the measured joints (forward kinematics) [m].
        tip_quat_wxyz: (n, 4) needle-tip orientation from the measured joints.
        actual_tip_pos_m: (n, 3) actual tip position (tracker or simulator ground truth) [m]; NaN if unknown.
        actual_tip_quat_wxyz: (n, 4) actual tip orientation in base_link (w, x, y, z); NaN if unknown.
        meta: Free-form scalar metadata (controller, sampling_rate_hz, seed, ...).
        marker_pos_m: (n, 3) the tool's marker in an optical tracker's frame (not base_link) [m]; NaN where the
            tracker did not see it or the robot has none (keyword only; default all NaN).
        marker_quat_wxyz: (n, 4) the marker's orientation in the tracker's frame; NaN likewise.
        marker_error_m: (n,) the tracker's registration error per sample [m]; NaN likewise.
        supervisor: (n,) uint8 :class:`SupervisorMode` of each sample: what the task supervisor let the
            controller do when it sent the sample's setpoint (keyword only; default all UNSUPERVISED, as in a
            run without a supervisor or a record written before the supervisor was recorded).
    """

    test_id: str
    robot: RobotRole
    backend: str
    joint_names: tuple[str, ...]
    needle_length_m: float
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
    meta: Mapping[str, Any] = field(default_factory=dict)
    marker_pos_m: np.ndarray = field(default=None, kw_only=True)  # type: ignore[arg-type]
    marker_quat_wxyz: np.ndarray = field(default=None, kw_only=True)  # type: ignore[arg-type]
    marker_error_m: np.ndarray = field(default=None, kw_only=True)  # type: ignore[arg-type]
    supervisor: np.ndarray = field(default=None, kw_only=True)  # type: ignore[arg-type]

    def __post_init__(self) -> None:
        problem = test_id_problem(self.test_id)
        if problem:
            raise InputError(f"trajectory record test_id {self.test_id!r}: {problem}")
        n = int(np.asarray(self.t_s).shape[0]) if np.ndim(self.t_s) == 1 else -1
        j = len(self.joint_names)
        for name, shape in _MARKER_SHAPES.items():  # no tracked marker: NaN (a virtual robot, an older record)
            if getattr(self, name) is None:
                object.__setattr__(self, name, np.full((max(n, 0), *shape), np.nan))
        if getattr(self, "supervisor") is None:  # noqa: B009 - the field is typed as set once this has run
            object.__setattr__(self, "supervisor", np.full(max(n, 0), int(SupervisorMode.UNSUPERVISED)))
        expected = {
            "t_s": (n,),
            "stage": (n,),
            "supervisor": (n,),
            "q_setpoint": (n, j),
            "q_measured": (n, j),
            "joint_pos_m": (n, j, 3),
            "joint_axis": (n, j, 3),
            "tip_pos_m": (n, 3),
            "tip_quat_wxyz": (n, 4),
            "actual_tip_pos_m": (n, 3),
            "actual_tip_quat_wxyz": (n, 4),
        } | {name: (n, *shape) for name, shape in _MARKER_SHAPES.items()}
        if n < 0:
            raise InputError(f"trajectory record {self.test_id!r}: t_s must be 1-D, got shape {np.shape(self.t_s)}")
        for name, top in (("stage", int(max(Stage))), ("supervisor", int(max(SupervisorMode)))):
            _check_codes(self.test_id, name, np.asarray(getattr(self, name)), top)
        for name, shape in expected.items():
            dtype = np.uint8 if name in ("stage", "supervisor") else np.float64
            value = np.ascontiguousarray(getattr(self, name), dtype=dtype)
            if value.shape != shape:
                raise InputError(
                    f"trajectory record {self.test_id!r}: {name} has shape {value.shape}, expected {shape}"
                )
            value.setflags(write=False)
            object.__setattr__(self, name, value)
        _check_magnitudes(self.test_id, {name: getattr(self, name) for name in _BOUNDED})
        for name in _UNIT_ROWS:
            _check_unit_rows(self.test_id, name, getattr(self, name))
        below = self.marker_error_m < 0
        if below.any():
            first = int(np.argmax(below))
            raise InputError(
                f"trajectory record {self.test_id!r}: marker_error_m holds {self.marker_error_m[first]:g} at sample "
                f"{first}; a registration error is >= 0 (m), or NaN where not known"
            )
        if not np.isfinite(self.t_s).all():  # NaN slipped past the order check below
            first = int(np.argmax(~np.isfinite(self.t_s)))
            raise InputError(f"trajectory record {self.test_id!r}: t_s holds {self.t_s[first]} at sample {first}")
        far = np.abs(self.t_s) > MAX_TIME_S
        if far.any():  # times scaled by 1e300 were taken and overflowed later arithmetic
            first = int(np.argmax(far))
            raise InputError(
                f"trajectory record {self.test_id!r}: t_s holds {self.t_s[first]:g} s at sample {first}; expected "
                f"times within {MAX_TIME_S:g} s (a clock's epoch time included)"
            )
        object.__setattr__(self, "robot", RobotRole(self.robot))
        object.__setattr__(self, "joint_names", tuple(self.joint_names))
        if n > 1 and np.any(np.diff(self.t_s) < 0):
            first = int(np.argmax(np.diff(self.t_s) < 0)) + 1
            raise InputError(f"trajectory record {self.test_id!r}: time goes backwards at sample {first}")
        twice = sorted({name for name in self.joint_names if self.joint_names.count(name) > 1})
        if twice:  # a joint looked up by name got another joint's values
            raise InputError(f"trajectory record {self.test_id!r}: joint_names holds {twice[0]!r} more than once")
        if not 0.0 <= self.needle_length_m <= MAX_NEEDLE_LENGTH_M:
            raise InputError(
                f"trajectory record {self.test_id!r}: needle_length_m must be 0 to {MAX_NEEDLE_LENGTH_M:g} m, "
                f"got {self.needle_length_m!r}"
            )

    # ------------------------------------------------------------------ derived views
    @property
    def n_samples(self) -> int:
        """Number of samples n."""
        return int(self.t_s.shape[0])

    @property
    def n_joints(self) -> int:
        """Number of joints J."""
        return len(self.joint_names)

    @property
    def tip_axis(self) -> np.ndarray:
        """(n, 3) unit needle direction (tip frame +z) from the measured joints."""
        return _quat_wxyz_to_z_axis(self.tip_quat_wxyz)

    @property
    def needle_base_m(self) -> np.ndarray:
        """(n, 3) the needle's other end (where it leaves the tool) [m]."""
        return self.tip_pos_m - self.needle_length_m * self.tip_axis

    @property
    def has_marker(self) -> bool:
        """Whether any sample holds a marker seen by an optical tracker."""
        return bool(np.isfinite(self.marker_error_m).any())

    @property
    def has_stages(self) -> bool:
        """Whether the samples carry stages (an imported run without a plan has Stage.NONE throughout)."""
        return bool(np.any(self.stage != int(Stage.NONE)))

    @property
    def has_actual_tip(self) -> bool:
        """Whether any sample holds an actual tip pose."""
        return bool(np.isfinite(self.actual_tip_pos_m).any())

    def joint_azimuth_altitude(self) -> np.ndarray:
        """(n, J, 2) direction of every joint axis as azimuth and altitude [rad] ([Actuators 2025]'s state).

        Azimuth is measured in the base_link x-y plane from +x towards +y; altitude from that plane towards +z.
        """
        a = self.joint_axis
        azimuth = np.arctan2(a[..., 1], a[..., 0])
        altitude = np.arctan2(a[..., 2], np.hypot(a[..., 0], a[..., 1]))
        return np.stack([azimuth, altitude], axis=-1)

    def head(self, n: int) -> TrajectoryRecord:
        """The first ``n`` samples (a case stopped there); every per-sample array is cut, the rest kept.

        Args:
            n: Number of leading samples to keep; more than the record holds keeps every sample.
        """
        cut = {f.name: getattr(self, f.name)[:n] for f in fields(self) if isinstance(getattr(self, f.name), np.ndarray)}
        return replace(self, **cut)

    def stage_indices(self, stage: Stage) -> np.ndarray:
        """Indices of the samples in ``stage``.

        Args:
            stage: The stage whose samples are wanted.
        """
        return np.flatnonzero(self.stage == int(stage))

    # ------------------------------------------------------------------ storage
    def to_bytes(self) -> bytes:
        """Compressed npz bytes (for files and database blobs)."""
        buffer = io.BytesIO()
        header = {
            "format": _FORMAT,
            "test_id": self.test_id,
            "robot": self.robot.label,
            "backend": self.backend,
            "joint_names": list(self.joint_names),
            "needle_length_m": self.needle_length_m,
            "meta": dict(self.meta),
        }
        arrays = {f.name: getattr(self, f.name) for f in fields(self) if isinstance(getattr(self, f.name), np.ndarray)}
        np.savez_compressed(buffer, header=np.frombuffer(json.dumps(header).encode(), dtype=np.uint8), **arrays)
        return buffer.getvalue()

    @classmethod
    def from_bytes(cls, data: bytes, source: str = "<bytes>") -> TrajectoryRecord:
        """Inverse of :meth:`to_bytes`.

        Args:
            data: The bytes of an npz archive written by :meth:`to_bytes`.
            source: Where the bytes came from (a file, a database row), for error messages.

        Raises:
            InputError: Not an intact npz, no or a malformed header, a missing or mistyped field or array, or
                arrays that do not form a record; the message names ``source`` and the field.
        """
        header, arrays = read_npz(data, source)
        if header.get("format") != _FORMAT:
            raise InputError(f"{source}: unsupported trajectory record format {header.get('format')!r}")
        fields_ = _header_fields(header, source)
        for old, new in _OLD_ARRAYS.items():  # a record written before the units left the names
            if old in arrays and new not in arrays:
                arrays[new] = arrays.pop(old)
        missing = [name for name in _ARRAYS if name not in arrays]
        if missing:
            raise InputError(f"{source}: array {missing[0]!r} missing (the file holds: {', '.join(sorted(arrays))})")
        for name in _ARRAYS:
            if arrays[name].dtype.kind not in "biuf":
                raise InputError(f"{source}: array {name!r} holds {arrays[name].dtype.name} values, expected numbers")
        for name in _OPTIONAL:  # records written before markers or the supervisor were recorded have none
            if name in arrays and arrays[name].dtype.kind not in "biuf":
                raise InputError(f"{source}: array {name!r} holds {arrays[name].dtype.name} values, expected numbers")
        optional = {name: arrays[name] for name in _OPTIONAL if name in arrays}
        values: dict[str, Any] = fields_ | {name: arrays[name] for name in _ARRAYS} | optional
        try:
            return cls(**values)
        except InputError as exc:
            raise InputError(f"{source}: {exc}") from None

    def save(self, path: str | Path, *, overwrite: bool = True) -> None:
        """Write to an ``.npz`` file atomically (a temporary file renamed into place: never half a file).

        Args:
            path: The ``.npz`` file to write; its folder must exist.
            overwrite: Replace the file if it exists; False: refuse to, also when another process wrote it
                meanwhile.

        Raises:
            InputError: The file cannot be written (names the path and why), or exists and ``overwrite`` is False.
        """
        content = self.to_bytes()
        write_atomic(Path(path), lambda tmp: tmp.write_bytes(content), "a trajectory record", overwrite=overwrite)

    @classmethod
    def load(cls, path: str | Path) -> TrajectoryRecord:
        """Read a file written by :meth:`save`.

        Args:
            path: The ``.npz`` file, at most ``MAX_ARCHIVE_BYTES`` long.

        Raises:
            InputError: The file cannot be read or is not a trajectory record (see :meth:`from_bytes`).
        """
        try:
            data = read_user_bytes(path, MAX_ARCHIVE_BYTES)
        except ConfigError as exc:
            raise InputError(f"{path}: cannot read trajectory record ({exc.message})") from None
        return cls.from_bytes(data, source=str(path))


#: The arrays of a stored record, by field name.
_ARRAYS: tuple[str, ...] = (
    "t_s",
    "stage",
    "q_setpoint",
    "q_measured",
    "joint_pos_m",
    "joint_axis",
    "tip_pos_m",
    "tip_quat_wxyz",
    "actual_tip_pos_m",
    "actual_tip_quat_wxyz",
)

#: The optional marker arrays of a record and their shapes per sample.
_MARKER_SHAPES: dict[str, tuple[int, ...]] = {"marker_pos_m": (3,), "marker_quat_wxyz": (4,), "marker_error_m": ()}

#: The arrays a record may lack (written before markers, or the supervisor, were recorded).
_OPTIONAL: tuple[str, ...] = (*_MARKER_SHAPES, "supervisor")

#: Array names of records written before the units left the names (a prismatic joint's values are metres).
_OLD_ARRAYS = {"q_setpoint_rad": "q_setpoint", "q_measured_rad": "q_measured"}

#: Every entry a record file may hold; others are not unpacked.
_ENTRIES = frozenset({"header", *_ARRAYS, *_OPTIONAL, *_OLD_ARRAYS})
#: The most a record's entries may unpack to [bytes]: some 6.8 million samples of a 7-joint arm (the longest case,
#: an hour at the highest setpoint rate of 1 kHz, is 3.6 million)
MAX_UNPACKED_BYTES = 4 << 30


def read_npz(
    data: bytes, source: str, entries: frozenset[str] = _ENTRIES
) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """The JSON header and the arrays of npz bytes; every way the bytes can be broken is an InputError.

    Only ``entries`` are unpacked, at most :data:`MAX_UNPACKED_BYTES` of them: a file's other entries are never read.

    Args:
        data: The bytes of an npz file with a ``header`` entry (JSON text as bytes).
        source: Where the bytes come from, for error messages.
        entries: The names of the entries to unpack (default: a trajectory record's).
    """
    if not data:
        raise InputError(f"{source}: not a trajectory record (the file is empty)")
    if not data.startswith(b"PK"):  # numpy takes anything else for a pickle, and its refusal suggests loading one
        raise InputError(f"{source}: not a trajectory record (not an npz archive: no zip signature)")
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as npz:
            if "header" not in npz.files:
                raise InputError(f"{source}: not a trajectory record (no 'header' entry; entries: {npz.files})")
            ours = [name for name in npz.files if name in entries]  # others are never unpacked
            sizes = {info.filename.removesuffix(".npy"): info.file_size for info in npz.zip.infolist()}
            unpacked = sum(sizes.get(name, 0) for name in ours)
            if unpacked > MAX_UNPACKED_BYTES:  # a few MB of zeros unpacked to gigabytes
                raise InputError(
                    f"{source}: not a trajectory record it can read: its arrays unpack to {unpacked / 2**20:.0f} MiB, "
                    f"more than {MAX_UNPACKED_BYTES / 2**20:.0f} MiB"
                )
            raw = npz["header"].tobytes().decode()
            arrays = {name: npz[name] for name in ours if name != "header"}
    except InputError:
        raise
    except (OSError, ValueError, EOFError, zipfile.BadZipFile, zlib.error, UnicodeDecodeError) as exc:
        raise InputError(f"{source}: not a trajectory record (damaged or not an npz: {exc})") from None
    except MemoryError:  # an entry whose header declares a shape no memory holds (its zip size can be small)
        raise InputError(f"{source}: not a trajectory record it can read: an array too large for memory") from None
    try:
        header = parse_json(raw, source, "header")
    except ConfigError as exc:
        raise InputError(f"{source}: header: not valid JSON ({exc.message})") from None
    if not isinstance(header, dict):
        raise InputError(f"{source}: header: expected a JSON object, got a JSON {type(header).__name__}")
    return header, arrays


def _backend(name: str, source: str) -> str:
    """``name``, the engine a record ran on, if it is a short printable name (100 000 characters were echoed whole)."""
    if len(name) > MAX_TEST_ID or not name.isprintable():
        raise InputError(
            f"{source}: header: 'backend' must be a name of at most {MAX_TEST_ID} printable characters, got "
            f"{one_line(name, 40)}"
        )
    return name


def _length(value: float, source: str) -> float:
    """``value`` as a float; an integer too large for one (10**400 in the JSON) is an error naming the field."""
    try:
        return float(value)
    except OverflowError:
        digits = len(str(value))
        what = f"{source}: header: 'needle_length_m'"
        raise InputError(f"{what} must be a length in metres, got an integer of {digits} digits") from None


def _header_fields(header: Mapping[str, Any], source: str) -> dict[str, Any]:
    """The record's scalar fields from its header, each checked (the message names the field)."""

    def field_(name: str, kinds: tuple[type, ...], what: str) -> Any:
        if name not in header:
            raise InputError(f"{source}: header: {name!r} missing (keys: {', '.join(sorted(header))})")
        value = header[name]
        if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
            raise InputError(f"{source}: header: {name!r} must be {what}, got {value!r}")
        return value

    names = field_("joint_names", (list,), "a list of joint names")
    if not all(isinstance(n, str) for n in names):
        raise InputError(f"{source}: header: 'joint_names' must be a list of strings, got {names!r}")
    meta = header.get("meta", {})
    if not isinstance(meta, dict):
        raise InputError(f"{source}: header: 'meta' must be a mapping, got {meta!r}")
    robot_name = field_("robot", (str,), "a robot name")
    try:
        robot = RobotRole.parse(robot_name)
    except InputError as exc:
        raise InputError(f"{source}: header: 'robot': {exc}") from None
    return {
        "test_id": field_("test_id", (str,), "a string"),
        "robot": robot,
        "backend": _backend(field_("backend", (str,), "a string"), source),
        "joint_names": tuple(names),
        "needle_length_m": _length(field_("needle_length_m", (int, float), "a length in metres"), source),
        "meta": meta,
    }


#: The largest magnitude of a record's times [s]: some 300 years, so a clock's epoch time (1.8e9 s in 2026) is one
MAX_TIME_S = 1e10
#: The largest magnitude a record's positions [m] and joint values [rad | m] may have (NaN: not known): a kilometre,
#: some 160 turns (a tip 1e300 m away printed numpy overflow warnings and was then judged)
MAX_MAGNITUDE = 1e3
_BOUNDED = (
    "q_setpoint",
    "q_measured",
    "joint_pos_m",
    "tip_pos_m",
    "actual_tip_pos_m",
    "marker_pos_m",
    "marker_error_m",
    "joint_axis",
    "tip_quat_wxyz",
    "actual_tip_quat_wxyz",
    "marker_quat_wxyz",
)
#: The arrays whose rows are unit vectors or unit quaternions (a row with NaN: not known)
_UNIT_ROWS = ("joint_axis", "tip_quat_wxyz", "actual_tip_quat_wxyz", "marker_quat_wxyz")
#: How far from 1 the norm of a stored unit vector or quaternion may be (float32 storage keeps it within 1e-6)
UNIT_TOLERANCE = 1e-3


def _check_codes(test_id: str, name: str, values: np.ndarray, top: int) -> None:
    """Refuse ``values`` (stage or supervisor codes) that are not whole numbers 0 to ``top``, before the uint8 cast.

    The cast wrapped 256 to 0 and -255 to 1 and truncated 1.7 to 1: a damaged record read as another one.
    """
    if values.ndim != 1 or values.dtype.kind not in "biuf":
        return  # other kinds are refused where the arrays are read, other shapes after the cast
    with np.errstate(invalid="ignore"):
        bad = ~np.isfinite(values) | (values != np.round(values)) | (values < 0) | (values > top)
    if bad.any():
        first = int(np.argmax(bad))
        raise InputError(
            f"trajectory record {test_id!r}: {name} {values[first].item()!r} at sample {first} is not a "
            f"{'stage' if name == 'stage' else 'supervisor mode'} (0 to {top})"
        )


def _check_unit_rows(test_id: str, name: str, values: np.ndarray) -> None:
    """Refuse a row of ``values`` (unit axes or quaternions along the last axis) whose norm is not 1; NaN rows pass."""
    norm = np.linalg.norm(values, axis=-1)
    bad = np.isfinite(norm) & (np.abs(norm - 1.0) > UNIT_TOLERANCE)
    if bad.any():
        where = np.argwhere(bad)[0]
        raise InputError(
            f"trajectory record {test_id!r}: {name} at sample {int(where[0])} has norm {float(norm[tuple(where)]):g}; "
            f"expected a unit {'quaternion' if values.shape[-1] == 4 else 'vector'} (norm 1), or NaN where not known"
        )


def _check_magnitudes(test_id: str, arrays: dict[str, np.ndarray]) -> None:
    """Refuse a value past :data:`MAX_MAGNITUDE` (infinity included) in ``arrays``; NaN (not known) is fine."""
    for name, values in arrays.items():
        past = np.abs(values) > MAX_MAGNITUDE
        if past.any():
            sample = int(np.argwhere(past)[0][0])
            bad = values.reshape(len(values), -1)[sample]
            raise InputError(
                f"trajectory record {test_id!r}: {name} holds {bad[np.abs(bad) > MAX_MAGNITUDE][0]:g} at sample "
                f"{sample}; expected values within {MAX_MAGNITUDE:g} (m or rad)"
            )
