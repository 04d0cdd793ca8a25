"""Detection results of a hazard campaign: per window, per case, per scenario, in the run's SQLite.

A hazard campaign (``cosim hazards run``) runs a suite fault-free and under each scenario (one campaign run each,
``RUN/runs/<name>/results.sqlite``); this module runs the detector over their stored records (the physical robot
against the virtual twin of the same case), takes each case's injection windows from the events its filter
stored as they happened (a run made before events were stored: recomputed from the scenario and the case seed),
and writes ``RUN/hazards.sqlite``:

- ``scenarios``: the library entries run (name, outcome, strike, fault, trigger, duration);
- ``thresholds``: the detector's settings and where they came from;
- ``windows``: one row per injected window (detected, latency from onset and from the threshold crossing, max
  deviation, the second detector);
- ``detection``: one row per case and scenario (outcome, alarm episodes outside any window, max deviation,
  properties of the physical robot violated with the fault that hold fault-free).
"""

from __future__ import annotations

import math
import os
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from contextlib import closing
from dataclasses import astuple, dataclass, fields
from pathlib import Path

import numpy as np

from cosim_validation.common.exceptions import InputError
from cosim_validation.common.record import TrajectoryRecord
from cosim_validation.hazards.command_progress import command_progress
from cosim_validation.hazards.detector import Detection, DetectorSettings, derive_threshold, detect, deviations
from cosim_validation.hazards.fault_window import schedule, windows_of_events
from cosim_validation.hazards.hazard_library import case_warnings
from cosim_validation.hazards.scenario import Scenario
from cosim_validation.hazards.window_verdict import WindowVerdict, judge_windows
from cosim_validation.robots.model import Kinematics
from cosim_validation.runs.campaign.db_salvage import integrity_problems
from cosim_validation.runs.campaign.results_db import ResultsDB
from cosim_validation.runs.campaign.stores import StoreDamagedError, connect, guarded

FAULT_FREE = "fault_free"
HAZARDS_FILE = "hazards.sqlite"


def _remedy(path: Path) -> str:
    """What to do about damaged hazard tables: they are computed from the stored runs."""
    return f"rebuild it from the stored runs: `cosim hazards run --reanalyse --out {path.parent}` (the run's options)"


@dataclass(frozen=True)
class CaseDetection:
    """One case of one scenario (``fault_free`` included), judged.

    Attributes:
        scenario: Scenario name or ``fault_free``.
        test_id: The case.
        outcome: The case's outcome (completed, refused, aborted, failed).
        duration_s: Length of the records compared [s].
        windows: Injected windows.
        detected: Of them, detected by the first detector.
        false_alarms: Alarm episodes of the first detector outside every window and its grace time.
        second_false_alarms: The same for the second detector.
        max_deviation_m: Largest tip deviation robot vs model [m].
        max_joint_deviation: Largest joint deviation [rad | m].
        violated_by_fault: Properties of the physical robot violated here that hold in the fault-free run.
    """

    scenario: str
    test_id: str
    outcome: str
    duration_s: float
    windows: int
    detected: int
    false_alarms: int
    second_false_alarms: int
    max_deviation_m: float
    max_joint_deviation: float
    violated_by_fault: str


def record_pairs(db: ResultsDB, kinematics: Kinematics) -> Iterator[tuple[str, TrajectoryRecord, TrajectoryRecord]]:
    """``(outcome, physical, virtual)`` of every case of ``db`` that has both records.

    Args:
        db: A campaign run's results.
        kinematics: The robot's kinematics, to rebuild compact stored records.
    """
    robots = db.trajectory_robots()
    for case in db.cases():
        if {"physical", "virtual"} <= set(robots.get(case.test_id, ())):
            physical = db.trajectory(case.test_id, "physical", kinematics)
            yield case.outcome, physical, db.trajectory(case.test_id, "virtual", kinematics)


def _case_seed(record: TrajectoryRecord) -> int:
    """The case seed kept in ``record``'s meta, from which a run made before events were stored draws its windows.

    Raises:
        InputError: The meta has no seed, or one that is not an integer >= 0 (the message names the case).
    """
    seed = record.meta.get("seed")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise InputError(
            f"case {record.test_id!r}, physical record: meta 'seed' must be the case's seed, an integer >= 0, got "
            f"{seed!r} (this run has no events table, so its fault windows are drawn again from that seed)"
        )
    return seed


def derive_settings(db: ResultsDB, kinematics: Kinematics, margin: float) -> DetectorSettings:
    """Thresholds from the fault-free run ``db``: each quantity's largest value over its cases times ``margin``.

    Args:
        db: The results of a fault-free campaign run with the virtual and physical records.
        kinematics: The robot's kinematics, to rebuild compact stored records.
        margin: The factor above the largest fault-free value, > 1.

    Raises:
        InputError: A quantity without a finite fault-free value (e.g. no case with both records), or a margin not
            above 1.
    """
    tips, joints, residuals, progress = [], [], [], []
    for _, physical, virtual in record_pairs(db, kinematics):
        tip_m, joint, residual_m = deviations(physical, virtual)
        tips.append(tip_m.max(initial=0.0))
        joints.append(joint.max(initial=0.0))
        residuals.append(np.nanmax(residual_m, initial=0.0))
        progress.append(np.nanmax(command_progress(physical.q_setpoint, physical.q_measured), initial=0.0))
    return DetectorSettings(
        derive_threshold(np.array(tips), margin),
        derive_threshold(np.array(joints), margin),
        derive_threshold(np.array(residuals), margin),
        derive_threshold(np.array(progress), margin),
    )


def judge_run(
    db: ResultsDB,
    kinematics: Kinematics,
    scenario: Scenario | None,
    settings: DetectorSettings,
    clean: dict[str, set[str]],
    warn: Callable[[str], None] | None = None,
) -> tuple[list[CaseDetection], list[tuple[str, str, WindowVerdict]]]:
    """Every case of the run ``db`` of ``scenario`` (None: fault-free): case rows and window rows.

    ``clean``: test id -> properties of the physical robot that hold in the fault-free run. ``warn`` gets, per
    case, why the scenario may not have done what it says there (``case_warnings``: a trigger that never fired,
    e.g. a stage the case never reached; a window longer than the case).

    Args:
        db: The results of the campaign run of ``scenario``.
        kinematics: The robot's kinematics, to rebuild compact stored records.
        scenario: The scenario the run injected; None for the fault-free run (no windows).
        settings: The detector's thresholds.
        clean: Test id -> properties of the physical robot that hold in the fault-free run.
        warn: Called with one line per warning; None: no warnings.

    Returns:
        The case rows, and the window rows as ``(scenario name, test id, verdict)``.
    """
    name = scenario.name if scenario is not None else FAULT_FREE
    violated: dict[str, set[str]] = {}
    for v in db.verdicts():
        if v.robot == "physical" and v.status == "violated":
            violated.setdefault(v.test_id, set()).add(v.property)
    cases, windows = [], []
    stored = db.events()
    happened: dict[str, list[tuple[float, str]]] = {}
    for event in stored or ():
        if scenario is not None and event.robot == "physical" and event.name == scenario.name:
            happened.setdefault(event.test_id, []).append((event.t_s, event.kind))
    for outcome, physical, virtual in record_pairs(db, kinematics):
        detection = detect(physical, virtual, settings)
        spans: list[tuple[float, float]] = []
        if scenario is not None and stored is not None:
            spans = windows_of_events(happened.get(physical.test_id, []), float(physical.t_s[-1]))
        elif scenario is not None:
            spans = schedule(scenario, physical.t_s[1:], _case_seed(physical), physical.stage[1:])
        if scenario is not None and warn is not None and len(physical.t_s) > 1:
            t = physical.t_s
            for text in case_warnings(scenario, float(t[-1] - t[0]), float(t[1] - t[0]), set(physical.stage[1:])):
                warn(f"{physical.test_id}: {text}")
        verdicts, false_alarms, second_false = judge_windows(detection, spans, settings.threshold_m)
        windows += [(name, physical.test_id, w) for w in verdicts]
        by_fault = sorted(violated.get(physical.test_id, set()) & clean.get(physical.test_id, set()))
        false = (false_alarms, second_false)
        cases.append(_case_row(name, physical.test_id, outcome, detection, verdicts, false, by_fault))
    return cases, windows


def _case_row(
    name: str,
    test_id: str,
    outcome: str,
    detection: Detection,
    verdicts: list[WindowVerdict],
    false: tuple[int, int],
    by: list[str],
) -> CaseDetection:
    t = detection.t_s
    return CaseDetection(
        name,
        test_id,
        outcome,
        float(t[-1] - t[0]) if len(t) else 0.0,
        len(verdicts),
        sum(w.detected for w in verdicts),
        *false,
        float(detection.deviation_m.max(initial=0.0)),
        float(detection.joint_deviation.max(initial=0.0)),
        ",".join(by),
    )


def holding_properties(db: ResultsDB) -> dict[str, set[str]]:
    """Test id -> properties of the physical robot that hold in the run ``db``.

    Args:
        db: A campaign run's results (its verdicts are read).
    """
    holds: dict[str, set[str]] = {}
    for v in db.verdicts():
        if v.robot == "physical" and v.status == "holds":
            holds.setdefault(v.test_id, set()).add(v.property)
    return holds


_SCHEMA = """
CREATE TABLE IF NOT EXISTS scenarios (name TEXT PRIMARY KEY, outcome TEXT, unsafe_control_action TEXT,
    causal_factor TEXT, strike TEXT, variables TEXT, fault TEXT, trigger TEXT, duration_s REAL);
CREATE TABLE IF NOT EXISTS thresholds (key TEXT PRIMARY KEY, value REAL, source TEXT);
CREATE TABLE IF NOT EXISTS windows (scenario TEXT, test_id TEXT, number INTEGER, start_s REAL, end_s REAL,
    detected INTEGER, latency_s REAL, crossing_s REAL, max_deviation_m REAL, second_detected INTEGER,
    second_latency_s REAL, PRIMARY KEY (scenario, test_id, number));
CREATE TABLE IF NOT EXISTS detection (scenario TEXT, test_id TEXT, outcome TEXT, duration_s REAL, windows INTEGER,
    detected INTEGER, false_alarms INTEGER, second_false_alarms INTEGER, max_deviation_m REAL,
    max_joint_deviation REAL, violated_by_fault TEXT,
    PRIMARY KEY (scenario, test_id));
"""


def write_tables(
    path: Path,
    scenarios: Sequence[Scenario],
    settings: DetectorSettings,
    source: str,
    cases: Sequence[CaseDetection],
    windows: Sequence[tuple[str, str, WindowVerdict]],
    period_s: float,
) -> None:
    """(Re)write the detection tables of ``path`` (a hazard run's analysis is recomputed from its records).

    ``period_s``: the control cycle [s] (the setpoint period), kept with the thresholds.

    Args:
        path: The hazard tables file (``RUN/hazards.sqlite``), replaced whole.
        scenarios: The scenarios run, for the ``scenarios`` table.
        settings: The detector's thresholds, for the ``thresholds`` table.
        source: Where the thresholds came from (set, derived from which run and margin), kept with each.
        cases: One row per case and scenario, for the ``detection`` table.
        windows: ``(scenario name, test id, verdict)`` per injected window, for the ``windows`` table.
        period_s: The control cycle [s].
    """
    fresh = path.with_name(f".{path.name}.partial")  # written whole, then renamed: a damaged old file is replaced
    with guarded(path, "writing the detection tables"):
        fresh.unlink(missing_ok=True)
        try:
            with closing(connect(fresh, create=True)) as db, db:
                _fill(db, scenarios, settings, source, cases, windows, period_s)
            os.replace(fresh, path)
        except BaseException:
            fresh.unlink(missing_ok=True)
            raise


def _fill(
    db: sqlite3.Connection,
    scenarios: Sequence[Scenario],
    settings: DetectorSettings,
    source: str,
    cases: Sequence[CaseDetection],
    windows: Sequence[tuple[str, str, WindowVerdict]],
    period_s: float,
) -> None:
    db.executescript(_SCHEMA)
    db.executemany("INSERT INTO scenarios VALUES (?,?,?,?,?,?,?,?,?)", [_scenario_row(s) for s in scenarios])
    db.executemany(
        "INSERT INTO thresholds VALUES (?,?,?)",
        [(f.name, _finite(getattr(settings, f.name)), source) for f in fields(settings)]
        + [("period_s", period_s, "planning.sampling_rate_hz")],
    )
    db.executemany(
        f"INSERT INTO windows VALUES ({','.join('?' * 11)})",
        [(name, test_id, *(_finite(v) for v in w)) for name, test_id, w in windows],
    )
    db.executemany(
        f"INSERT INTO detection VALUES ({','.join('?' * 11)})", [tuple(map(_finite, astuple(c))) for c in cases]
    )


def _scenario_row(s: Scenario) -> tuple[object, ...]:
    fault = f"{s.fault.model.value} value={s.fault.value:g}" + (" relative" if s.fault.relative else "")
    trigger = f"{s.trigger.kind.value} at={s.trigger.at_s:g} period={s.trigger.period_s:g} sample={s.trigger.sample}"
    return (
        s.name,
        s.outcome,
        s.unsafe_control_action,
        s.causal_factor,
        s.strike.value,
        ",".join(s.variables),
        fault,
        trigger,
        _finite(s.duration_s),
    )


def _finite(value: object) -> object:
    """SQLite stores NaN as NULL and inf as a text-free REAL; keep inf, NULL for NaN, ints for bools."""
    if isinstance(value, (bool, np.bool_)):
        return int(value)
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


@dataclass(frozen=True)
class ScenarioSummary:
    """The detection table's row of one scenario.

    Attributes:
        scenario: Name (``fault_free`` for the fault-free run).
        cases: Cases judged.
        windows: Injected windows.
        detected: Windows the first detector caught.
        latency_median_s: Median latency from onset over the detected windows [s]; NaN if none.
        latency_max_s: Largest latency [s]; NaN if none.
        within_cycle: Detected windows whose alarm came at most one control cycle after the threshold crossing.
        second_detected: Windows the second detector (tracker vs encoders) caught.
        false_alarms: Alarm episodes outside every window.
        second_false_alarms: The same for the second detector.
        case_hours: Summed length of the cases [h].
        violated_cases: Cases with a property of the physical robot violated with the fault and not without.
    """

    scenario: str
    cases: int
    windows: int
    detected: int
    latency_median_s: float
    latency_max_s: float
    within_cycle: int
    second_detected: int
    false_alarms: int
    second_false_alarms: int
    case_hours: float
    violated_cases: int

    @property
    def rate(self) -> float:
        """Detected / injected windows (NaN without windows)."""
        return self.detected / self.windows if self.windows else math.nan

    @property
    def false_alarms_per_case_hour(self) -> float:
        """False-alarm episodes per hour of case [1/h]."""
        return self.false_alarms / self.case_hours if self.case_hours else math.nan


def summarize(path: Path) -> list[ScenarioSummary]:
    """One row per scenario of the hazard tables in ``path``, in the order of its ``scenarios`` (fault-free first).

    A scenario without a judged case has no row.

    Args:
        path: The hazard tables file (``RUN/hazards.sqlite``).

    Raises:
        StoreDamagedError: The file is damaged or has no ``period_s`` threshold.
    """
    remedy = _remedy(path)
    with closing(connect(path, read_only=True, remedy=remedy)) as db, guarded(path, "reading", remedy):
        problems = integrity_problems(db)
        if problems:
            raise StoreDamagedError(path, f"the database is damaged (quick_check: {problems[0]})", remedy)
        period = db.execute("SELECT value FROM thresholds WHERE key = 'period_s'").fetchone()
        if period is None or not isinstance(period[0], (int, float)):
            raise StoreDamagedError(path, "no number period_s in table thresholds", remedy)
        for table in ("windows", "detection"):
            found = _not_a_number(db, table)
            if found is not None:  # SQLite would sum a text as 0: a table that reads well and says wrong
                column, value = found
                raise StoreDamagedError(path, f"table {table}: {column} holds {value!r}, expected a number", remedy)
        rows = _scenario_summaries(db, float(period[0]))
    return rows


def _not_a_number(db: sqlite3.Connection, table: str) -> tuple[str, object] | None:
    """The first (column, value) of ``table`` whose column is declared INTEGER or REAL and holds something else."""
    columns = db.execute(f"PRAGMA table_info({table})").fetchall()
    numeric = [row[1] for row in columns if str(row[2]).upper() in ("INTEGER", "REAL")]
    for column in numeric:
        bad = db.execute(
            f"SELECT {column} FROM {table} WHERE {column} IS NOT NULL AND typeof({column}) NOT IN ('integer', 'real') "
            "LIMIT 1"
        ).fetchone()
        if bad is not None:
            return column, bad[0]
    return None


def _scenario_summaries(db: sqlite3.Connection, period_s: float) -> list[ScenarioSummary]:
    names = [FAULT_FREE] + [r[0] for r in db.execute("SELECT name FROM scenarios ORDER BY rowid")]
    rows = []
    for name in names:
        cases = db.execute(
            "SELECT COUNT(*), COALESCE(SUM(duration_s), 0), COALESCE(SUM(false_alarms), 0), "
            "COALESCE(SUM(violated_by_fault != ''), 0), COALESCE(SUM(second_false_alarms), 0) "
            "FROM detection WHERE scenario = ?",
            (name,),
        ).fetchone()
        w = db.execute(
            "SELECT detected, latency_s, crossing_s - start_s, second_detected FROM windows WHERE scenario = ?", (name,)
        ).fetchall()
        if cases[0] == 0:
            continue
        lat = np.array([r[1] for r in w if r[0]], dtype=np.float64)
        cycle = sum(1 for r in w if r[0] and r[2] is not None and r[1] <= r[2] + period_s + 1e-9)
        rows.append(
            ScenarioSummary(
                name,
                int(cases[0]),
                len(w),
                sum(r[0] for r in w),
                float(np.median(lat)) if len(lat) else math.nan,
                float(lat.max()) if len(lat) else math.nan,
                cycle,
                sum(r[3] for r in w),
                int(cases[2]),
                int(cases[4]),
                float(cases[1]) / 3600.0,
                int(cases[3]),
            )
        )
    return rows
