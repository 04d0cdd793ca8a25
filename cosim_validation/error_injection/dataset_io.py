"""Reading and writing error datasets: Parquet (the project's format) and the documented CSV import.

Writing is atomic (a temporary file renamed). Reading checks the metadata (format, robot) and every column; a
missing column, a column of text where numbers belong or another robot is one :class:`DatasetError` naming the
file and the column. Rows are not judged here (NaN joints, dropouts): :mod:`~.dataset_cleaning` drops and
counts them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np

from cosim_validation.common.atomic_file import write_atomic
from cosim_validation.common.config.bounded_file import parse_json, read_user_text, regular_file_problem
from cosim_validation.common.exceptions import ConfigError
from cosim_validation.common.record import TrajectoryRecord
from cosim_validation.common.record.trajectory_record import MAX_MAGNITUDE
from cosim_validation.error_injection.dataset import (
    MARKER_ERROR,
    MARKER_POSITION,
    MARKER_QUATERNION,
    MARKER_ROTVEC,
    ErrorDataset,
    joint_columns,
)
from cosim_validation.error_injection.error_types import DatasetError
from cosim_validation.error_injection.robot_identity import RobotIdentity

FORMAT = "cosim-error-dataset/1"
METADATA_KEY = b"cosim_validation.error_dataset"


def write_parquet(dataset: ErrorDataset, path: str | Path) -> None:
    """Write ``dataset`` to a Parquet file (atomically), robot and settings in the schema metadata.

    Args:
        dataset: The rows and their metadata.
        path: The Parquet file to write (replaced if it exists).
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    metadata = {
        "format": FORMAT,
        "robot": dataset.robot.to_json(),
        "joint_units": list(dataset.joint_units),
        "rows": dataset.n_rows,
        **dataset.meta,
    }
    table = pa.table({name: pa.array(values) for name, values in dataset.columns().items()})
    table = table.replace_schema_metadata({METADATA_KEY: json.dumps(metadata).encode()})
    write_atomic(Path(path), lambda tmp: pq.write_table(table, tmp), "an error dataset")


def read_parquet(path: str | Path) -> ErrorDataset:
    """Read a dataset written by :func:`write_parquet`.

    Args:
        path: A Parquet file written by :func:`write_parquet`.

    Raises:
        DatasetError: Unreadable, not a dataset, a missing or mistyped column, or malformed metadata.
    """
    import pyarrow.parquet as pq

    path = Path(path)
    problem = regular_file_problem(path)
    if problem is not None:
        raise DatasetError(f"{path}: cannot read an error dataset ({problem})")
    try:
        table = pq.read_table(path)
    except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError
        raise DatasetError(f"{path}: cannot read an error dataset ({exc})") from None
    raw = (table.schema.metadata or {}).get(METADATA_KEY)
    if raw is None:
        raise DatasetError(f"{path}: not an error dataset (no {METADATA_KEY.decode()!r} metadata)")
    try:
        meta = parse_json(raw, path, METADATA_KEY.decode())
    except ConfigError as exc:
        raise DatasetError(f"{path}: dataset metadata is not valid JSON ({exc.message})") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise DatasetError(
            f"{path}: dataset format {meta.get('format') if isinstance(meta, dict) else meta!r}, "
            f"this version reads {FORMAT!r}"
        )
    robot, units = _robot_of(meta, path)
    columns = {name: table.column(name).to_numpy(zero_copy_only=False) for name in table.column_names}
    extra = {k: v for k, v in meta.items() if k not in ("format", "robot", "joint_units", "rows")}
    return _dataset(columns, robot, units, extra, str(path), optional=False)


def _robot_of(meta: dict[str, Any], path: Path) -> tuple[RobotIdentity, tuple[str, ...]]:
    robot = meta.get("robot")
    units = meta.get("joint_units")
    if not isinstance(robot, dict) or not isinstance(robot.get("joint_names"), list) or not isinstance(units, list):
        raise DatasetError(f"{path}: dataset metadata: expected robot.joint_names and joint_units lists")
    names, model_hash = robot["joint_names"], robot.get("model_hash")
    if not names or not all(isinstance(n, str) for n in names) or not isinstance(model_hash, str):
        raise DatasetError(f"{path}: dataset metadata: robot.joint_names / robot.model_hash malformed")
    return RobotIdentity(tuple(names), model_hash), tuple(str(u) for u in units)


#: A decimal number as a CSV holds one (``0x10``, ``1_0``, ``True`` are text)
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?|[+-]?(nan|inf|infinity)", re.IGNORECASE)
#: The largest segment id: whole numbers up to it are exact in the float64 a CSV column is read as
MAX_SEGMENT = 2**53


def _numbers(columns: dict[str, np.ndarray], name: str, source: str, default: float | None = None) -> np.ndarray:
    if name not in columns:
        if default is not None:
            return np.full(len(next(iter(columns.values()))), default)
        raise DatasetError(f"{source}: column {name!r} missing (columns: {', '.join(columns)})")
    values = columns[name]
    if values.dtype.kind == "O":  # nulls in a numeric column, or text
        texts = [i for i, v in enumerate(values) if isinstance(v, str | bytes)]
        if texts:  # numpy would read "0.1" as a number; a column read as text holds its numbers as text too
            row = next((i for i in texts if not _NUMBER.fullmatch(str(values[i]).strip())), texts[0])
            shown = repr(values[row]) if len(str(values[row])) <= 40 else f"{str(values[row])[:40]!r}..."
            raise DatasetError(f"{source}: column {name!r}: expected numbers, found text ({shown} in row {row + 1})")
        try:
            values = np.array([np.nan if v is None else v for v in values], dtype=np.float64)
        except (TypeError, ValueError):
            raise DatasetError(f"{source}: column {name!r}: expected numbers, found text") from None
    if values.dtype.kind not in "biuf":
        raise DatasetError(f"{source}: column {name!r}: expected numbers, got {values.dtype.name}")
    return np.asarray(values, dtype=np.float64)


#: The largest joint value a dataset may hold [rad or m]: a record's bound, some 160 turns or a kilometre (1e300 was
#: taken, and a check of the imported record then said every property held)
MAX_JOINT_VALUE = MAX_MAGNITUDE
#: The farthest a tracked marker may be from the tracker [m] (optical trackers see a few metres)
MAX_MARKER_POSITION_M = 100.0


def check_marker_quaternion(quaternion: np.ndarray, source: str, what: str) -> None:
    """Refuse a marker orientation that is partly given or not a unit quaternion (NaN in all four: not seen).

    Args:
        quaternion: (n, 4) the marker's orientation (w, x, y, z).
        source: The file, for the message.
        what: Where in the file the orientation is (its columns, or a topic's field).

    Raises:
        DatasetError: Naming the file, ``what``, the values or norm and the row (counted from 1).
    """
    seen = np.isfinite(quaternion).all(axis=1)
    partly = ~seen & ~np.isnan(quaternion).all(axis=1)  # one cell empty (or inf): the row was dropped as unseen
    if partly.any():
        row = int(np.argmax(partly))
        raise DatasetError(
            f"{source}: {what}: {quaternion[row].tolist()} in row {row + 1}; expected four finite values, or all "
            "four empty where the marker was not seen"
        )
    with np.errstate(over="ignore", invalid="ignore"):  # 1e300 is refused below, without numpy's warnings
        norm = np.linalg.norm(np.where(seen[:, None], quaternion, 1.0), axis=1)
    off = np.flatnonzero(seen & ~(np.abs(norm - 1.0) <= 0.1))
    if off.size:
        row = int(off[0])
        raise DatasetError(
            f"{source}: {what}: norm {norm[row]:.3g} in row {row + 1}; expected a unit quaternion (all four empty "
            "where the marker was not seen)"
        )


def check_marker(
    position: np.ndarray, registration: np.ndarray, source: str, position_names: tuple[str, ...], error_name: str
) -> None:
    """Refuse a marker position partly given or past the tracker's volume, or a registration error that is no error.

    A marker not seen has every position cell empty (NaN), and its registration error empty too.

    Args:
        position: (n, 3) the marker's position in the tracker frame [m].
        registration: (n,) the tracker's registration error [m].
        source: The file, for the message.
        position_names: The file's names of the three position columns.
        error_name: The file's name of the registration error column.

    Raises:
        DatasetError: Naming the file, the column, the value and the row.
    """
    partly = np.isnan(position).any(axis=1) & ~np.isnan(position).all(axis=1)
    if partly.any():  # one cell empty read as "not seen": the row's other cells and its registration were dropped
        row = int(np.argmax(partly))
        raise DatasetError(
            f"{source}: columns {', '.join(map(repr, position_names))}: {position[row].tolist()} in row {row + 1}; "
            "expected three values, or all three empty where the marker was not seen"
        )
    far = np.argwhere(np.abs(position) > MAX_MARKER_POSITION_M)  # NaN is a marker not seen; inf and 1e200 are not
    if far.size:  # 1e200 m ended the hand-eye calibration in an SVD traceback
        row, col = (int(v) for v in far[0])
        raise DatasetError(
            f"{source}: column {position_names[col]!r}: {position[row, col]} in row {row + 1}; expected a position "
            f"within +-{MAX_MARKER_POSITION_M:g} m of the tracker"
        )
    # NaN: not seen; an error past the tracker's whole volume is no error of a registration (1e300 was taken)
    wrong = np.flatnonzero(~np.isnan(registration) & ~((registration >= 0) & (registration <= MAX_MARKER_POSITION_M)))
    if wrong.size:
        row = int(wrong[0])
        raise DatasetError(
            f"{source}: column {error_name!r}: {registration[row]} in row {row + 1}; expected an error of 0 to "
            f"{MAX_MARKER_POSITION_M:g} m"
        )


def _dataset(
    columns: dict[str, np.ndarray],
    robot: RobotIdentity,
    units: tuple[str, ...],
    meta: dict[str, Any],
    source: str,
    optional: bool,
) -> ErrorDataset:
    """Columns -> dataset; with ``optional``, ``set`` defaults to train and ``segment`` to 0 (CSV)."""
    if not columns:
        raise DatasetError(f"{source}: no columns")
    if len(units) != robot.n_joints:
        raise DatasetError(f"{source}: {len(units)} joint units for {robot.n_joints} joints")
    n = len(next(iter(columns.values())))
    if "set" in columns:
        set_name = np.asarray(columns["set"]).astype(str)
    elif optional:
        set_name = np.full(n, "train")
    else:
        raise DatasetError(f"{source}: column 'set' missing")
    segment = _numbers(columns, "segment", source, 0.0 if optional else None)
    fractional = np.flatnonzero(~np.isfinite(segment) | (segment != np.round(segment)))
    if fractional.size:  # an empty cell (a line of commas) reads as NaN
        row = int(fractional[0])
        raise DatasetError(
            f"{source}: column 'segment': {segment[row]:g} in row {row + 1}; expected a whole number 0..{MAX_SEGMENT}"
        )
    outside = np.flatnonzero((segment < 0) | (segment > MAX_SEGMENT))  # 1e26 was wrapped to -2**63
    if outside.size:
        row = int(outside[0])
        raise DatasetError(
            f"{source}: column 'segment': {segment[row]:g} in row {row + 1}; expected a whole number 0..{MAX_SEGMENT}"
        )
    time_s = _numbers(columns, "time_s", source)
    if not np.isfinite(time_s).all():
        row = int(np.flatnonzero(~np.isfinite(time_s))[0])
        raise DatasetError(f"{source}: column 'time_s': {time_s[row]} in row {row + 1}; expected finite times [s]")

    _check_times(time_s, segment, source)

    def block(names: list[str] | tuple[str, ...]) -> np.ndarray:
        return np.stack([_numbers(columns, c, source) for c in names], axis=1) if n else np.zeros((0, len(names)))

    def joints(kind: str) -> np.ndarray:
        names = joint_columns(kind, robot.joint_names, units)
        values = block(names)
        bad = np.argwhere(~(np.abs(values) <= MAX_JOINT_VALUE))  # NaN and inf too
        if bad.size:
            row, col = (int(v) for v in bad[0])
            raise DatasetError(
                f"{source}: column {names[col]!r}: {values[row, col]} in row {row + 1}; expected a finite joint value "
                f"within +-{MAX_JOINT_VALUE:g} (rad or m)"
            )
        return values

    quaternion = block(MARKER_QUATERNION)
    check_marker_quaternion(quaternion, source, f"columns {', '.join(MARKER_QUATERNION)}")
    position = block(MARKER_POSITION)
    registration = _numbers(columns, MARKER_ERROR, source)
    check_marker(position, registration, source, MARKER_POSITION, MARKER_ERROR)
    try:
        return ErrorDataset(
            robot,
            units,
            set_name,
            segment.astype(np.int64),
            time_s,
            joints("setpoint"),
            joints("measured"),
            position,
            quaternion,
            registration,
            meta,
        )
    except DatasetError as exc:  # the columns read above name the file already
        message = str(exc)
        raise DatasetError(message if message.startswith(f"{source}: ") else f"{source}: {message}") from None


#: Closest two samples of a segment may be [s] (a tracker or an arm's controller samples at kHz, not MHz)
MIN_SAMPLE_SPACING_S = 1e-6
#: Longest a segment may last [s]: a day of recording
MAX_SEGMENT_S = 86_400.0


def _check_times(time_s: np.ndarray, segment: np.ndarray, source: str) -> None:
    """Within a segment, each row's time is later than the row before (a recording runs forward).

    A segment's rows are together: one split by another escaped the order check (its times went back across the gap).
    """
    starts = np.flatnonzero(np.r_[True, segment[1:] != segment[:-1]])
    values, first = np.unique(segment[starts], return_index=True)
    if len(values) < len(starts):
        again = int(starts[np.setdiff1d(np.arange(len(starts)), first)[0]])
        raise DatasetError(
            f"{source}: column 'segment': segment {int(segment[again])} starts again in row {again + 1} after other "
            "rows; expected each segment's rows together"
        )
    same = segment[1:] == segment[:-1]
    stalled = np.flatnonzero(same & ~(time_s[1:] > time_s[:-1]))
    if stalled.size:
        row = int(stalled[0]) + 1
        raise DatasetError(
            f"{source}: column 'time_s': {time_s[row]} in row {row + 1} is not after {time_s[row - 1]} in row {row} "
            "of the same segment; expected increasing times"
        )
    close = np.flatnonzero(same & (time_s[1:] - time_s[:-1] < MIN_SAMPLE_SPACING_S))  # joint speeds of 1e8 rad/s
    if close.size:
        row = int(close[0]) + 1
        raise DatasetError(
            f"{source}: column 'time_s': row {row + 1} is {time_s[row] - time_s[row - 1]:.3g} s after row {row}; "
            f"expected times in seconds, samples at least {MIN_SAMPLE_SPACING_S:g} s apart (another unit?)"
        )
    ends = np.r_[starts[1:], len(time_s)] - 1  # each segment's rows are together (checked above)
    spans = time_s[ends] - time_s[starts]
    long = np.flatnonzero(spans > MAX_SEGMENT_S)  # a recording of 16 s with its times in ns lasted 500 years
    if long.size:
        k = int(long[0])
        raise DatasetError(
            f"{source}: column 'time_s': segment {int(segment[starts[k]])} spans {spans[k]:.6g} s; expected times "
            f"in seconds, a segment of at most {MAX_SEGMENT_S:g} s (a day; another unit?)"
        )


def csv_frame(path: Path, **options: Any) -> Any:
    """The CSV file ``path`` as a pandas DataFrame, read as every user file is: a regular file of bounded size.

    A FIFO, a device or a folder is refused at once (pandas would block on a FIFO).

    Args:
        path: The CSV file.
        **options: Passed to ``pandas.read_csv``.

    Raises:
        DatasetError: Not a regular file, too large, unreadable or not a CSV.
    """
    import io

    import pandas as pd

    try:
        text = read_user_text(path)
    except ConfigError as exc:
        raise DatasetError(str(exc)) from None
    _check_table_shape(path, text)
    try:
        return pd.read_csv(io.StringIO(text), **options)
    except (ValueError, pd.errors.ParserError) as exc:  # EmptyDataError is a ValueError
        raise DatasetError(f"{path}: cannot read the CSV ({exc})") from None


def _check_table_shape(path: Path, text: str) -> None:
    """Refuse a column named twice in the header, or a row with fewer or more cells than the header.

    Pandas renames a second ``name`` ``name.1`` and reads the first, and reads the missing cells of a short row as
    empty: a marker taken as not seen.
    """
    import csv
    import io

    rows = csv.reader(io.StringIO(text))
    try:
        header = next(rows, [])
    except csv.Error:
        return  # pandas says what is wrong with it
    seen: set[str] = set()
    for name in (n.strip() for n in header):
        if name in seen and name:
            raise DatasetError(f"{path}: column {name!r} given twice in the header; expected each column once")
        seen.add(name)
    number = 0
    try:
        for cells in rows:
            if not cells:  # a blank line, which pandas skips too
                continue
            number += 1
            if len(cells) != len(header):  # counted here, both ways: pandas names a long row by its file line only
                raise DatasetError(
                    f"{path}: data row {number} (line {rows.line_num}) has {len(cells)} cells, the header "
                    f"{len(header)}; expected a cell for every column (an empty one where a value is not known)"
                )
    except csv.Error:
        return


def read_csv(
    path: str | Path, robot: RobotIdentity, joint_units: tuple[str, ...], warn: Callable[[str], None] | None = None
) -> ErrorDataset:
    """Import the documented CSV (a header row with the dataset's column names) for ``robot``.

    Empty cells are NaN (a marker not seen). ``set`` (default ``train``) and ``segment`` (default 0) may be left
    out; every other column of :mod:`~.dataset` is required.

    Args:
        path: The CSV file.
        robot: The robot the rows are of (the file does not say).
        joint_units: The unit of each joint column, ``rad`` or ``m``, shape (J,).
        warn: Told, in one line, of columns the file has that are not read (a misspelt optional column was
            dropped without a word); None: not told.

    Raises:
        DatasetError: Unreadable, empty, a missing column or text in a numeric one (naming the column).
    """
    path = Path(path)
    frame = csv_frame(path, dtype={"set": str})
    if frame.empty:
        raise DatasetError(f"{path}: no rows (a header only); expected at least one sample")
    columns = {str(name): frame[name].to_numpy() for name in frame.columns}
    if not frame.empty:
        columns = _quaternions_of_rotation_vectors(columns, str(path))
    meta = {"source": f"csv import of {path.name}"}
    dataset = _dataset(columns, robot, tuple(joint_units), meta, str(path), optional=True)
    report_unread(path, [str(c) for c in frame.columns], (*dataset.columns(), *MARKER_ROTVEC), warn)
    return dataset


def report_unread(path: Path, names: list[str], read: Iterable[str], warn: Callable[[str], None] | None) -> None:
    """Tell ``warn`` which of a file's columns ``names`` are not among the ``read`` ones (nothing if all are).

    Args:
        path: The file, for the message.
        names: Its columns, in file order.
        read: The column names the reader takes.
        warn: Where the one-line message goes; None: nowhere.
    """
    known = set(read)
    unread = [name for name in names if name not in known]
    if unread and warn is not None:
        listed = ", ".join(repr(name) for name in unread)
        warn(f"{path}: column{'s' if len(unread) > 1 else ''} {listed} not read (not a column of this format)")


def _quaternions_of_rotation_vectors(columns: dict[str, np.ndarray], source: str) -> dict[str, np.ndarray]:
    """The marker's orientation given as a rotation vector (``marker_r{x,y,z}_rad``) instead of ``marker_q*``."""
    if not any(c in columns for c in MARKER_ROTVEC):
        return columns
    if any(c in columns for c in MARKER_QUATERNION):
        given = ", ".join(c for c in (*MARKER_QUATERNION, *MARKER_ROTVEC) if c in columns)
        raise DatasetError(
            f"{source}: the marker's orientation is given twice ({given}); expected either "
            f"{', '.join(MARKER_QUATERNION)} or {', '.join(MARKER_ROTVEC)}"
        )
    rotvec = np.stack([_numbers(columns, c, source) for c in MARKER_ROTVEC], axis=1)
    quat = quaternions_of_rotation_vectors(rotvec, source, MARKER_ROTVEC)
    rest = {k: v for k, v in columns.items() if k not in MARKER_ROTVEC}
    return rest | dict(zip(MARKER_QUATERNION, quat.T, strict=True))


def quaternions_of_rotation_vectors(rotvec: np.ndarray, source: str, names: tuple[str, ...]) -> np.ndarray:
    """(n, 4) unit quaternions (w, x, y, z) of rotation vectors; NaN where all three cells are empty (not seen).

    Args:
        rotvec: (n, 3) rotation vectors (axis times angle) [rad].
        source: The file, for the message.
        names: The file's names of the three columns.

    Raises:
        DatasetError: A row that is partly empty, not finite or longer than 2 pi rad (naming the file and row).
    """
    from cosim_validation.robots.virtual.quaternion import quat_from_rotvec

    quat = np.full((len(rotvec), 4), np.nan)
    seen = np.isfinite(rotvec).all(axis=1)
    unseen = np.isnan(rotvec).all(axis=1)  # every cell empty: the marker was not seen
    small = np.where(seen[:, None] & (np.abs(rotvec) <= 2.0 * np.pi), rotvec, 7.0)  # 7 > 2 pi: no overflow below
    too_long = seen & (np.linalg.norm(small, axis=1) > 2.0 * np.pi)
    wrong = np.flatnonzero(~(seen | unseen) | too_long)  # inf, a cell of three empty, or a length past 2 pi
    if wrong.size:  # an empty cell is a marker not seen; 1e300 overflowed into NaN and the row was taken as unseen
        row = int(wrong[0])
        raise DatasetError(
            f"{source}: data row {row + 1} (line {row + 2}): marker rotation vector {rotvec[row].tolist()} (columns "
            f"{', '.join(names)}); expected finite values whose length, the angle, is at most 2 pi rad"
        )
    quat[seen] = np.array([quat_from_rotvec(r) for r in rotvec[seen]]).reshape(-1, 4)
    return quat


def write_csv(dataset: ErrorDataset, path: str | Path) -> None:
    """Write ``dataset`` as the documented CSV (the columns of :meth:`ErrorDataset.columns`, NaN as empty cells).

    Args:
        dataset: The rows (the metadata is not written).
        path: The CSV file to write (replaced if it exists).
    """
    import pandas as pd

    frame = pd.DataFrame(dataset.columns())
    write_atomic(Path(path), lambda tmp: frame.to_csv(tmp, index=False, float_format="%.17g"), "a CSV dataset")


def dataset_of_record(record: TrajectoryRecord, robot: RobotIdentity, joint_units: tuple[str, ...]) -> ErrorDataset:
    """One robot's record of a case as dataset rows (set ``train``, one segment, every sample).

    Args:
        record: One robot's record of a case (its setpoints, measured joints and marker readings).
        robot: The robot the record is of.
        joint_units: The unit of each joint, ``rad`` or ``m``, shape (J,).
    """
    n = len(record.t_s)
    return ErrorDataset(
        robot,
        tuple(joint_units),
        np.full(n, "train"),
        np.zeros(n, dtype=np.int64),
        np.asarray(record.t_s, dtype=np.float64),
        record.q_setpoint,
        record.q_measured,
        record.marker_pos_m,
        record.marker_quat_wxyz,
        np.asarray(record.marker_error_m, dtype=np.float64),
        {"source": f"record of {record.test_id} ({record.robot.label}, {record.backend})"},
    )


def dataset_of_records(
    records: list[TrajectoryRecord],
    robot: RobotIdentity,
    joint_units: tuple[str, ...],
    held_out: frozenset[str] = frozenset(),
    source: str = "records",
) -> ErrorDataset:
    """Many cases' records of one robot as one dataset.

    A segment per case (in the given order, the history restarts with each case), set ``test`` for the cases named
    in ``held_out``, ``train`` for the others; every sample a row (a case that holds still repeats its setpoint:
    :mod:`~.repeats` merges those readings).

    Args:
        records: One robot's records, one per case, in segment order.
        robot: The robot the records are of.
        joint_units: The unit of each joint, ``rad`` or ``m``, shape (J,).
        held_out: Test ids of the cases whose rows are set ``test``.
        source: Where the records come from, for messages and the dataset's metadata.

    Raises:
        DatasetError: No records, or a record of another joint count.
    """
    if not records:
        raise DatasetError(f"{source}: no stored trajectories to make a dataset of")
    parts = [dataset_of_record(record, robot, joint_units) for record in records]
    lengths = [part.n_rows for part in parts]
    sets = np.concatenate(
        [np.full(n, "test" if r.test_id in held_out else "train") for r, n in zip(records, lengths, strict=True)]
    )
    meta = {"source": source, "cases": [r.test_id for r in records], "held_out": sorted(held_out)}
    return ErrorDataset(
        robot,
        tuple(joint_units),
        sets,
        np.repeat(np.arange(len(parts), dtype=np.int64), lengths),
        np.concatenate([p.time_s for p in parts]),
        np.concatenate([p.q_setpoint for p in parts]),
        np.concatenate([p.q_measured for p in parts]),
        np.concatenate([p.marker_pos_m for p in parts]),
        np.concatenate([p.marker_quat_wxyz for p in parts]),
        np.concatenate([p.marker_error_m for p in parts]),
        meta,
    )
