"""Every shipped hazard scenario injected live (hazard_injector nodes over DDS) and in batch: identical traces.

All the scenarios of config/hazards.yaml at once on one case: the command faults (and the stage-triggered encoder
offset, whose injector learns each setpoint's stage from /cosim/expected) on the virtual robot, seed 003's three
and the feedback faults on the physical one (each filter corrupts its own windows; stacked, they must still
give the same corrupted streams in both modes). The records of both robots, sample for sample, the verdicts and
the KPIs are the same in a session and in a campaign, and the bag holds every window's start and end on
/cosim/hazards/events.

The same session runs the hazard detector in the controller's loop (``--detector``, both modes): the alarms it
published live on /cosim/hazards/alarms are, sample for sample, the offline detector's over the campaign's records
(so every window's latency is the same), and the feedback force on /cosim/feedback_wrench is the force computed
over those records.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cosim_validation.common.config import load_config
from cosim_validation.common.record import RobotRole, Stage
from cosim_validation.hazards.detector import detect
from cosim_validation.hazards.fault_window import schedule, windows_of_events
from cosim_validation.hazards.feedback_force import FeedbackGains, feedback_force
from cosim_validation.hazards.hazard_library import load_library
from cosim_validation.hazards.hazard_watch import ALARM_KIND, parse_detector
from cosim_validation.hazards.window_verdict import judge_windows
from cosim_validation.robots.model import RobotConfig
from cosim_validation.runs.campaign.results_db import EventRow, ResultsDB
from test.live.session.test_live_equals_batch import _both, _close, suite_file  # noqa: F401  (suite_file: fixture)

pytestmark = [pytest.mark.ros, pytest.mark.slow]

# README's thresholds from 200 fault-free cases; the command progress's from 100 (docs/HAZARDS.md)
DETECTOR = "tip_mm=7.68,joint=0.00939,tracker_mm=2.67,progress=0.827"
STAGED = "encoder_offset_during_injection"  # the stage-triggered scenario (on the virtual robot, like the others)
PHYSICAL = ("sudden_jump", "temporarily_unavailable", "permanently_unavailable", "encoder_zeroed", "tracker_dropout")


def _filters() -> list[str]:
    names = list(load_library())
    virtual = [n for n in names if n not in PHYSICAL]
    return [f"--filter=physical=hazards:{n}" for n in PHYSICAL] + [f"--filter=virtual=hazards:{n}" for n in virtual]


def _records(db_path: Path, kinematics: object) -> dict:  # type: ignore[type-arg]
    with ResultsDB.open(db_path) as db:
        return {
            (test_id, robot): db.trajectory(test_id, robot, kinematics)  # type: ignore[arg-type]
            for test_id, robots in db.trajectory_robots().items()
            for robot in robots
            if robot != "expected"
        }


def test_every_scenario_gives_the_same_traces_live_and_in_batch(
    tmp_path: Path,
    suite_file: Path,  # noqa: F811
    node_env: dict[str, str],
    repo_root: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    filters = _filters()
    assert len(filters) == len(load_library())
    live, batch = _both(tmp_path, suite_file, "1", "--no-validate", "--detector", DETECTOR, *filters)
    capsys.readouterr()
    (live_cases, live_verdicts, live_kpis), (batch_cases, batch_verdicts, batch_kpis) = live, batch
    assert len(live_cases) == 1
    for test_id, outcome in live_cases.items():
        assert outcome == batch_cases[test_id]
    for key, verdict in live_verdicts.items():
        assert verdict.status == batch_verdicts[key].status, key
        assert _close(verdict.margin, batch_verdicts[key].margin), key
    for key, kpi in live_kpis.items():
        assert _close(kpi.value, batch_kpis[key].value), key

    config = load_config(repo_root / "config" / "needle_insertion.yaml")
    kinematics = RobotConfig.from_config(config["robot"]).kinematics
    live_records = _records(tmp_path / "session" / "results.sqlite", kinematics)
    batch_records = _records(tmp_path / "campaign" / "results.sqlite", kinematics)
    assert {robot for _, robot in live_records} == {"virtual", "physical"}
    for key, record in live_records.items():
        other = batch_records[key]
        assert len(record.t_s) == len(other.t_s), key
        for field in ("q_setpoint", "q_measured", "actual_tip_pos_m"):
            a, b = getattr(record, field), getattr(other, field)
            np.testing.assert_allclose(a, b, atol=1e-9, err_msg=f"{key} {field}")
    physical = next(r for (_, robot), r in live_records.items() if robot == "physical")
    assert np.isnan(physical.actual_tip_pos_m).any()  # the tracker dropout is in the trace

    from cosim_validation.live.ros.bag import read_messages

    events = [m.message for m in read_messages(tmp_path / "session" / "session.mcap", ["/cosim/hazards/events"])]
    started = {e.message.split(":")[0] for e in events if e.code == "fault_start"}
    assert started == set(load_library())
    assert {e.code for e in events} == {"fault_start", "fault_end"}
    # the campaign stored its filters' events as they happened: the same as the bag's, one for one
    with ResultsDB.open(tmp_path / "campaign" / "results.sqlite") as db:
        rows = [e for e in db.events() or () if e.test_id in live_cases]
    stored = [e for e in rows if e.kind != ALARM_KIND]  # the loop's alarms: checked against the alarms topic below
    assert sorted(_event_text(e) for e in stored) == sorted(
        (RobotRole(e.robot).label, e.code, e.message) for e in events
    )

    (test_id,) = live_cases
    alarm_rows = [e for e in rows if e.kind == ALARM_KIND]
    _check_detector_topics(tmp_path / "session" / "session.mcap", batch_records, test_id, alarm_rows)
    _check_stage_window(stored, batch_records[test_id, "virtual"])


def _check_stage_window(stored: list[EventRow], record: object) -> None:
    """The stage-triggered scenario's window is the injection stage of the record (live = batch: checked above)."""
    scenario = load_library()[STAGED]
    happened = [(e.t_s, e.kind) for e in stored if e.name == STAGED]
    assert {e.robot for e in stored if e.name == STAGED} == {"virtual"}
    t, stage = record.t_s, record.stage  # type: ignore[attr-defined]
    (window,) = windows_of_events(happened, float(t[-1]))
    injection = np.flatnonzero(stage == int(Stage.INJECTION))
    assert window == pytest.approx((t[injection[0]], t[injection[-1] + 1]), abs=1e-9)  # opens and closes with it
    recomputed = schedule(scenario, t[1:], int(record.meta["seed"]), stage[1:])  # type: ignore[attr-defined]
    assert np.asarray(recomputed) == pytest.approx(np.array([window]), abs=1e-9)


def _check_detector_topics(bag: Path, batch_records: dict, test_id: str, rows: list[EventRow]) -> None:  # type: ignore[type-arg]
    """The live alarms and feedback wrench against the detector and the force over the batch records; the alarms
    the campaign stored in its events table (``rows``) against the live ones, message for message."""
    from cosim_validation.live.nodes.hazard_feedback import ALARMS_TOPIC, WRENCH_TOPIC
    from cosim_validation.live.ros.bag import read_messages

    physical, model = batch_records[test_id, "physical"], batch_records[test_id, "virtual"]
    settings = parse_detector(DETECTOR)
    detection = detect(physical, model, settings)
    messages = list(read_messages(bag, [ALARMS_TOPIC, WRENCH_TOPIC]))
    start_ns = min(_ns(m.message.header.stamp) for m in messages)  # the first sample's wrench
    alarms = [m.message for m in messages if m.topic == ALARMS_TOPIC]
    assert {a.test_id for a in alarms} == {test_id}
    live = {round((_ns(a.header.stamp) - start_ns) / 1e9, 6): a.message.split(":")[0].split(",") for a in alarms}
    names = ("tip", "joint", "tracker", "progress")
    flags = zip(
        detection.tip_alarm, detection.joint_alarm, detection.tracker_alarm, detection.progress_alarm, strict=True
    )
    offline = {
        round(float(t), 6): [k for k, on in zip(names, f, strict=True) if on]
        for t, f in zip(detection.t_s, flags, strict=True)
        if any(f)
    }
    assert offline  # the stacked faults do raise alarms
    assert any("progress" in kinds for kinds in offline.values())  # the second detector runs in the loop too
    assert live == offline
    assert [f"{r.name}: {r.detail}" for r in rows] == [a.message for a in alarms]  # stored = published
    jump = schedule(load_library()["sudden_jump"], physical.t_s[1:], int(physical.meta["seed"]))
    verdicts, _, _ = judge_windows(detection, jump, settings.threshold_m)
    assert verdicts
    assert all(v.detected and v.latency_s <= 0.1 + 1e-9 for v in verdicts)  # within one control cycle

    wrenches = [m.message for m in messages if m.topic == WRENCH_TOPIC]
    assert len(wrenches) == len(physical.t_s)
    live_force = np.array([[w.wrench.force.x, w.wrench.force.y, w.wrench.force.z] for w in wrenches])
    force = feedback_force(physical.t_s, physical.tip_pos_m, model.tip_pos_m, settings.threshold_m, FeedbackGains())
    np.testing.assert_allclose(live_force, force, atol=1e-4)  # stored records are quantized (1e-9 rad)
    assert np.linalg.norm(live_force, axis=1).max() > 0


def _event_text(event: EventRow) -> tuple[str, str, str]:
    """(robot, kind, message) of a stored event as the injector publishes it (nodes/robot_proxy.py)."""
    return event.robot, event.kind, f"{event.name}: {event.detail} (case time {event.t_s:.3f} s)"


def _ns(stamp: object) -> int:
    return int(stamp.sec) * 1_000_000_000 + int(stamp.nanosec)  # type: ignore[attr-defined]
