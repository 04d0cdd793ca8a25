"""The Qt dashboard fed a recorded session: verdict table = the bag's CaseReports, plots = the bag's samples
(decimated as documented), and a non-blank screenshot with every panel where it belongs."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from cosim_validation.common.record import RobotRole
from cosim_validation.live.dashboard import BagPlayer, DashboardModel, minmax_decimate
from cosim_validation.live.dashboard.view.style import ROBOT_COLORS, VIOLATED_BG
from cosim_validation.live.ros.dashboard_events import bag_events
from test.live.dashboard.bag_truth import deviation_truth, read_truth

pytestmark = [pytest.mark.ros, pytest.mark.slow]
LABELS = {0: "unknown", 1: "holds", 2: "violated"}


@pytest.fixture
def dashboard(qtbot: Any, session_bag: Path) -> Any:
    from cosim_validation.live.dashboard.view.dashboard_widget import DashboardWidget

    player = BagPlayer(bag_events(session_bag, extra=["/diagnostics"]))
    player.seek_end()
    widget = DashboardWidget(player)
    qtbot.addWidget(widget.widget)
    widget.widget.show()
    qtbot.waitExposed(widget.widget)
    return widget


def table_rows(table: Any) -> list[tuple[str, ...]]:
    return [tuple(table.item(r, c).text() for c in range(table.columnCount())) for r in range(table.rowCount())]


def test_verdict_table_equals_case_reports(dashboard: Any, session_bag: Path) -> None:
    for test_id, case in read_truth(session_bag).items():
        dashboard.select_case(test_id)
        rows = table_rows(dashboard.verdict_table)
        want = set()
        for v in case.report.verdicts:
            robot = RobotRole(int(v.robot)).label
            t = "-" if math.isnan(v.first_violation_time_s) else f"{v.first_violation_time_s:.2f}"
            want.add((v.property, robot, LABELS[int(v.verdict)], t))
        assert {(r[0], r[1], r[2], r[4]) for r in rows} == want
        assert len(rows) == len(case.report.verdicts)
        violated = [r for r in range(len(rows)) if rows[r][2] == "violated"]
        assert violated == list(range(len(violated)))  # violations first, highlighted
        for r in violated:
            assert dashboard.verdict_table.item(r, 0).background().color().getRgb()[:3] == VIOLATED_BG


def test_plots_hold_the_bag_samples(dashboard: Any, session_bag: Path) -> None:
    for test_id, case in read_truth(session_bag).items():
        dashboard.select_case(test_id)
        for robot in (RobotRole.VIRTUAL, RobotRole.PHYSICAL):
            t_s, dev_m = deviation_truth(case, robot.label)
            x, y = dashboard.deviation_plot.curves[robot].getData()
            np.testing.assert_allclose(x, t_s, atol=1e-9)
            np.testing.assert_allclose(y, dev_m * 1000.0, rtol=1e-12)
            positions = np.array([case.actual[robot.label][t] for t in sorted(case.actual[robot.label])]) * 1000.0
            px, py = dashboard.path_views[0].curves[robot].getData()  # top view: x, y
            np.testing.assert_allclose(np.c_[px, py], positions[:, :2], rtol=1e-12)
        dashboard.set_max_points(40)  # decimated: min-max buckets of the same samples
        t_s, dev_m = deviation_truth(case, "physical")
        keep = minmax_decimate(dev_m, 40)
        x, y = dashboard.deviation_plot.curves[RobotRole.PHYSICAL].getData()
        assert len(x) <= 40 < len(t_s)
        np.testing.assert_allclose(x, t_s[keep], atol=1e-9)
        np.testing.assert_allclose(y.max(), dev_m.max() * 1000.0, rtol=1e-12)
        dashboard.set_max_points(2000)


def test_case_list_alerts_and_states(dashboard: Any, session_bag: Path) -> None:
    truth = read_truth(session_bag)
    rows = table_rows(dashboard.case_table)
    assert [r[0] for r in rows] == list(truth)
    assert all(r[2] == "completed" and r[3] == "100 %" for r in rows)
    assert dashboard.alert_table.rowCount() == dashboard.model.alert_count > 0
    states = table_rows(dashboard.state_table)
    assert {(s[0], s[1]) for s in states} == {
        ("/diagnostics", "cosim/monitor"),  # the monitor's own heartbeat
        ("/diagnostics", "cosim/monitor/virtual_robot"),
        ("/diagnostics", "cosim/monitor/physical_robot"),
    }


def _region(image: Any, widget: Any, panel: Any) -> np.ndarray:
    """The panel's pixels (RGB) in the dashboard's image."""
    top_left = panel.mapTo(widget, panel.rect().topLeft())
    w, h = panel.width(), panel.height()
    rgb = np.array(
        [
            [image.pixelColor(top_left.x() + i, top_left.y() + j).getRgb()[:3] for i in range(0, w, 2)]
            for j in range(0, h, 2)
        ]
    )
    return rgb


def _has_color(rgb: np.ndarray, color: tuple[int, int, int], tol: int = 40) -> bool:
    return bool((np.abs(rgb.astype(int) - np.array(color)).sum(axis=2) < tol).any())


def test_screenshot_has_every_panel(dashboard: Any, tmp_path: Path) -> None:
    from cosim_validation.live.dashboard.qt_binding import load_qt

    path = dashboard.save_png(tmp_path / "dashboard.png")
    image = load_qt().QtGui.QImage(str(path))
    assert (image.width(), image.height()) == (dashboard.widget.width(), dashboard.widget.height())
    panels = dashboard.panels
    for name, panel in panels.items():
        rgb = _region(image, dashboard.widget, panel)
        assert rgb.size, f"panel {name} has no pixels"
        assert rgb.reshape(-1, 3).std(axis=0).max() > 5, f"panel {name} is blank"
    deviation = _region(image, dashboard.widget, panels["deviation_plot"])
    assert _has_color(deviation, ROBOT_COLORS[RobotRole.PHYSICAL])
    assert _has_color(deviation, ROBOT_COLORS[RobotRole.VIRTUAL])
    for view in ("path_view_xy", "path_view_xz"):
        pixels = _region(image, dashboard.widget, panels[view])
        assert _has_color(pixels, ROBOT_COLORS[RobotRole.EXPECTED]) or _has_color(
            pixels, ROBOT_COLORS[RobotRole.PHYSICAL]
        )
        assert _has_color(pixels, (236, 165, 165), tol=60)  # the heart's translucent red fill
    assert _has_color(_region(image, dashboard.widget, panels["verdict_table"]), VIOLATED_BG, tol=10)
    assert _has_color(_region(image, dashboard.widget, panels["stage_strip"]), (251, 154, 153), tol=10)  # injection


def test_play_pause_seek_controls(dashboard: Any, qtbot: Any, session_bag: Path) -> None:
    bar = dashboard.player_bar
    bar.seek(0.0)
    assert len(dashboard.model.cases) <= 1
    assert not any(c.reported for c in dashboard.model.cases.values())
    bar.seek(bar.player.duration_s)
    assert bar.slider.value() == 1000
    bar.player.rate = 1000.0
    bar.toggle()  # plays from the start, fast
    assert bar.button.text() == "pause"
    qtbot.waitUntil(lambda: not bar.player.playing, timeout=20_000)
    assert bar.player.position_s == pytest.approx(bar.player.duration_s)
    assert dashboard.model.finished() == len(read_truth(session_bag))  # the whole bag again


def test_live_queue_is_drained_on_the_qt_thread(qtbot: Any, session_bag: Path) -> None:
    import queue

    from cosim_validation.live.dashboard.view.dashboard_widget import DashboardWidget

    live = DashboardWidget()
    qtbot.addWidget(live.widget)
    events: queue.SimpleQueue[Any] = queue.SimpleQueue()
    timeline = bag_events(session_bag)
    for _, event in timeline:
        events.put(event)
    reference = DashboardModel()
    reference.apply_all(e for _, e in timeline)
    live.attach_queue(events)
    qtbot.waitUntil(lambda: events.empty() and live.model.revision == reference.revision, timeout=30_000)
    assert live.model.finished() == len(read_truth(session_bag))
