"""Properties over the supervisor's mode: the ``supervisor`` signal, mode names and ``entry(x, mode)``, offline and
online, on the shipped supervisor property set (config/supervisor/properties.yaml)."""

from __future__ import annotations

import numpy as np
import pytest

from cosim_validation.common.record import SupervisorMode, TrajectoryRecord
from cosim_validation.monitor.properties import MonitorContext, PropertySet, PropertySpec, Status, record_samples
from cosim_validation.monitor.properties.offline.evaluation import evaluate_run
from cosim_validation.monitor.properties.online.monitor import OnlineMonitor
from test.monitor.properties.traces import JOINTS, TARGET, edited, insertion_case

STOP = slice(22, 27)  # approach samples (1 cm of motion each) the supervisor holds stopped: t = 2.2 to 2.6 s
CONTEXT = MonitorContext(JOINTS, 0.1, {}, target_m=TARGET)


@pytest.fixture(scope="module")
def shipped() -> PropertySet:
    return PropertySet.load("config/supervisor/properties.yaml")


def stopped(record: TrajectoryRecord, window: slice, hold: bool) -> TrajectoryRecord:
    """``record`` with the supervisor STOPPED over ``window`` (AUTONOMOUS elsewhere); ``hold``: the tip stays at the
    window's first sample (else the motion goes on: an autonomous command after the exception)."""
    mode = np.full(record.n_samples, int(SupervisorMode.AUTONOMOUS), dtype=np.uint8)
    mode[window] = SupervisorMode.STOPPED
    tip = record.tip_pos_m.copy()
    if hold:
        tip[window] = tip[window.start]
    return edited(record, supervisor=mode, tip_pos_m=tip)


def both(hold: bool, window: slice = STOP) -> tuple[TrajectoryRecord, TrajectoryRecord]:
    record, expected = insertion_case()
    return stopped(record, window, hold), stopped(expected, window, hold)


def online(props: PropertySet, record: TrajectoryRecord, expected: TrajectoryRecord) -> list[object]:
    monitor = OnlineMonitor(props, CONTEXT, record.robot)
    for plan, robot in zip(record_samples(expected), record_samples(record), strict=True):
        monitor.push(plan)
        monitor.push(robot)
    return list(monitor.finish())


def test_a_held_stop_holds_and_motion_while_stopped_is_a_violation(shipped: PropertySet) -> None:
    record, expected = both(hold=True)
    (held,) = evaluate_run(shipped, record, CONTEXT, expected).verdicts
    assert held.status is Status.HOLDS
    assert held.margin == pytest.approx(0.002)  # the tip stays exactly where it stopped
    record, expected = both(hold=False)
    for robot in (expected, record):  # the plan moved on while stopped, and so did the robot
        (moved,) = evaluate_run(shipped, robot, CONTEXT, expected if robot is record else None).verdicts
        assert moved.status is Status.VIOLATED
        assert moved.first_violation_time_s == pytest.approx(2.3)  # one sample after the stop: 1 cm away
        assert moved.margin == pytest.approx(0.002 - 0.04, abs=1e-3)  # 4 cm after 4 samples


def test_online_equals_offline(shipped: PropertySet) -> None:
    for hold in (True, False):
        record, expected = both(hold)
        offline = evaluate_run(shipped, record, CONTEXT, expected).verdicts
        for off, on in zip(offline, online(shipped, record, expected), strict=True):
            assert off.same_outcome(on), (hold, off, on)  # type: ignore[attr-defined]


def test_without_a_supervisor_the_property_is_vacuous(shipped: PropertySet) -> None:
    record, expected = insertion_case()
    (verdict,) = evaluate_run(shipped, record, CONTEXT, expected).verdicts
    assert verdict.status is Status.UNKNOWN
    assert verdict.reason.startswith("vacuous")


def test_entry_of_a_mode_is_where_the_current_stay_began() -> None:
    """Two stops (samples 22-26 and 40-44): each is judged against its own start, not the first stop's; online,
    samples one at a time carry the stay across blocks."""
    record, expected = insertion_case()
    mode = np.full(record.n_samples, int(SupervisorMode.AUTONOMOUS), dtype=np.uint8)
    mode[22:27] = mode[40:45] = SupervisorMode.STOPPED
    tip = record.tip_pos_m.copy()
    tip[22:27], tip[40:45] = tip[22], tip[40]
    record = edited(record, supervisor=mode, tip_pos_m=tip)
    spec = PropertySpec("p", "always (supervisor == stopped -> dist(tip, entry(tip, stopped)) < 0.001)")
    props = PropertySet((spec,))
    (offline,) = evaluate_run(props, record, CONTEXT, expected).verdicts
    assert offline.status is Status.HOLDS
    (on,) = online(props, record, expected)
    assert offline.same_outcome(on)  # type: ignore[attr-defined]
    teleop = PropertySpec("q", "always (supervisor == teleoperation -> t < 0)")  # no sample in teleoperation
    (vacuous,) = evaluate_run(PropertySet((teleop,)), record, CONTEXT, expected).verdicts
    assert vacuous.status is Status.UNKNOWN
