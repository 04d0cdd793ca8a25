"""Monitoring a case from its streams gives the verdicts and KPIs of the offline evaluation of its records."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from cosim_validation.assembly import MonitorWorld, check_records, load_monitor_world
from cosim_validation.common.record import RobotRole, Stage
from cosim_validation.live.session.case_monitor import CaseMonitor
from test.common.record.test_trajectory_record import assert_same
from test.live.session.test_stream_assembler import DT_NS, START_NS, make_record

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def world() -> MonitorWorld:
    return load_monitor_world(REPO / "config" / "needle_insertion.yaml", REPO / "config" / "properties.yaml")


def same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == b


@pytest.mark.parametrize("seed", [0, 1])
def test_streams_give_the_offline_verdicts_and_kpis(world: MonitorWorld, seed: int) -> None:
    kin = world.kinematics
    n = 40
    expected = make_record(kin, RobotRole.EXPECTED, n, seed, with_tip=False)
    virtual = make_record(kin, RobotRole.VIRTUAL, n, seed, with_tip=True)
    target = expected.tip_pos_m[-1]
    monitor = CaseMonitor(
        world,
        {RobotRole.VIRTUAL: True},
        target_m=target,
        test_id="c",
        backends={RobotRole.VIRTUAL: "test"},
        keep_records=True,
    )
    for k in range(n):
        stamp = START_NS + k * DT_NS
        monitor.add_tip(RobotRole.VIRTUAL, stamp, virtual.actual_tip_pos_m[k], virtual.actual_tip_quat_wxyz[k])
        monitor.add_joints(RobotRole.VIRTUAL, stamp, virtual.q_measured[k])
        monitor.add_expected(stamp, Stage(int(expected.stage[k])), expected.q_setpoint[k])
    conclusion = monitor.finish()
    assert conclusion.samples == {RobotRole.EXPECTED: n, RobotRole.VIRTUAL: n}
    assert_same(conclusion.records[RobotRole.VIRTUAL], virtual)
    reports = check_records(world, [expected, virtual], expected, target)
    offline = [v for report in reports for v in report.verdicts]
    offline_kpis = [k for report in reports for k in report.kpis]
    assert [v.property for v in conclusion.verdicts] == [v.property for v in offline]
    for live, ref in zip(conclusion.verdicts, offline, strict=True):
        assert live.same_outcome(ref), (live, ref)
    assert len(conclusion.kpis) == len(offline_kpis) > 0
    for live_kpi, ref_kpi in zip(conclusion.kpis, offline_kpis, strict=True):
        assert (live_kpi.name, live_kpi.robot, live_kpi.stage) == (ref_kpi.name, ref_kpi.robot, ref_kpi.stage)
        assert same(live_kpi.value, ref_kpi.value)
