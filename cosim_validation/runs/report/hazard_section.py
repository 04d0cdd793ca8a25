"""The report's hazard section ([Li et al. 2016]): the detection table, [Li et al. 2016]'s Fig. 4 and 5 on our data.

Shown in the report of a run of a hazard campaign (``cosim report RUN/runs/<scenario>``, the tables being in
``RUN/hazards.sqlite``) or of a directory holding ``hazards.sqlite`` beside its ``results.sqlite``.
"""

from __future__ import annotations

import math
from contextlib import closing
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

from cosim_validation.hazards.feedback_force import FeedbackGains, feedback_force
from cosim_validation.robots.model import Kinematics
from cosim_validation.runs.campaign.hazard_tables import HAZARDS_FILE, ScenarioSummary, summarize
from cosim_validation.runs.campaign.results_db import ResultsDB
from cosim_validation.runs.campaign.stores import connect, guarded
from cosim_validation.runs.report.figures import GREEN, RED, png
from cosim_validation.runs.report.html_page import Section, figure, paragraph, table
from cosim_validation.runs.report.run_data import RunData

HEADERS = (
    "scenario",
    "cases",
    "windows",
    "detected",
    "rate [%]",
    "latency median [s]",
    "latency max [s]",
    "within 1 cycle",
    "2nd detector",
    "false alarms",
    "per case-hour",
    "2nd false alarms",
    "violated by fault",
)
JUMP = "sudden_jump"


def hazard_tables(run_dir: Path) -> Path | None:
    """``hazards.sqlite`` of the run: beside its results, or of the hazard campaign it is a part of.

    Args:
        run_dir: The run directory; a hazard campaign's run is ``RUN/runs/<name>``, its tables ``RUN/hazards.sqlite``.

    Returns:
        The tables' file, or None if there is none.
    """
    for candidate in (run_dir / HAZARDS_FILE, run_dir.parent.parent / HAZARDS_FILE):
        if candidate.is_file() and (candidate.parent == run_dir or run_dir.parent.name == "runs"):
            return candidate
    return None


def hazards(run: RunData) -> Section:
    """The detection table per scenario, and joint 1 of robot and model around the sudden jumps (Fig. 4).

    Args:
        run: The run; a section saying why is returned when it has no hazard tables (:func:`hazard_tables`).

    Raises:
        StoreError: The hazard tables cannot be read or are damaged.
    """
    s = Section("hazards", "Hazard detection: scenarios, rate, latency, false alarms ([Li et al. 2016])")
    path = hazard_tables(run.run_dir)
    if path is None:
        return s.missing("not a run of a hazard campaign (cosim hazards run)")
    rows = summarize(path)
    s.parts.append(
        paragraph(
            f"{path}: the physical robot through each scenario's faults against the virtual twin fed the clean "
            "commands. A window is detected when the tip (or a joint) deviation exceeds its threshold between its "
            "onset and 1 s after its end; latency from the onset; false alarms are alarm episodes outside every "
            "window."
        )
    )
    s.parts.append(table(HEADERS, [_row(r) for r in rows], "hazard-detection"))
    with closing(connect(path, read_only=True)) as db, guarded(path, "reading the thresholds"):
        thresholds = dict(db.execute("SELECT key, value FROM thresholds").fetchall())
    s.parts.append(
        paragraph(
            f"Thresholds: tip {1e3 * thresholds['threshold_m']:.3g} mm, joint {thresholds['joint_threshold']:.3g} rad, "
            f"tracker {1e3 * thresholds['tracker_threshold_m']:.3g} mm."
        )
    )
    s.data = {"tables": str(path), "scenarios": {r.scenario: _data(r) for r in rows}, "thresholds": thresholds}
    jump_db = path.parent / "runs" / JUMP / "results.sqlite"
    if jump_db.is_file():
        s.parts += _figures_4_5(jump_db, path, run.kinematics, float(thresholds["threshold_m"]))
    return s


def _row(r: ScenarioSummary) -> list[object]:
    rate = None if math.isnan(r.rate) else 100 * r.rate
    latency = [r.latency_median_s, r.latency_max_s]
    alarms = [r.within_cycle, r.second_detected, r.false_alarms, r.false_alarms_per_case_hour]
    return [
        r.scenario,
        r.cases,
        r.windows,
        r.detected,
        rate,
        *latency,
        *alarms,
        r.second_false_alarms,
        r.violated_cases,
    ]


def _data(r: ScenarioSummary) -> dict[str, object]:
    keys = (
        "cases",
        "windows",
        "detected",
        "latency_median_s",
        "latency_max_s",
        "within_cycle",
        "false_alarms",
        "second_false_alarms",
    )
    return {k: getattr(r, k) for k in keys}


def _figures_4_5(jump_db: Path, tables: Path, kinematics: Kinematics | None, threshold_m: float) -> list[str]:
    """Joint 1 of the robot and of the model in the first sudden-jump case, the windows shaded; the force."""
    with ResultsDB.open(jump_db) as db:
        test_id = sorted(db.finished_ids())[0]
        physical, virtual = (db.trajectory(test_id, robot, kinematics) for robot in ("physical", "virtual"))
    with closing(connect(tables, read_only=True)) as db, guarded(tables, "reading the windows"):
        spans = db.execute("SELECT start_s, end_s FROM windows WHERE scenario = ? AND test_id = ?", (JUMP, test_id))
        windows = spans.fetchall()
    fig = Figure(figsize=(10, 3.5))
    ax = fig.add_subplot(1, 1, 1)
    for start_s, end_s in windows:
        ax.axvspan(start_s, end_s, color=RED, alpha=0.15)
    ax.plot(virtual.t_s, np.degrees(virtual.q_measured[:, 0]), color=GREEN, label="model (virtual, clean commands)")
    ax.plot(physical.t_s, np.degrees(physical.q_measured[:, 0]), color=RED, label="robot (physical, injected)")
    ax.set_xlabel("case time [s]")
    ax.set_ylabel(f"{physical.joint_names[0]} [deg]")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    caption = (
        f"Li et al. 2016 Fig. 4 on our data: {physical.joint_names[0]} of robot and model in case {test_id} "
        "with the sudden-jump windows shaded."
    )
    force = _figure_5(physical.t_s, physical.tip_pos_m, virtual.tip_pos_m, threshold_m, windows)
    return [figure(png(fig), caption, "hazards-figure-4"), force]


def _figure_5(
    t_s: np.ndarray, robot_m: np.ndarray, model_m: np.ndarray, threshold_m: float, windows: list[tuple[float, float]]
) -> str:
    """The magnitude of [Li et al. 2016]'s feedback force over the case, the windows shaded."""
    gains = FeedbackGains()
    force_n = feedback_force(t_s, robot_m, model_m, threshold_m, gains)
    fig = Figure(figsize=(10, 3))
    ax = fig.add_subplot(1, 1, 1)
    for start_s, end_s in windows:
        ax.axvspan(start_s, end_s, color=RED, alpha=0.15)
    ax.plot(t_s, np.linalg.norm(force_n, axis=1), color=RED)
    ax.set_xlabel("case time [s]")
    ax.set_ylabel("feedback force [N]")
    ax.grid(alpha=0.3)
    caption = (
        f"Li et al. 2016 Fig. 5 on our data: magnitude of the spring-damper feedback force "
        f"(Kp {gains.kp_n_per_m:g} N/m, Kd {gains.kd_ns_per_m:g} N s/m, saturated at {gains.max_force_n:g} N) "
        "in the same case."
    )
    return figure(png(fig), caption, "hazards-figure-5")
