"""The dashboard's model fed a recorded session equals an independent reading of the bag."""

from __future__ import annotations

import itertools
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from cosim_validation.common.exceptions import InputError
from cosim_validation.common.record import RobotRole, Stage
from cosim_validation.live.dashboard import BagPlayer, DashboardModel
from cosim_validation.live.dashboard.deviation_stream import DeviationStream
from cosim_validation.live.dashboard.events import TipSample
from cosim_validation.live.ros.dashboard_events import bag_events
from test.live.dashboard.bag_truth import deviation_truth, read_truth

pytestmark = [pytest.mark.ros, pytest.mark.slow]


@pytest.fixture(scope="module")
def model(session_bag: Path) -> DashboardModel:
    player = BagPlayer(bag_events(session_bag))
    player.seek_end()
    return player.model


def test_cases_reports_and_final_verdicts(model: DashboardModel, session_bag: Path) -> None:
    truth = read_truth(session_bag)
    assert list(model.cases) == list(truth)  # start order
    for test_id, case in truth.items():
        view = model.cases[test_id]
        assert view.reported
        assert view.outcome == "completed"
        got = {(v.property, int(v.robot)): (v.status, v.first_violation_stage, v.final) for v in view.verdicts.values()}
        want = {
            (v.property, int(v.robot)): (int(v.verdict), Stage(int(v.first_violation_stage)), True)
            for v in case.report.verdicts
        }
        assert got == want
        for v in case.report.verdicts:
            row = view.verdicts[(v.property, RobotRole(int(v.robot)))]
            assert row.margin == v.margin or (math.isnan(row.margin) and math.isnan(v.margin))


def test_deviations_and_stages(model: DashboardModel, session_bag: Path) -> None:
    for test_id, case in read_truth(session_bag).items():
        view = model.cases[test_id]
        for robot in ("virtual", "physical"):
            t_s, dev_m = view.deviation(RobotRole.parse(robot))
            want_t, want_dev = deviation_truth(case, robot)
            assert len(t_s) == len(want_t) == len(case.expected) > 100
            np.testing.assert_allclose(t_s, want_t, atol=1e-9)
            np.testing.assert_allclose(dev_m, want_dev, rtol=1e-12, atol=1e-15)
        stages = [s for _, (_, s) in sorted(case.expected.items())]
        runs = [stages[0]] + [b for a, b in itertools.pairwise(stages) if a != b]
        assert [int(s.stage) for s in view.stage_spans()] == runs
        assert runs == [1, 2, 3, 4, 5]


def test_player_seek_back_and_forth(session_bag: Path) -> None:
    player = BagPlayer(bag_events(session_bag))
    player.seek_end()
    full = {k: len(v.tracks[RobotRole.EXPECTED]) for k, v in player.model.cases.items()}
    player.seek(player.duration_s / 3)
    partial = {k: len(v.tracks[RobotRole.EXPECTED]) for k, v in player.model.cases.items()}
    assert sum(partial.values()) < sum(full.values())
    player.seek_end()
    assert {k: len(v.tracks[RobotRole.EXPECTED]) for k, v in player.model.cases.items()} == full
    player.play()
    assert not player.advance(1e9)  # plays to the end and stops


def test_deviation_stream_pairs_in_any_order() -> None:
    stream = DeviationStream()
    expected = TipSample(5, RobotRole.EXPECTED, np.zeros(3), "c", Stage.INJECTION)
    assert stream.push(TipSample(5, RobotRole.PHYSICAL, np.array([0.003, 0.004, 0.0]))) == []
    (point,) = stream.push(expected)
    assert point.robot is RobotRole.PHYSICAL
    assert point.deviation_m == pytest.approx(0.005)
    (point,) = stream.push(TipSample(5, RobotRole.VIRTUAL, np.array([0.0, 0.0, 0.001])))
    assert point.deviation_m == pytest.approx(0.001)
    assert point.stage is Stage.INJECTION


def test_empty_timeline_is_an_input_error() -> None:
    with pytest.raises(InputError, match="no message"):
        BagPlayer([])


def test_model_imports_neither_qt_nor_ros() -> None:
    code = (
        "import sys, cosim_validation.live.dashboard, cosim_validation.live.dashboard.foxglove_layout, "
        "cosim_validation.live.dashboard.deviation_stream\n"
        "roots = {'PySide6', 'PyQt5', 'pyqtgraph', 'python_qt_binding', 'rclpy'}\n"
        "bad = [m for m in sys.modules if m.split('.')[0] in roots]\n"
        "print(bad)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.strip() == "[]"


def test_live_order_does_not_matter(session_bag: Path) -> None:
    """Live topics are not ordered among each other: a shuffled stream gives the bag's model."""
    timeline = [event for _, event in bag_events(session_bag)]
    in_order = DashboardModel()
    in_order.apply_all(timeline)
    shuffled = DashboardModel()
    order = np.random.default_rng(3).permutation(len(timeline))
    shuffled.apply_all(timeline[i] for i in order)
    assert list(shuffled.cases) != []
    assert set(shuffled.cases) == set(in_order.cases)
    assert shuffled.current == in_order.current
    for test_id, case in in_order.cases.items():
        other = shuffled.cases[test_id]
        assert other.reported
        assert other.info.sample_count == case.info.sample_count
        assert {k: v.status for k, v in other.verdicts.items()} == {k: v.status for k, v in case.verdicts.items()}
        for robot in (RobotRole.VIRTUAL, RobotRole.PHYSICAL):
            np.testing.assert_array_equal(other.deviation(robot)[1], case.deviation(robot)[1])


def test_an_aborted_case_is_an_alert() -> None:
    from cosim_validation.live.dashboard.events import CaseEnded, CaseStarted

    model = DashboardModel()
    model.apply(CaseStarted(10, "c1", np.zeros(3), np.ones(3), 50, 10.0, ("virtual",)))
    model.apply(CaseEnded("c1", "aborted", "the state validator refused setpoint 59 (injection)", 20))
    (alert,) = model.alerts
    assert (alert.level, alert.code, alert.source, alert.t_ns) == (2, "case_aborted", "controller", 20)
    assert "refused setpoint 59" in alert.message
    assert model.cases["c1"].outcome == "aborted"
