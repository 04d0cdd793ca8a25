"""The hazard detector in the lockstep loop (batch): the alarms and the feedback force it produces while the case
runs are the offline detector's and force over the case's records; its thresholds as an option string; stop on
alarm (mitigation): a sudden jump by the heart stops the task at the next step and the needle stays out."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import numpy as np
import pytest

from cosim_validation.assembly import AssemblySpec, BatchCase, CaseAssembly
from cosim_validation.assembly.lockstep import CaseRun
from cosim_validation.common.exceptions import InputError
from cosim_validation.common.record import RobotRole
from cosim_validation.hazards.detector import DetectorSettings, detect
from cosim_validation.hazards.feedback_force import FeedbackGains, feedback_force
from cosim_validation.hazards.hazard_watch import (
    ALARM_KIND,
    HazardSample,
    HazardWatch,
    alarm_text,
    check_detector,
    format_detector,
    parse_detector,
)
from cosim_validation.monitor.properties.verdict import Status, Verdict
from cosim_validation.testgen import TestCase

DETECTOR = "tip_mm=7.68,joint=0.00939,tracker_mm=2.67"  # README: from 200 fault-free calibration cases
TARGET_M = np.array([0.45, -0.05, 0.05])  # in the left lung, off the heart's path


def _case(assembly: CaseAssembly, test_id: str = "watch-1") -> TestCase:
    source = assembly.setup.planning.default_source_m
    return TestCase(test_id, "s", "base_link", source, TARGET_M, np.full(3, -1), 0.0, "manual", 7, 0.0)


def _watched_run(
    filters: tuple[tuple[str, str], ...], detector: str, test_id: str
) -> tuple[HazardWatch, list[HazardSample], BatchCase]:
    """Run one case in batch with the hazard watch in the loop: (watch, its samples, the batch outcome)."""
    assembly = CaseAssembly(
        AssemblySpec("config/needle_insertion.yaml", engines=("mujoco", "emulated"), filters=filters, detector=detector)
    )
    watch = assembly.hazard_watch
    assert watch is not None
    samples: list[HazardSample] = []
    watch.sink = samples.append
    try:
        batch = assembly.run_batch(_case(assembly, test_id))
    finally:
        assembly.close()
    return watch, samples, batch


def test_the_loop_raises_the_offline_alarms_and_force_sample_for_sample() -> None:
    filters = (("physical", "hazards:sudden_jump"), ("physical", "hazards:tracker_dropout"))
    watch, samples, batch = _watched_run(filters, DETECTOR, "watch-1")
    records = {r.robot: r for r in batch.records}
    physical, model = records[RobotRole.PHYSICAL], records[RobotRole.VIRTUAL]
    detection = detect(physical, model, watch.settings)
    assert len(samples) == len(detection.t_s)
    np.testing.assert_allclose([s.alarm.t_s for s in samples], detection.t_s, atol=1e-12)
    np.testing.assert_array_equal([s.alarmed for s in samples], detection.alarm)
    np.testing.assert_array_equal([s.alarm.tracker for s in samples], detection.tracker_alarm)
    np.testing.assert_allclose([s.alarm.deviation_m for s in samples], detection.deviation_m, atol=1e-12)
    assert detection.alarm.sum() >= 3  # every sample of a jump window
    assert detection.tracker_alarm.any()
    assert watch.first_alarm_s == pytest.approx(8.0)  # seed 003: 8 s after the start of motion
    force = feedback_force(
        physical.t_s, physical.tip_pos_m, model.tip_pos_m, watch.settings.threshold_m, FeedbackGains()
    )
    np.testing.assert_allclose([s.force_n for s in samples], force, atol=1e-12)
    assert np.linalg.norm(force, axis=1).max() == pytest.approx(3.0)  # the jump saturates the device
    assert watch.active_alarms(8.1) == {}  # not stopping on alarms: never an exception of the supervisor


PROGRESS = "progress=0.827"  # docs/HAZARDS.md: 0.66 (largest over 100 fault-free cases) x 1.25


def test_the_command_progress_runs_in_the_loop_alone_and_its_alarms_are_stored_events() -> None:
    # the second detector alone: no tip, joint or tracker check
    watch, samples, batch = _watched_run((("physical", "hazards:commands_out_of_order"),), PROGRESS, "progress-1")
    records = {r.robot: r for r in batch.records}
    detection = detect(records[RobotRole.PHYSICAL], records[RobotRole.VIRTUAL], watch.settings)
    np.testing.assert_array_equal([s.alarm.progress for s in samples], detection.progress_alarm)
    np.testing.assert_array_equal([s.alarm.progress_value for s in samples], detection.progress)  # bit for bit
    assert not any(s.alarm.tip or s.alarm.joint or s.alarm.tracker for s in samples)  # those detectors are off
    alarmed = [s for s in samples if s.alarm.progress]
    assert alarmed
    assert all(4.0 <= s.alarm.t_s <= 9.0 for s in alarmed)  # in the 4 s window from 4 s (+ 1 s)
    assert watch.first_alarm_s == pytest.approx(alarmed[0].alarm.t_s)
    stored = [(role, e) for role, e in batch.events if e.kind == ALARM_KIND]  # the campaign's events table rows
    assert [(role, e.t_s, e.name) for role, e in stored] == [
        (RobotRole.PHYSICAL, s.alarm.t_s, "progress") for s in alarmed
    ]
    assert all(f"{e.name}: {e.detail}" == alarm_text(s.alarm) for (_, e), s in zip(stored, alarmed, strict=True))
    times = [e.t_s for _, e in batch.events]
    assert times == sorted(times)  # among the filter's window events, in time order
    assert [e.kind for _, e in batch.events if e.kind != ALARM_KIND] == ["fault_start", "fault_end"]


def test_thresholds_from_an_option() -> None:
    assert parse_detector(DETECTOR) == DetectorSettings(7.68e-3, 0.00939, 2.67e-3)
    assert parse_detector("tip_mm=3") == DetectorSettings(3e-3, math.inf, math.inf)
    assert parse_detector(PROGRESS) == DetectorSettings(math.inf, math.inf, math.inf, 0.827)
    both = parse_detector(f"{DETECTOR},{PROGRESS}")
    assert both == DetectorSettings(7.68e-3, 0.00939, 2.67e-3, 0.827)
    assert dataclasses.astuple(parse_detector(format_detector(both))) == pytest.approx(dataclasses.astuple(both))
    assert parse_detector(format_detector(parse_detector(PROGRESS))) == parse_detector(PROGRESS)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "--detector: no detector chosen in ''"),
        ("progress=0", "--detector: progress must be a positive number, got '0'"),
        ("tip_mm=3,elbow=1", "--detector: unknown key 'elbow'"),
        ("tip_mm=-3", "--detector: tip_mm must be a positive number, got '-3'"),
        ("tip_mm=nan", "--detector: tip_mm must be a positive number"),
        ("tip_mm", "--detector: unknown key 'tip_mm'"),
    ],
)
def test_bad_thresholds_name_the_option_and_key(text: str, message: str) -> None:
    with pytest.raises(InputError, match=message):
        parse_detector(text)


def test_stopping_on_alarms_needs_a_detector_and_a_supervisor() -> None:
    for detector, supervisor in ((DETECTOR, None), (None, "config/supervisor/supervisor.yaml")):
        with pytest.raises(InputError, match="stop on alarm needs a hazard detector"):
            check_detector(detector, True, supervisor)  # what CaseAssembly, campaign and session call first
    assert check_detector(None, False, None) is None


# case 16 of the 30 mm grid by the heart (seed 3, as test/live/session/test_live_equals_batch.py builds it): the first
# sudden jump strikes as the needle leaves the target, the heart close by
HEART_SIDE_SOURCE_M = np.array([0.4499597951479864, -0.016504421818213526, 0.31054049501500103])
HEART_SIDE_TARGET_M = np.array([0.47760399612272114, -0.023092269193739298, 0.12456742131512095])
FORBIDDEN = "needle_outside_forbidden_regions"


def _blind_supervisor(tmp_path: Path) -> str:
    """The shipped supervisor with its clearance source blind (1 um): only the detector can stop the jump."""
    folder = Path("config/supervisor").resolve()
    text = (folder / "supervisor.yaml").read_text()
    for name in ("needle_insertion.yaml", "needle_force.yaml"):
        text = text.replace(f": {name}", f": {folder / name}")
    text = text.replace("clearance_m: 0.005", "clearance_m: 0.000001")
    path = tmp_path / "supervisor.yaml"
    path.write_text(text)
    return str(path)


def _supervised_jump(supervisor: str, stop_on_alarm: bool) -> tuple[CaseRun, dict[str, Verdict], float]:
    spec = AssemblySpec(
        "config/needle_insertion.yaml",
        engines=("mujoco", "emulated"),
        filters=(("physical", "hazards:sudden_jump"),),
        detector=DETECTOR,
        supervisor=supervisor,
        stop_on_alarm=stop_on_alarm,
    )
    assembly = CaseAssembly(spec)
    case = TestCase(
        "heart-16", "s", "base_link", HEART_SIDE_SOURCE_M, HEART_SIDE_TARGET_M, np.full(3, -1), 0.0, "manual", 3, 0.0
    )
    try:
        batch = assembly.run_batch(case)
        reports = assembly.check(batch, case.target_m)
    finally:
        assembly.close()
    assert assembly.hazard_watch is not None
    physical = next(r for r in reports if r.robot == RobotRole.PHYSICAL.label)
    return batch.run, {v.property: v for v in physical.verdicts}, assembly.hazard_watch.first_alarm_s


def test_stop_on_alarm_holds_the_robot_before_the_jump_reaches_the_heart(tmp_path: Path) -> None:
    supervisor = _blind_supervisor(tmp_path)
    run, verdicts, alarm_s = _supervised_jump(supervisor, stop_on_alarm=False)
    assert alarm_s == pytest.approx(8.0)
    assert verdicts[FORBIDDEN].status is Status.VIOLATED  # unmitigated: the jumped needle enters the heart
    assert verdicts[FORBIDDEN].first_violation_time_s > alarm_s  # after the alarm: there was time to stop

    run, verdicts, alarm_s = _supervised_jump(supervisor, stop_on_alarm=True)
    assert alarm_s == pytest.approx(8.0)
    assert verdicts[FORBIDDEN].status is Status.HOLDS
    stop = next(i for i, d in enumerate(run.supervision) if d.status.state.endswith("TaskStopped"))
    decision = run.supervision[stop]
    assert decision.status.t_s == pytest.approx(alarm_s + 0.1)  # the step after the alarmed sample
    assert "e_TaskAborted" in decision.status.events  # events.alarm of the shipped configuration
    assert all(d.plan_index < 0 for d in run.supervision[stop:])  # no motion command from then on
    held = run.q_sent[stop + 1 :]  # q_sent[0] is the first setpoint, before the supervisor's first step
    np.testing.assert_array_equal(held, np.broadcast_to(held[0], held.shape))  # the robot is held
    assert run.outcome == "aborted"
