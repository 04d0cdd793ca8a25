"""The plot panels: stage timeline, tip deviation over time, tip paths in two planes.

Curves are set from the model at each refresh; series are thinned as :mod:`cosim_validation.live.dashboard.
decimation` documents (deviation: min-max buckets; paths: every k-th sample), so a long session stays
cheap to draw.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from cosim_validation.common.record import RobotRole
from cosim_validation.live.dashboard.case_view import CaseView
from cosim_validation.live.dashboard.dashboard_model import DashboardModel
from cosim_validation.live.dashboard.decimation import DEFAULT_MAX_POINTS, minmax_decimate, stride_decimate
from cosim_validation.live.dashboard.outline import AXIS_INDEX, projected_outline
from cosim_validation.live.dashboard.qt_binding import load_qt
from cosim_validation.live.dashboard.view.style import OBSTACLE_FILL, ROBOT_COLORS, STAGE_COLORS, TARGET_MODEL_PEN

EXECUTING = (RobotRole.VIRTUAL, RobotRole.PHYSICAL)
LEFT_AXIS_PX = 55  # the stage strip and the deviation plot share a time axis: equal left axes align them


class StageStrip:
    """The current case's stages as coloured bars over time [s since case start]."""

    def __init__(self) -> None:
        pg = load_qt().pg
        self.widget = pg.PlotWidget()
        self.widget.setObjectName("stage_strip")
        self.widget.setMouseEnabled(x=False, y=False)
        self.widget.setMinimumHeight(50)
        self.widget.setLabel("left", "stage")
        self.widget.getAxis("left").setTicks([[]])
        self.widget.getAxis("left").setWidth(LEFT_AXIS_PX)
        self.widget.hideAxis("bottom")  # shares the deviation plot's time axis (linked below it)
        self.widget.setYRange(0, 1)
        self._items: list[Any] = []
        self._drawn: object = None

    def update(self, case: CaseView | None) -> None:
        """Draw the stage spans of ``case`` (nothing if None).

        Args:
            case: The case shown, or None.
        """
        spans = case.stage_spans() if case else []
        key = (case.test_id if case else "", tuple(spans))
        if key == self._drawn:
            return
        pg = load_qt().pg
        for item in self._items:
            self.widget.removeItem(item)
        self._items = []
        for span in spans:
            width = max(span.end_s - span.start_s, 1e-3)
            bar = pg.BarGraphItem(
                x0=[span.start_s],
                width=[width],
                y0=[0.0],
                height=[1.0],
                brush=pg.mkBrush(*STAGE_COLORS[span.stage]),
                pen=pg.mkPen(None),
            )
            text = pg.TextItem(span.stage.label, color=(0, 0, 0), anchor=(0, 0.5))
            text.setPos(span.start_s, 0.5)
            self._items += [bar, text]
        for item in self._items:
            self.widget.addItem(item)
        self._drawn = key


class DeviationPlot:
    """Distance of each robot's actual tip from the expected tip over the case [mm vs s]."""

    def __init__(self, max_points: int = DEFAULT_MAX_POINTS) -> None:
        pg = load_qt().pg
        self.max_points = max_points
        self.widget = pg.PlotWidget(title="tip deviation from the plan")
        self.widget.setObjectName("deviation_plot")
        self.widget.addLegend(offset=(-10, 10))
        self.widget.setLabel("left", "deviation", units="mm")
        self.widget.getAxis("left").setWidth(LEFT_AXIS_PX)
        self.widget.setLabel("bottom", "time since case start", units="s")
        self.widget.showGrid(x=True, y=True, alpha=0.3)
        self.curves = {
            r: self.widget.plot([], [], pen=pg.mkPen(ROBOT_COLORS[r], width=2), name=r.label) for r in EXECUTING
        }

    def update(self, case: CaseView | None) -> None:
        """Set each robot's curve from ``case`` (decimated: min-max buckets above ``max_points``).

        Args:
            case: The case shown, or None (the curves are cleared).
        """
        for robot, curve in self.curves.items():
            t_s, dev_m = case.deviation(robot) if case else (np.empty(0), np.empty(0))
            keep = minmax_decimate(dev_m, self.max_points)
            curve.setData(t_s[keep], dev_m[keep] * 1000.0)


class PathView:
    """Tip paths (expected, virtual, physical) in one plane, with the target and the anatomy outlines."""

    def __init__(self, axes: str, title: str, max_points: int = DEFAULT_MAX_POINTS) -> None:
        qt = load_qt()
        pg = qt.pg
        self.axes, self.max_points = axes, max_points
        self.widget = pg.PlotWidget(title=title)
        self.widget.setObjectName(f"path_view_{axes}")
        self.widget.setAspectLocked(True)
        self.widget.setLabel("bottom", axes[0], units="mm")
        self.widget.setLabel("left", axes[1], units="mm")
        self.curves = {
            r: self.widget.plot([], [], pen=pg.mkPen(ROBOT_COLORS[r], width=2 if r is RobotRole.EXPECTED else 1.5))
            for r in ROBOT_COLORS
        }
        self.target = pg.ScatterPlotItem(size=12, symbol="x", pen=pg.mkPen((200, 0, 0), width=2), brush=None)
        self.widget.addItem(self.target)
        self._outlines: list[Any] = []
        self._anatomy_drawn: tuple[str, ...] = ()

    def update(self, model: DashboardModel, case: CaseView | None) -> None:
        """Draw the anatomy outlines once, then ``case``'s paths (every k-th sample) and target.

        Args:
            model: The dashboard's model, whose anatomy is outlined (drawn again only when its model names change).
            case: The case shown, or None (the paths and the target are cleared).
        """
        self._draw_anatomy(model)
        columns = [AXIS_INDEX[a] for a in self.axes]
        for robot, curve in self.curves.items():
            track = case.tracks.get(robot) if case else None
            if track is None or not len(track):
                curve.setData([], [])
                continue
            xy = track.positions_m[stride_decimate(len(track), self.max_points)][:, columns] * 1000.0
            curve.setData(xy[:, 0], xy[:, 1])
        target = case.info.target_m[columns] * 1000.0 if case else np.full(2, np.nan)
        shown = np.isfinite(target).all()
        self.target.setData([target[0]] if shown else [], [target[1]] if shown else [])

    def _draw_anatomy(self, model: DashboardModel) -> None:
        names = tuple(m.name for m in model.anatomy)
        if names == self._anatomy_drawn:
            return
        for item in self._outlines:
            self.widget.removeItem(item)
        self._outlines = []
        for mesh in model.anatomy:
            if mesh.role == "skin":
                continue
            ring = projected_outline(mesh.triangles_m, self.axes) * 1000.0
            if not len(ring):
                continue
            item = _obstacle_polygon(ring) if mesh.role == "obstacle" else _dashed_outline(ring)
            item.setZValue(-10)
            self.widget.addItem(item)
            self._outlines.append(item)
        self._anatomy_drawn = names


def _obstacle_polygon(ring_mm: np.ndarray) -> Any:
    """A filled red polygon (a forbidden region seen from the side of the view)."""
    qt = load_qt()
    polygon = qt.QtGui.QPolygonF([qt.QtCore.QPointF(float(x), float(y)) for x, y in ring_mm])
    item = qt.QtWidgets.QGraphicsPolygonItem(polygon)
    pen = qt.pg.mkPen((200, 30, 30), width=1.5)
    pen.setCosmetic(True)
    item.setPen(pen)
    item.setBrush(qt.pg.mkBrush(*OBSTACLE_FILL))
    return item


def _dashed_outline(ring_mm: np.ndarray) -> Any:
    """A dashed green outline (a target model)."""
    qt = load_qt()
    pen = qt.pg.mkPen(TARGET_MODEL_PEN, width=1, style=qt.QtCore.Qt.DashLine)
    return qt.pg.PlotCurveItem(ring_mm[:, 0], ring_mm[:, 1], pen=pen)
