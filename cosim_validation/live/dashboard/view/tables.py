"""The table panels: verdicts of the selected case, and alerts with the latest states."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from cosim_validation.live.dashboard.case_view import CaseView
from cosim_validation.live.dashboard.dashboard_model import DashboardModel
from cosim_validation.live.dashboard.events import VerdictRow
from cosim_validation.live.dashboard.qt_binding import load_qt
from cosim_validation.live.dashboard.view.style import LEVEL_BG, LEVEL_LABELS, UNKNOWN_BG, VERDICT_LABELS, VIOLATED_BG
from cosim_validation.live.dashboard.view_text import margin_text

VERDICT_COLUMNS = ("property", "robot", "verdict", "margin", "first violation [s]", "stage", "final")
STATE_COLUMNS = ("topic", "name", "value")
ALERT_COLUMNS = ("time [s]", "level", "source", "code", "message")
NS_PER_S = 1e9


def verdict_cells(row: VerdictRow) -> tuple[str, ...]:
    """One verdict row as the table shows it.

    Args:
        row: The verdict to show.
    """
    t = row.first_violation_time_s
    return (
        row.property,
        row.robot.label,
        VERDICT_LABELS.get(row.status, str(row.status)),
        margin_text(row.margin, row.unit),
        "-" if math.isnan(t) else f"{t:.2f}",
        row.first_violation_stage.label if row.status == 2 else "-",
        "yes" if row.final else "no",
    )


def make_table(columns: Sequence[str], name: str) -> Any:
    """A read-only QTableWidget with ``columns``.

    Args:
        columns: The column headers.
        name: The table's Qt object name (a key of ``DashboardWidget.panels``).
    """
    qt = load_qt()
    table = qt.QtWidgets.QTableWidget(0, len(columns))
    table.setObjectName(name)
    table.setHorizontalHeaderLabels(list(columns))
    table.setEditTriggers(qt.QtWidgets.QAbstractItemView.NoEditTriggers)
    table.verticalHeader().setVisible(False)
    table.horizontalHeader().setStretchLastSection(True)
    return table


def fill_rows(table: Any, rows: Sequence[Sequence[str]], backgrounds: Sequence[tuple[int, int, int]]) -> None:
    """Rewrite ``table`` with ``rows`` of text, each with its background colour.

    Args:
        table: The QTableWidget to fill; its row count is set to ``len(rows)``.
        rows: The cells' text, one sequence per row.
        backgrounds: One RGB background colour (0..255 each) per row, as many as ``rows``.
    """
    qt = load_qt()
    table.setRowCount(len(rows))
    for r, (cells, color) in enumerate(zip(rows, backgrounds, strict=True)):
        for c, text in enumerate(cells):
            item = table.item(r, c)
            if item is None:
                item = qt.QtWidgets.QTableWidgetItem()
                table.setItem(r, c, item)
            item.setText(text)
            item.setBackground(qt.QtGui.QColor(*color))
    table.resizeColumnsToContents()


def fill_verdicts(table: Any, case: CaseView | None) -> None:
    """The verdicts of ``case``: violated first (highlighted), then the others by property and robot.

    Args:
        table: The verdict table (made with ``VERDICT_COLUMNS``).
        case: The case shown, or None (the table is emptied).
    """
    rows = case.verdict_rows() if case else []
    colors = [VIOLATED_BG if r.status == 2 else UNKNOWN_BG if r.status == 0 else (255, 255, 255) for r in rows]
    fill_rows(table, [verdict_cells(r) for r in rows], colors)


def fill_alerts(states: Any, alerts: Any, model: DashboardModel) -> None:
    """The latest value of every state (diagnostics, extra state topics) and the alert log, newest first.

    Args:
        states: The state table (made with ``STATE_COLUMNS``).
        alerts: The alert table (made with ``ALERT_COLUMNS``); times are seconds since the earliest case start.
        model: The dashboard's model, whose states and alert log are shown.
    """
    ordered = sorted(model.states.values(), key=lambda s: (s.topic, s.name))
    fill_rows(states, [(s.topic, s.name, s.value) for s in ordered], [LEVEL_BG[min(s.level, 2)] for s in ordered])
    newest = list(reversed(model.alerts))
    start = min((c.info.t_ns for c in model.cases.values()), default=0)
    rows = [
        (f"{(a.t_ns - start) / NS_PER_S:.1f}", LEVEL_LABELS.get(a.level, str(a.level)), a.source, a.code, a.message)
        for a in newest
    ]
    fill_rows(alerts, rows, [LEVEL_BG[min(a.level, 2)] for a in newest])
