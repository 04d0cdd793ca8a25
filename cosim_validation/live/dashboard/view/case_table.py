"""Case list: every case of the session with its outcome, progress and violations."""

from __future__ import annotations

from typing import Any

from cosim_validation.live.dashboard.case_view import CaseView
from cosim_validation.live.dashboard.dashboard_model import DashboardModel
from cosim_validation.live.dashboard.qt_binding import load_qt
from cosim_validation.live.dashboard.view.style import OUTCOME_BG, VIOLATED_BG

COLUMNS = ("case", "target [mm]", "outcome", "progress", "violated")


def case_cells(case: CaseView) -> tuple[str, str, str, str, str]:
    """The row of a case: id, target in mm, outcome, progress in %, violated properties.

    Args:
        case: The case the row describes.
    """
    target = case.info.target_m
    target_mm = " ".join(f"{v * 1000:.0f}" for v in target) if all(v == v for v in target) else "?"
    violated = sorted({f"{v.property}@{v.robot.label}" for v in case.violations()})
    return case.test_id, target_mm, case.outcome, f"{case.progress() * 100:.0f} %", ", ".join(violated)


def make_case_table(parent: Any = None) -> Any:
    """A read-only QTableWidget with the case columns; rows are filled by :func:`fill_case_table`.

    Args:
        parent: The table's parent QWidget, or None.
    """
    qt = load_qt()
    table = qt.QtWidgets.QTableWidget(0, len(COLUMNS), parent)
    table.setObjectName("case_table")
    table.setHorizontalHeaderLabels(list(COLUMNS))
    table.setEditTriggers(qt.QtWidgets.QAbstractItemView.NoEditTriggers)
    table.setSelectionBehavior(qt.QtWidgets.QAbstractItemView.SelectRows)
    table.setSelectionMode(qt.QtWidgets.QAbstractItemView.SingleSelection)
    table.verticalHeader().setVisible(False)
    table.horizontalHeader().setStretchLastSection(True)
    return table


def fill_case_table(table: Any, model: DashboardModel, selected: str) -> None:
    """Rewrite the rows from ``model`` (one per case, in start order); highlight ``selected``.

    Args:
        table: The QTableWidget made by :func:`make_case_table`.
        model: The dashboard's model, whose cases are listed.
        selected: Test id of the case to select (highlight); "" for none.
    """
    qt = load_qt()
    cases = sorted(model.cases.values(), key=lambda c: c.info.t_ns)  # start order, whatever the arrival order
    table.blockSignals(True)
    table.setRowCount(len(cases))
    for row, case in enumerate(cases):
        color = VIOLATED_BG if case.violations() else OUTCOME_BG.get(case.outcome)
        for column, text in enumerate(case_cells(case)):
            item = table.item(row, column)
            if item is None:
                item = qt.QtWidgets.QTableWidgetItem()
                table.setItem(row, column, item)
            item.setText(text)
            item.setBackground(qt.QtGui.QColor(*(color or (255, 255, 255))))
        if case.test_id == selected:
            table.selectRow(row)
    table.resizeColumnsToContents()
    table.blockSignals(False)
