"""The digital-twin dashboard: every panel over one :class:`DashboardModel`, live or from a bag.

Live messages arrive on ROS threads (rqt's spinner, or the standalone executor thread); they only put
events into a thread-safe queue. A QTimer on the Qt thread drains the queue into the model and redraws
what changed, at most ``MAX_EVENTS_PER_TICK`` events per tick, so a burst never blocks the window.
"""

from __future__ import annotations

import queue
from pathlib import Path
from typing import Any

from cosim_validation.common.exceptions import InputError
from cosim_validation.live.dashboard.bag_player import BagPlayer
from cosim_validation.live.dashboard.case_view import CaseView
from cosim_validation.live.dashboard.dashboard_model import DashboardModel
from cosim_validation.live.dashboard.decimation import DEFAULT_MAX_POINTS
from cosim_validation.live.dashboard.qt_binding import load_qt
from cosim_validation.live.dashboard.view.case_table import fill_case_table, make_case_table
from cosim_validation.live.dashboard.view.player_bar import PlayerBar
from cosim_validation.live.dashboard.view.plots import DeviationPlot, PathView, StageStrip
from cosim_validation.live.dashboard.view.tables import (
    ALERT_COLUMNS,
    STATE_COLUMNS,
    VERDICT_COLUMNS,
    fill_alerts,
    fill_verdicts,
    make_table,
)

REFRESH_MS = 100  # queue drain and redraw period
MAX_EVENTS_PER_TICK = 5000  # a backlog is worked off over several ticks; the window stays responsive


class DashboardWidget:
    """The dashboard's QWidget (``widget``) and its panels (``panels``, by object name).

    Args:
        player: A bag's player (adds play/pause/seek controls and shows its model), or None for live.
        max_points: Most points drawn per series (see ``dashboard.decimation``).
    """

    def __init__(self, player: BagPlayer | None = None, max_points: int = DEFAULT_MAX_POINTS) -> None:
        qt = load_qt()
        self._qt = qt
        self.player = player
        self._own_model = DashboardModel()
        self.follow = True  # show the case started last
        self._selected = ""
        self._drawn: tuple[Any, ...] = ()
        self._queue: queue.SimpleQueue[Any] | None = None
        self.widget = qt.QtWidgets.QWidget()
        self.widget.setObjectName("cosim_dashboard")
        self.widget.setWindowTitle("Digital twin dashboard")
        self.stage_strip = StageStrip()
        self.deviation_plot = DeviationPlot(max_points)
        self.stage_strip.widget.setXLink(self.deviation_plot.widget)  # one time axis for stages and deviation
        self.path_views = (
            PathView("xy", "tip paths, top view (x-y)", max_points),
            PathView("xz", "tip paths, side view (x-z)", max_points),
        )
        self.case_table = make_case_table()
        self.case_table.itemSelectionChanged.connect(self._on_case_clicked)
        self.verdict_table = make_table(VERDICT_COLUMNS, "verdict_table")
        self.state_table = make_table(STATE_COLUMNS, "state_table")
        self.alert_table = make_table(ALERT_COLUMNS, "alert_table")
        self.header = qt.QtWidgets.QLabel()
        self.header.setObjectName("header")
        self.follow_box = qt.QtWidgets.QCheckBox("follow the running case")
        self.follow_box.setChecked(True)
        self.follow_box.toggled.connect(self._on_follow)
        self.player_bar = PlayerBar(player, self.refresh) if player is not None else None
        self._layout()
        self._timer = qt.QtCore.QTimer(self.widget)
        self._timer.setInterval(REFRESH_MS)
        self._timer.timeout.connect(self._drain)
        self.refresh(force=True)

    # ------------------------------------------------------------------ layout
    def _layout(self) -> None:
        w, Qt = self._qt.QtWidgets, self._qt.QtCore.Qt
        top = w.QHBoxLayout()
        top.addWidget(self.header, 1)
        top.addWidget(self.follow_box)
        plots = w.QSplitter(Qt.Vertical)
        plots.addWidget(self.stage_strip.widget)
        plots.addWidget(self.deviation_plot.widget)
        plots.setSizes([60, 340])
        upper = self._split(Qt.Horizontal, [self._titled("cases", self.case_table), plots], [520, 880])
        paths = self._split(Qt.Horizontal, [v.widget for v in self.path_views], [1, 1])
        middle = self._split(
            Qt.Horizontal, [self._titled("verdicts of the shown case", self.verdict_table), paths], [640, 760]
        )
        lower = self._split(
            Qt.Horizontal,
            [self._titled("alerts", self.alert_table), self._titled("states", self.state_table)],
            [900, 500],
        )
        main = self._split(Qt.Vertical, [upper, middle, lower], [300, 380, 170])
        layout = w.QVBoxLayout(self.widget)
        layout.addLayout(top)
        if self.player_bar is not None:
            layout.addWidget(self.player_bar.widget)
        layout.addWidget(main, 1)
        self.widget.resize(1400, 900)

    def _split(self, orientation: Any, widgets: list[Any], sizes: list[int]) -> Any:
        splitter = self._qt.QtWidgets.QSplitter(orientation)
        for widget in widgets:
            splitter.addWidget(widget)
        splitter.setSizes(sizes)
        return splitter

    def _titled(self, title: str, widget: Any) -> Any:
        box = self._qt.QtWidgets.QGroupBox(title)
        box.setObjectName(f"{widget.objectName()}_box")
        layout = self._qt.QtWidgets.QVBoxLayout(box)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(widget)
        return box

    # ------------------------------------------------------------------ state
    @property
    def model(self) -> DashboardModel:
        """The model shown: the bag player's, or the one fed by the live queue."""
        return self.player.model if self.player is not None else self._own_model

    @property
    def panels(self) -> dict[str, Any]:
        """Every panel widget by object name (for tests and screenshots)."""
        widgets = [self.case_table, self.stage_strip.widget, self.deviation_plot.widget, self.verdict_table]
        widgets += [v.widget for v in self.path_views] + [self.alert_table, self.state_table, self.header]
        return {w.objectName(): w for w in widgets}

    def shown_case(self) -> CaseView | None:
        """The case the panels show: the running one when following, else the one clicked."""
        model = self.model
        if self.follow or self._selected not in model.cases:
            return model.current_case
        return model.cases[self._selected]

    def select_case(self, test_id: str) -> None:
        """Show ``test_id`` (stops following the running case).

        Args:
            test_id: Test id of a case of the model; an unknown id raises ``InputError``.
        """
        if test_id not in self.model.cases:
            raise InputError(f"no case {test_id!r}; cases: {', '.join(self.model.cases) or 'none yet'}")
        self._selected = test_id
        self.follow_box.setChecked(False)
        self.refresh(force=True)

    def _on_case_clicked(self) -> None:
        rows = self.case_table.selectionModel().selectedRows()
        if rows:
            self.select_case(self.case_table.item(rows[0].row(), 0).text())

    def _on_follow(self, checked: bool) -> None:
        self.follow = bool(checked)
        self.refresh(force=True)

    # ------------------------------------------------------------------ live feed
    def attach_queue(self, events: queue.SimpleQueue[Any]) -> None:
        """Drain ``events`` (DashboardEvent objects put by ROS threads) into the model every REFRESH_MS.

        Args:
            events: Thread-safe queue the ROS subscriptions put ``DashboardEvent`` objects into.
        """
        self._queue = events
        self._timer.start()

    def _drain(self) -> None:
        if self._queue is None:
            return
        model = self.model
        for _ in range(MAX_EVENTS_PER_TICK):
            try:
                model.apply(self._queue.get_nowait())
            except queue.Empty:
                break
        self.refresh()

    def set_max_points(self, max_points: int) -> None:
        """Draw at most ``max_points`` per series (>= 2).

        Args:
            max_points: Most points drawn per series by the deviation plot and the path views (>= 2).
        """
        if max_points < 2:
            raise InputError(f"max_points must be >= 2, got {max_points}")
        self.deviation_plot.max_points = max_points
        for view in self.path_views:
            view.max_points = max_points
        self.refresh(force=True)

    def stop(self) -> None:
        """Stop the drain timer (the plugin's shutdown)."""
        self._timer.stop()

    # ------------------------------------------------------------------ drawing
    def refresh(self, force: bool = False) -> None:
        """Redraw the panels if the model or the shown case changed.

        Args:
            force: Redraw even if nothing changed.
        """
        model, case = self.model, self.shown_case()
        key = (id(model), model.revision, case.test_id if case else "", self.follow)
        if key == self._drawn and not force:
            return
        self._drawn = key
        fill_case_table(self.case_table, model, case.test_id if case else "")
        self.stage_strip.update(case)
        self.deviation_plot.update(case)
        for view in self.path_views:
            view.update(model, case)
        fill_verdicts(self.verdict_table, case)
        fill_alerts(self.state_table, self.alert_table, model)
        self.header.setText(self._header_text(model, case))
        if self.player_bar is not None:
            self.player_bar.sync()

    @staticmethod
    def _header_text(model: DashboardModel, case: CaseView | None) -> str:
        if case is None:
            return "waiting for the first case"
        violated = len(case.violations())
        return (
            f"<b>{case.test_id}</b>: {case.outcome}, stage {case.stage.label}, {case.progress() * 100:.0f} % · "
            f"{violated} violated · cases: {len(model.cases)} started, {model.finished()} finished · "
            f"{model.alert_count} alerts"
        )

    def save_png(self, path: str | Path) -> Path:
        """Render the dashboard (off-screen works) into a PNG file and return its path.

        Args:
            path: The PNG file to write (overwritten); its folder must exist.
        """
        path = Path(path)
        self.refresh(force=True)
        self._qt.QtWidgets.QApplication.processEvents()
        if not self.widget.grab().save(str(path), "PNG"):
            raise InputError(f"{path}: could not write the PNG (is the folder there and writable?)")
        return path
