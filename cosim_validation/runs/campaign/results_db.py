"""The results database (SQLite, WAL): one row per case, per (case, robot, property) and per KPI.

Every case is written in one transaction as it finishes, so a crash or Ctrl-C never leaves half a case
and never loses a finished one; ``finished_ids()`` is what ``--resume`` skips. Trajectories are stored as
:meth:`TrajectoryRecord.to_bytes` blobs (compressed npz) or, with ``encoder=encode_record`` (what
campaigns use), in the ~10x smaller form of :mod:`cosim_validation.runs.campaign.record_codec`; readers take
both (the compact form needs the run's :class:`Kinematics`). A digital-twin session and a batch
campaign write the same schema, so ``cosim report`` reads both.
"""

from __future__ import annotations

import functools
import json
import sqlite3
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, TypeVar

from cosim_validation.common.config.config_node import MAX_POINT_M
from cosim_validation.common.exceptions import InputError
from cosim_validation.common.record import RobotRole, Stage, TrajectoryRecord
from cosim_validation.runs.campaign.db_salvage import (
    SalvageReport,
    integrity_problems,
    salvage_if_damaged,
    wrong_types,
)
from cosim_validation.runs.campaign.record_codec import decode_record
from cosim_validation.runs.campaign.stores import StoreDamagedError, connect, guarded, store_error

if TYPE_CHECKING:
    from cosim_validation.robots.model import Kinematics

RecordEncoder = Callable[[TrajectoryRecord], bytes]
P = ParamSpec("P")
R = TypeVar("R")

#: What to do about a damaged results database.
_REMEDY = (
    "a campaign's `cosim campaign ... --resume` salvages the database while its run table can still be read (it keeps "
    "the whole cases and runs the others again); otherwise move the file away and run the campaign again"
)

SCHEMA_VERSION = 1
#: How a stored case can end: a campaign's (case_row) and a session's or a replay's (unfinished: the recording
#: ended first; recorded: a recording without case status, one case over all of it).
CASE_OUTCOMES = ("completed", "refused", "aborted", "failed", "unfinished", "recorded")


def _near(coordinate: float | None) -> bool:
    """Whether a stored case coordinate is a number within ``MAX_POINT_M`` of the base (as the query above)."""
    return coordinate is not None and abs(coordinate) <= MAX_POINT_M


def _of(*kinds: type) -> Callable[[Any], bool]:
    return lambda value: isinstance(value, kinds)


_TEXT, _LIST, _FLAG = (_of(str), "a text"), (_of(list), "a list"), (_of(bool), "true or false")
#: Each meta value a run's readers (report, export, resume) use: what it must be, and that in an error's words.
_META_VALUES: dict[str, tuple[Callable[[Any], bool], str]] = {
    "kind": (lambda value: value in ("campaign", "session"), "campaign or session"),
    "config": _TEXT,
    "config_path": _TEXT,
    "controller": _TEXT,
    "safety_property": _TEXT,
    "suites": _LIST,
    "backends": _LIST,
    "robots": _LIST,
    "filters": _LIST,
    "error_models": _LIST,
    "anatomy_repairs": _LIST,
    "validate": _FLAG,
    "stop_on_alarm": _FLAG,
    "assembly": (_of(dict), "a mapping"),
    "supervisor": (_of(str, type(None)), "a text or null"),
    "detector": (_of(str, type(None)), "a text or null"),
}
_ROBOTS = tuple(role.label for role in RobotRole)
_STAGES = tuple(stage.label for stage in Stage)
_POINT_COLUMNS = tuple(f"{point}_{axis}_m" for point in ("source", "target") for axis in "xyz")
_KPI_STAGES = ("case", *_STAGES[1:])  # a whole-case KPI is stored under "case" (result_rows.kpi_row)
#: the largest KPI a run measures: distances and angles of records bounded by 1e3, durations of at most an hour
MAX_KPI = 1e4
#: the units of a property's margin (the property language's) and of a KPI (distances, angles, durations)
_MARGIN_UNITS = ("m", "rad", "s", "1")
_KPI_UNITS = ("m", "rad", "s")
#: (table, column, the values it may hold, what the error says was expected)
_VOCABULARIES = (
    ("verdicts", "status", ("holds", "violated", "unknown"), "holds, violated or unknown"),
    ("cases", "outcome", CASE_OUTCOMES, "one of " + ", ".join(CASE_OUTCOMES)),
    *(
        (table, "robot", _ROBOTS, "one of " + ", ".join(_ROBOTS))  # a report counted a robot 'martian'
        for table in ("verdicts", "kpis", "trajectories", "events")
    ),
    # a stage no case has: the report's KPI table ended in a pandas TypeError
    ("kpis", "stage", _KPI_STAGES, "one of " + ", ".join(_KPI_STAGES)),
    ("verdicts", "first_violation_stage", _STAGES, "one of " + ", ".join(_STAGES)),
    # units no property or KPI has (a KPI in 'furlong' was reported as measured)
    ("verdicts", "unit", _MARGIN_UNITS, "one of " + ", ".join(_MARGIN_UNITS)),
    ("kpis", "unit", _KPI_UNITS, "one of " + ", ".join(_KPI_UNITS)),
)
#: A completed case without any verdict or any KPI: a resume counted it as stored and a report left it out of its
#: counts (a case's rows are written in one transaction; its trajectories may be missing: a session's recorder can
#: lose a robot)
_INCOMPLETE_CASE = """
SELECT test_id, v, k FROM (
    SELECT test_id,
        (SELECT count(*) FROM verdicts WHERE verdicts.test_id = cases.test_id) AS v,
        (SELECT count(*) FROM kpis WHERE kpis.test_id = cases.test_id) AS k
    FROM cases WHERE outcome = 'completed')
WHERE v = 0 OR k = 0
LIMIT 1
"""
#: What a changed digest of the meta means (the values themselves are hashes)
_CHANGED = {
    "config": "the configuration, or a file it names (properties, supervisor), was edited since the run started",
    "error_models": "an error model of --filter holds other content than when the run started",
    "suite": "another suite (suite ids are hashes of their cases)",
    "input_files": "the robot's URDF, an anatomy mesh or a hazard library was edited since the run started",
}
#: The meta a resume must find unchanged (a run made before a key was stored is not checked on that key). The
#: options come before the configuration's digest: that digest covers the supervisor's files when one runs, so a
#: changed option is named rather than the digest it changes too.
_RUN_KEYS = (
    "suite",
    "controller",
    "backends",
    "validate",
    "filters",
    "error_models",
    "detector",
    "stop_on_alarm",
    "supervisor",
    "config",
    "input_files",
)


def _edited_files(stored: str | None, wanted: str | None) -> str:
    """``: <file> (<what it is>), ... edited since the run started``: the configuration's files that changed.

    Each file of the configuration's digest is digested on its own too (``config_files``). Empty when the run was
    made before that, or when the two sets of files differ by role (another supervisor, not an edited file: its
    option is named first).

    Args:
        stored: The run's ``config_files`` meta (JSON: role -> [file name, digest]), or None.
        wanted: This start's ``config_files`` meta, or None.
    """
    if stored is None or wanted is None:
        return ""
    try:
        before, now = json.loads(stored), json.loads(wanted)
    except ValueError:  # a meta value edited outside cosim: the general words
        return ""
    if not isinstance(before, dict) or not isinstance(now, dict) or set(before) != set(now):
        return ""
    changed = [role for role in now if before[role] != now[role]]
    edited = [f"{_name(now[r])} ({_input_words(r)})" for r in changed if _name(before[r]) == _name(now[r])]
    other = [  # another file given (--config diff.yaml): not edited, and its message must not say so
        f"{_name(now[r])} ({_input_words(r)}) is not the {_name(before[r])} the run started with"
        for r in changed
        if _name(before[r]) != _name(now[r])
    ]
    said = [*other, *([f"{', '.join(edited)} edited since the run started"] if edited else [])]
    return f": {'; '.join(said)}" if said else ""


def _name(entry: object) -> str:
    """The file name of a ``config_files`` entry ([file name, digest]), or "" for one that is not so."""
    return str(entry[0]) if isinstance(entry, list) and entry else ""


def _same_twins(stored: Mapping[str, str], wanted: Mapping[str, str]) -> bool:
    """Whether two runs' filters differ only in the paths that name their error models, whose content is the same.

    ``model=./m.npz`` and ``model=m.npz`` name one file: the error models are compared by content
    (``error_models``, SHA-256 of each file), the other filters as written.

    Args:
        stored: The run's meta (JSON text by key).
        wanted: This start's meta.
    """
    try:
        before, now = json.loads(stored["filters"]), json.loads(wanted["filters"])
        models = json.loads(stored.get("error_models", "null")), json.loads(wanted.get("error_models", "null"))
    except ValueError:
        return False
    if not all(isinstance(v, list) for v in (before, now, *models)) or models[0] != models[1]:
        return False
    if not all(str(identity).partition("=")[2].startswith("errors:sha256=") for identity in models[1]):
        return False  # a model file that was not there is named by its path alone

    def unnamed(texts: list[Any]) -> list[str]:
        robot_and_kind = (str(t).partition("=") for t in texts)
        return [f"{r}=errors" if rest.startswith("errors:") else f"{r}={rest}" for r, _, rest in robot_and_kind]

    return unnamed(before) == unnamed(now)


def _input_words(role: str) -> str:
    """What the run's input file of ``role`` is, in a refusal's words."""
    if role.startswith("mesh_"):
        return f"the anatomy model {role.removeprefix('mesh_')}'s mesh"
    if role.startswith("hazards_"):
        return f"the hazard library of the {role.removeprefix('hazards_')} robot's filter"
    return _INPUT_WORDS.get(role, role)


#: The files of a run's configuration digest, by role, in a refusal's words
_INPUT_WORDS = {
    "config": "the configuration",
    "properties": "the property file",
    "supervisor": "the supervisor's configuration",
    "supervisor_machine": "the supervisor's machine",
    "needle_force": "the needle force model",
    "supervisor_scenario": "the supervisor's scenario",
    "teleoperation": "the teleoperation script",
    "urdf": "the robot's URDF",
}


_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS cases (
    test_id TEXT PRIMARY KEY, case_index INTEGER NOT NULL,
    source_x_m REAL, source_y_m REAL, source_z_m REAL,
    target_x_m REAL, target_y_m REAL, target_z_m REAL,
    cube_i INTEGER, cube_j INTEGER, cube_k INTEGER, granularity_m REAL, generator TEXT, target_depth_m REAL,
    controller TEXT NOT NULL, outcome TEXT NOT NULL, message TEXT NOT NULL,
    duration_s REAL);
CREATE TABLE IF NOT EXISTS timings (
    test_id TEXT PRIMARY KEY REFERENCES cases(test_id), wall_s REAL NOT NULL, worker TEXT NOT NULL,
    finished_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')));
CREATE TABLE IF NOT EXISTS verdicts (
    test_id TEXT NOT NULL REFERENCES cases(test_id), robot TEXT NOT NULL, property TEXT NOT NULL,
    status TEXT NOT NULL, margin REAL, unit TEXT NOT NULL,
    first_violation_time_s REAL, first_violation_stage TEXT NOT NULL, reason TEXT NOT NULL,
    PRIMARY KEY (test_id, robot, property));
CREATE TABLE IF NOT EXISTS kpis (
    test_id TEXT NOT NULL REFERENCES cases(test_id), robot TEXT NOT NULL, name TEXT NOT NULL,
    stage TEXT NOT NULL, value REAL, unit TEXT NOT NULL,
    PRIMARY KEY (test_id, robot, name, stage));
CREATE TABLE IF NOT EXISTS trajectories (
    test_id TEXT NOT NULL REFERENCES cases(test_id), robot TEXT NOT NULL, record BLOB NOT NULL,
    PRIMARY KEY (test_id, robot));
CREATE TABLE IF NOT EXISTS events (
    test_id TEXT NOT NULL REFERENCES cases(test_id), robot TEXT NOT NULL, seq INTEGER NOT NULL, t_s REAL NOT NULL,
    kind TEXT NOT NULL, name TEXT NOT NULL, detail TEXT NOT NULL, PRIMARY KEY (test_id, robot, seq));
CREATE TABLE IF NOT EXISTS worker_deaths (test_id TEXT PRIMARY KEY REFERENCES cases(test_id), reason TEXT NOT NULL);
"""
#: The tables with rows of a case (a case stored as failed because its worker died is replaced by its re-run).
_ROWS_OF_A_CASE = ("verdicts", "kpis", "trajectories", "events", "timings", "worker_deaths", "cases")


@dataclass(frozen=True)
class CaseRow:
    """One finished case: its input and its outcome (completed | refused | aborted | failed).

    Deterministic for a given suite and configuration: how long it took and where it ran are kept apart
    (:class:`CaseResult` ``wall_s``, ``worker``), so two runs of a suite give identical rows.
    """

    test_id: str
    case_index: int
    source_x_m: float
    source_y_m: float
    source_z_m: float
    target_x_m: float
    target_y_m: float
    target_z_m: float
    cube_i: int
    cube_j: int
    cube_k: int
    granularity_m: float
    generator: str
    target_depth_m: float
    controller: str
    outcome: str
    message: str
    duration_s: float


@dataclass(frozen=True)
class VerdictRow:
    """One property's verdict on one robot. Status: holds | violated | unknown."""

    test_id: str
    robot: str
    property: str
    status: str
    margin: float | None
    unit: str
    first_violation_time_s: float | None
    first_violation_stage: str
    reason: str


@dataclass(frozen=True)
class KpiRow:
    """One KPI of one robot; stage is a stage label or "case" for the whole case."""

    test_id: str
    robot: str
    name: str
    stage: str
    value: float | None
    unit: str


@dataclass(frozen=True)
class EventRow:
    """Something a robot filter did during a case (an injected fault's window opening or closing), in order.

    Attributes:
        test_id, robot: The case and the robot whose filter it was.
        seq: Its place among that robot's events of the case (0, 1, ...).
        t_s: Case time [s]; kind, name, detail: as the filter's ``FilterEvent``.
    """

    test_id: str
    robot: str
    seq: int
    t_s: float
    kind: str
    name: str
    detail: str


@dataclass(frozen=True)
class CaseResult:
    """Everything stored for one case."""

    case: CaseRow
    verdicts: tuple[VerdictRow, ...] = ()
    kpis: tuple[KpiRow, ...] = ()
    trajectories: tuple[TrajectoryRecord, ...] = ()
    wall_s: float = 0.0
    worker: str = ""
    events: tuple[EventRow, ...] = ()


def _insert(table: str, row_type: type) -> str:
    names = [f.name for f in fields(row_type)]
    return f"INSERT INTO {table} ({', '.join(names)}) VALUES ({', '.join('?' * len(names))})"


_INSERT_CASE = _insert("cases", CaseRow)
_INSERT_VERDICT = _insert("verdicts", VerdictRow)
_INSERT_KPI = _insert("kpis", KpiRow)
_INSERT_EVENT = _insert("events", EventRow)


def _guard(doing: str) -> Callable[[Callable[Concatenate[ResultsDB, P], R]], Callable[Concatenate[ResultsDB, P], R]]:
    """A method whose failure of the database is a :class:`StoreError` naming the file (``doing``: what it does)."""

    def wrap(method: Callable[Concatenate[ResultsDB, P], R]) -> Callable[Concatenate[ResultsDB, P], R]:
        def guarded_method(self: ResultsDB, *args: P.args, **kwargs: P.kwargs) -> R:
            with guarded(self.path, doing, _REMEDY):
                return method(self, *args, **kwargs)

        return functools.update_wrapper(guarded_method, method)  # type: ignore[return-value]

    return wrap


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def _nan_to_none(row: Any) -> tuple[Any, ...]:
    """A flat row dataclass's values in field order, NaN as None (SQL NULL); no deep copy, as ``asdict`` made."""
    names = _FIELD_NAMES.get(type(row))
    if names is None:
        names = _FIELD_NAMES[type(row)] = tuple(f.name for f in fields(row))
    values = (getattr(row, name) for name in names)
    return tuple(None if isinstance(v, float) and v != v else v for v in values)


class ResultsDB:
    """A results database file; open it with :meth:`create` or :meth:`open`.

    Args:
        path: The ``results.sqlite`` file.
        connection: An open sqlite3 connection to it.
        encoder: How trajectories are stored (default: full :meth:`TrajectoryRecord.to_bytes`).
    """

    def __init__(self, path: Path, connection: sqlite3.Connection, encoder: RecordEncoder | None = None) -> None:
        self.path = path
        self._db = connection
        self._encode: RecordEncoder = encoder or TrajectoryRecord.to_bytes
        #: What a resume found damaged and kept (None: the database was sound).
        self.salvaged: SalvageReport | None = None

    @classmethod
    def create(
        cls, path: str | Path, meta: Mapping[str, Any], *, resume: bool = False, encoder: RecordEncoder | None = None
    ) -> ResultsDB:
        """Create (or, with ``resume``, reopen) a database for a run described by ``meta``.

        A resumed database that is damaged is salvaged first (:attr:`salvaged` says what was kept).

        Args:
            path: The ``results.sqlite`` file; must not exist unless ``resume``, must exist with it.
            meta: The run's metadata (JSON-able values by key), stored in the ``meta`` table.
            resume: Reopen the file of the same run and keep its cases.
            encoder: How trajectories are stored (None: full :meth:`TrajectoryRecord.to_bytes`).

        Raises:
            InputError: The file exists and ``resume`` is false, or it belongs to another run (one of its
                ``_RUN_KEYS`` meta differs: suite, configuration, controller, backends, filters, detector...).
        """
        path = Path(path)
        if path.exists() and not resume:
            raise InputError(f"{path}: already exists; use --resume to continue that run or choose another --out")
        if resume and not path.exists():
            raise InputError(f"{path}: nothing to resume (no results database there)")
        salvaged = salvage_if_damaged(path, _SCHEMA) if resume else None
        db = cls(path, _connect(path, create=not resume), encoder)
        db.salvaged = salvaged
        try:
            if resume:  # what a report refuses, a resume must not build on (it summarised a tampered verdict away)
                db._check(thoroughly=True)
            db._start(meta)
        except BaseException:
            db.close()
            raise
        return db

    @_guard("starting the run")
    def _start(self, meta: Mapping[str, Any]) -> None:
        """Create the tables and store ``meta``, unless the stored run is another one."""
        with self._db:
            self._db.executescript(_SCHEMA)
            stored = dict(self._db.execute("SELECT key, value FROM meta"))
            wanted = {k: json.dumps(v, sort_keys=True) for k, v in {"schema": SCHEMA_VERSION, **meta}.items()}
            if "schema" in stored and stored["schema"] != wanted["schema"]:
                raise InputError(f"{self.path}: results schema {stored['schema']}, this version reads {SCHEMA_VERSION}")
            for key in _RUN_KEYS:
                if key in stored and key in wanted and stored[key] != wanted[key]:
                    if key == "filters" and _same_twins(stored, wanted):
                        continue
                    what = f": {_CHANGED[key]}" if key in _CHANGED else ""
                    values = f" (stored {json.loads(stored[key])!r}, now {json.loads(wanted[key])!r})"
                    if key in ("config", "input_files"):
                        files = "config_files" if key == "config" else key
                        edited = _edited_files(stored.get(files), wanted.get(files))
                        what = edited or what
                        values = (
                            "" if edited and key == "input_files" else values
                        )  # the files are named, digests left out
                    raise InputError(
                        f"{self.path}: cannot resume, it was made with another value of {key!r}{what}{values}"
                    )
            self._db.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", wanted.items())

    @classmethod
    def open(cls, path: str | Path, encoder: RecordEncoder | None = None, *, check: bool = True) -> ResultsDB:
        """Open an existing database.

        Args:
            path: The database file.
            encoder: How :meth:`add_trajectories` stores records.
            check: Run ``PRAGMA quick_check`` first and refuse a damaged database.

        Raises:
            InputError: No database, not a results database, another schema, or damaged (naming what).
        """
        path = Path(path)
        if not path.is_file():
            raise InputError(f"{path}: no results database")
        db = cls(path, _connect(path), encoder)
        try:
            db._check(check)
        except BaseException:
            db.close()
            raise
        return db

    @_guard("checking the database")
    def _check(self, thoroughly: bool) -> None:
        """Refuse a damaged database, another schema, and (``thoroughly``) text where numbers belong."""
        problems = integrity_problems(self._db) if thoroughly else []
        if problems:
            raise StoreDamagedError(
                self.path, f"the database is damaged (quick_check: {'; '.join(problems[:3])})", _REMEDY
            )
        try:
            self._db.execute("SELECT key, value FROM meta LIMIT 1").fetchall()
        except sqlite3.Error:
            raise StoreDamagedError(self.path, "not a results database (no run meta in it)") from None
        version = self.meta().get("schema")  # a damaged value is named with its key
        if version != SCHEMA_VERSION:
            raise InputError(f"{self.path}: results schema {version!r}, this version reads {SCHEMA_VERSION}")
        if not thoroughly:
            return
        wrong = wrong_types(self._db)
        if wrong is not None:
            table, test_id, column, value = wrong
            raise _changed_outside(self.path, table, test_id, column, value, "a number")
        # labels the report does not count (a verdict status summed to no verdict at all, an outcome to no case)
        # and a KPI no measurement gives (an infinite value: the report's means became inf)
        for table, column, valid, expected in _VOCABULARIES:
            listed = ", ".join(f"'{v}'" for v in valid)
            row = self._db.execute(
                f"SELECT test_id, {column} FROM {table} WHERE {column} NOT IN ({listed}) LIMIT 1"
            ).fetchone()
            if row is not None:
                raise _changed_outside(self.path, table, row[0], column, row[1], expected)
        row = self._db.execute(f"SELECT test_id, value FROM kpis WHERE abs(value) > {MAX_KPI!r} LIMIT 1")
        if (huge := row.fetchone()) is not None:  # an infinite one made the report's means inf; 1e308 null
            raise _changed_outside(self.path, "kpis", huge[0], "value", huge[1], f"a KPI within {MAX_KPI:g}")
        # a verdict's status is its margin's sign (> 0 holds, <= 0 violated): a mismatch was counted as it said
        row = self._db.execute(
            "SELECT test_id, margin, status FROM verdicts WHERE (status = 'holds' AND margin <= 0) "
            "OR (status = 'violated' AND margin > 0) LIMIT 1"
        ).fetchone()
        if row is not None:
            expected = "a margin > 0 for a verdict that holds" if row[2] == "holds" else "a margin <= 0 when violated"
            raise _changed_outside(self.path, "verdicts", row[0], "margin", row[1], expected)
        # a NULL target ended the report's figure in a traceback; 1e300 m was drawn (one pass over the cases)
        outside = " OR ".join(f"{c} IS NULL OR abs({c}) > {MAX_POINT_M!r}" for c in _POINT_COLUMNS)
        row = self._db.execute(f"SELECT test_id, {', '.join(_POINT_COLUMNS)} FROM cases WHERE {outside} LIMIT 1")
        if (far := row.fetchone()) is not None:
            column, value = next((c, v) for c, v in zip(_POINT_COLUMNS, far[1:], strict=True) if not _near(v))
            raise _changed_outside(self.path, "cases", far[0], column, value, f"a coordinate within {MAX_POINT_M:g} m")
        # times no run measures; every KPI is a distance, an angle or a duration: never negative
        for table, column, expected in (
            ("cases", "duration_s", "a time >= 0"),
            ("timings", "wall_s", "a time >= 0"),
            ("kpis", "value", "a KPI >= 0 (a distance, angle or duration)"),
            ("cases", "case_index", "a position in the run >= 0"),
        ):
            negative = self._db.execute(f"SELECT test_id, {column} FROM {table} WHERE {column} < 0 LIMIT 1").fetchone()
            if negative is not None:
                raise _changed_outside(self.path, table, negative[0], column, negative[1], expected)
        # each case has its own position in the run: a second case at the same one was counted twice by the report
        row = self._db.execute(
            "SELECT max(test_id), case_index FROM cases GROUP BY case_index HAVING count(*) > 1 LIMIT 1"
        ).fetchone()
        if row is not None:
            raise _changed_outside(
                self.path, "cases", row[0], "case_index", row[1], "a position in the run no other case holds"
            )
        self._refuse_orphans()
        self._refuse_incomplete_cases()

    def _refuse_incomplete_cases(self) -> None:
        """Refuse a completed case without any verdict or any KPI."""
        row = self._db.execute(_INCOMPLETE_CASE).fetchone()
        if row is not None:
            table = "verdicts" if row[1] == 0 else "kpis"
            raise StoreDamagedError(
                self.path,
                f"case {str(row[0])!r} is stored as completed but table {table} holds no row of it (the file was "
                "changed outside cosim: restore it, or delete that case's rows and run `cosim campaign ... --resume`)",
            )

    def _refuse_orphans(self) -> None:
        """Refuse a row of a case the ``cases`` table does not hold (a report failed on it, a resume counted it)."""
        orphan = self._db.execute("PRAGMA foreign_key_check").fetchone()
        if orphan is not None:
            (test_id,) = self._db.execute(f"SELECT test_id FROM {orphan[0]} WHERE rowid = ?", (orphan[1],)).fetchone()
            raise StoreDamagedError(
                self.path,
                f"table {orphan[0]}, case {str(test_id)!r}: no such case in table cases (the file was changed outside "
                "cosim: restore it, or delete that case's rows and run `cosim campaign ... --resume`)",
            )

    @_guard("reading the run's meta")
    def meta(self) -> dict[str, Any]:
        """The run's metadata."""
        out: dict[str, Any] = {}
        for key, value in self._db.execute("SELECT key, value FROM meta"):
            try:
                out[key] = json.loads(value)
            except (TypeError, ValueError):  # JSONDecodeError is a ValueError
                raise StoreDamagedError(
                    self.path,
                    f"table meta: {key} holds {value!r}, expected JSON (the file was changed outside cosim: "
                    "restore it)",
                ) from None
            valid, expected = _META_VALUES.get(key, (None, ""))
            if valid is not None and not valid(out[key]):  # a report joined the number 42
                raise StoreDamagedError(
                    self.path,
                    f"table meta: {key} holds {value!r}, expected {expected} (the file was changed outside cosim: "
                    "restore it)",
                )
        return out

    def add(self, result: CaseResult, worker_died: bool = False) -> None:
        """Store one finished case atomically (all its rows or none).

        Args:
            result: The case's rows.
            worker_died: The case failed because its worker process died (no verdict of the controller): it is
                not :meth:`finished_ids`, so a resume runs it again and its new rows replace these.

        Raises:
            StoreError: The case could not be stored (a full disk, a lock); the cases stored before stay.
        """
        test_id = result.case.test_id
        _refuse_others(result.trajectories, test_id, self.path)
        with guarded(self.path, f"storing case {test_id}", _REMEDY), self._db:
            died = self._db.execute("SELECT 1 FROM worker_deaths WHERE test_id = ?", (test_id,)).fetchone()
            if died is not None:  # the re-run of a case whose worker died: its old rows go
                for table in _ROWS_OF_A_CASE:
                    self._db.execute(f"DELETE FROM {table} WHERE test_id = ?", (test_id,))
            self._db.execute(_INSERT_CASE, _nan_to_none(result.case))
            self._db.executemany(_INSERT_VERDICT, [_nan_to_none(v) for v in result.verdicts])
            self._db.executemany(_INSERT_KPI, [_nan_to_none(k) for k in result.kpis])
            self._db.executemany(_INSERT_EVENT, [_nan_to_none(e) for e in result.events])
            self._db.executemany(
                "INSERT INTO trajectories VALUES (?, ?, ?)",
                [(result.case.test_id, r.robot.label, self._encode(r)) for r in result.trajectories],
            )
            self._db.execute(
                "INSERT INTO timings (test_id, wall_s, worker) VALUES (?, ?, ?)",
                (result.case.test_id, result.wall_s, result.worker),
            )
            if worker_died:
                self._db.execute("INSERT INTO worker_deaths VALUES (?, ?)", (test_id, result.case.message))

    @_guard("storing trajectories")
    def add_trajectories(self, test_id: str, records: Sequence[TrajectoryRecord]) -> None:
        """Store the trajectories of a case stored earlier (a session rebuilds them from its bag).

        A robot's trajectory already stored for the case is replaced.

        Args:
            test_id: The stored case's test id.
            records: Its records, one per robot.
        """
        _refuse_others(records, test_id, self.path)
        with self._db:
            self._db.executemany(
                "INSERT OR REPLACE INTO trajectories VALUES (?, ?, ?)",
                [(test_id, r.robot.label, self._encode(r)) for r in records],
            )

    @_guard("reading the stored cases")
    def finished_ids(self) -> set[str]:
        """Ids of the cases already stored, but for those that failed because their worker died.

        A resume runs those again; a failure the controller or the pipeline reported stays.
        """
        query = "SELECT test_id FROM cases WHERE test_id NOT IN (SELECT test_id FROM worker_deaths)"
        return {row[0] for row in self._db.execute(query)}

    @_guard("reading the cases whose worker died")
    def worker_deaths(self) -> dict[str, str]:
        """The cases stored as failed because their worker process died, and how it died."""
        return dict(self._db.execute("SELECT test_id, reason FROM worker_deaths"))

    @_guard("reading the cases")
    def cases(self) -> list[CaseRow]:
        """Every case, in case order."""
        cur = self._db.execute(f"SELECT {', '.join(f.name for f in fields(CaseRow))} FROM cases ORDER BY case_index")
        return [CaseRow(*row) for row in cur]

    @_guard("reading the verdicts")
    def verdicts(self) -> list[VerdictRow]:
        """Every verdict row."""
        cur = self._db.execute(
            f"SELECT {', '.join(f.name for f in fields(VerdictRow))} FROM verdicts ORDER BY test_id, robot, property"
        )
        return [VerdictRow(*row) for row in cur]

    @_guard("reading the KPIs")
    def kpis(self) -> list[KpiRow]:
        """Every KPI row."""
        cur = self._db.execute(
            f"SELECT {', '.join(f.name for f in fields(KpiRow))} FROM kpis ORDER BY test_id, robot, name, stage"
        )
        return [KpiRow(*row) for row in cur]

    @_guard("reading the events")
    def events(self) -> list[EventRow] | None:
        """Every robot filter event, by case, robot and order; None for a run made before they were stored."""
        if self._db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'events'").fetchone() is None:
            return None
        names = ", ".join(f.name for f in fields(EventRow))
        return [EventRow(*row) for row in self._db.execute(f"SELECT {names} FROM events ORDER BY test_id, robot, seq")]

    @_guard("reading the timings")
    def timings(self) -> dict[str, tuple[float, str]]:
        """``{test_id: (wall time [s], worker)}``."""
        return {t: (w, k) for t, w, k in self._db.execute("SELECT test_id, wall_s, worker FROM timings")}

    @_guard("reading a trajectory")
    def trajectory(self, test_id: str, robot: str, kinematics: Kinematics | None = None) -> TrajectoryRecord:
        """The stored trajectory of one robot in one case (``kinematics`` rebuilds compact records).

        Args:
            test_id: The case's test id.
            robot: The robot's label (``expected``, ``virtual``, ``physical``).
            kinematics: The run's nominal arm and needle; needed for compact records only.

        Raises:
            InputError: No such trajectory, or a compact record without ``kinematics``.
        """
        row = self._db.execute(
            "SELECT record FROM trajectories WHERE test_id = ? AND robot = ?", (test_id, robot)
        ).fetchone()
        if row is None:
            raise InputError(f"{self.path}: no {robot} trajectory for case {test_id!r}")
        return _stored_as(
            decode_record(row[0], kinematics, source=f"{self.path}:{test_id}/{robot}"), test_id, robot, self.path
        )

    @_guard("reading the trajectories")
    def trajectory_robots(self) -> dict[str, list[str]]:
        """``{test_id: [robot, ...]}`` of every stored trajectory."""
        out: dict[str, list[str]] = {}
        for test_id, robot in self._db.execute("SELECT test_id, robot FROM trajectories ORDER BY test_id, robot"):
            out.setdefault(test_id, []).append(robot)
        return out

    def trajectories(self, robot: str, kinematics: Kinematics | None = None) -> Iterator[TrajectoryRecord]:
        """Every stored trajectory of ``robot``, in case order (``kinematics`` rebuilds compact records).

        Args:
            robot: The robot's label (``expected``, ``virtual``, ``physical``).
            kinematics: The run's nominal arm and needle; needed for compact records only.
        """
        sql = (
            "SELECT t.test_id, t.record FROM trajectories t JOIN cases c USING (test_id) "
            "WHERE t.robot = ? ORDER BY c.case_index"
        )
        with guarded(self.path, "reading the trajectories", _REMEDY):
            rows = iter(self._db.execute(sql, (robot,)))
        while True:
            with guarded(self.path, "reading the trajectories", _REMEDY):
                row = next(rows, None)
            if row is None:
                return
            yield _stored_as(
                decode_record(row[1], kinematics, source=f"{self.path}:{row[0]}/{robot}"), row[0], robot, self.path
            )

    @_guard("querying")
    def query(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        """The rows of a read-only query (aggregates over a run of any size).

        Args:
            sql: The SQL query, with ``?`` placeholders.
            params: The values of the placeholders.
        """
        return self._db.execute(sql, params).fetchall()

    def frame(self, sql: str, params: tuple[Any, ...] = ()) -> Any:
        """The rows of a read-only query as a pandas DataFrame (for reports over 100,000 cases).

        Args:
            sql: The SQL query, with ``?`` placeholders.
            params: The values of the placeholders.
        """
        import pandas as pd

        try:
            return pd.read_sql_query(sql, self._db, params=params)
        except Exception as exc:  # pandas wraps the sqlite3 error in its own DatabaseError
            cause = exc.__cause__ if isinstance(exc.__cause__, sqlite3.Error) else exc
            if not isinstance(cause, sqlite3.Error):
                raise
            raise store_error(self.path, cause, "querying", _REMEDY) from None

    def close(self) -> None:
        """Close the connection."""
        with guarded(self.path, "closing the database", _REMEDY):
            self._db.close()

    def __enter__(self) -> ResultsDB:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _refuse_others(records: Sequence[TrajectoryRecord], test_id: str, path: Path) -> None:
    """An InputError if a record to store under case ``test_id`` is another case's (read back, it is refused)."""
    for record in records:
        if record.test_id != test_id:
            raise InputError(f"{path}: case {test_id!r} cannot store the trajectory of case {record.test_id!r}")


def _stored_as(record: TrajectoryRecord, test_id: str, robot: str, path: Path) -> TrajectoryRecord:
    """``record`` if it is the trajectory of ``robot`` in case ``test_id`` it is stored as, else an InputError.

    A record whose header names another robot or case (a hand-edited or mixed-up store) was exported under the row's
    name with the header's content.
    """
    if record.robot.label != robot or record.test_id != test_id:
        raise InputError(
            f"{path}: the {robot} trajectory of case {test_id!r} holds the {record.robot.label} trajectory of case "
            f"{record.test_id!r}; the store is damaged"
        )
    return record


def _connect(path: Path, create: bool = False) -> sqlite3.Connection:
    connection = connect(path, create=create, remedy=_REMEDY)
    try:
        with guarded(path, "opening the database", _REMEDY):
            connection.execute("PRAGMA journal_mode=WAL")
            connection.execute("PRAGMA synchronous=NORMAL")
            connection.execute("PRAGMA foreign_keys=ON")
    except BaseException:
        connection.close()
        raise
    return connection


def _changed_outside(path: Path, table: str, test_id: object, column: str, value: object, expected: str) -> Exception:
    """The error for a value no cosim run stores: it names the table, the case and the column, and the remedy."""
    return StoreDamagedError(
        path,
        f"table {table}, case {str(test_id)!r}: {column} holds {value!r}, expected {expected} (the file was changed "
        "outside cosim: restore it, or delete that case's rows and run `cosim campaign ... --resume`)",
    )
