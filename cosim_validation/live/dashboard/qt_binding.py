"""Which Qt the dashboard's view uses: rqt's ``python_qt_binding`` when present, else PySide6 from PyPI.

Only the view modules (``dashboard/view/``) import this; the model never imports Qt. pyqtgraph is imported
after the binding, so it draws with the same Qt (it picks the binding already loaded).
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any, NamedTuple

from cosim_validation.common.exceptions import MissingDependencyError


class QtModules(NamedTuple):
    """The Qt modules of one binding and pyqtgraph on top of it."""

    binding: str  # python_qt_binding | PySide6
    QtCore: Any
    QtGui: Any
    QtWidgets: Any
    pg: Any  # pyqtgraph


_LOADED: list[QtModules] = []
BINDINGS = ("python_qt_binding", "PySide6")  # rqt's binding first: a plugin must share rqt's Qt


def _import(name: str) -> ModuleType | None:
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def load_qt() -> QtModules:
    """The Qt modules (imported once).

    Raises:
        MissingDependencyError: Neither python_qt_binding nor PySide6, or no pyqtgraph.
    """
    if _LOADED:
        return _LOADED[0]
    for binding in BINDINGS:
        parts = [_import(f"{binding}.{m}") for m in ("QtCore", "QtGui", "QtWidgets")]
        if all(parts):
            break
    else:
        raise MissingDependencyError("PySide6-Essentials", "the dashboard (a Qt widget)")
    pg = _import("pyqtgraph")
    if pg is None:
        raise MissingDependencyError("pyqtgraph", "the dashboard's plots")
    pg.setConfigOptions(antialias=True, background="w", foreground="k")
    modules = QtModules(binding, parts[0], parts[1], parts[2], pg)
    _LOADED.append(modules)
    return modules


def application(argv: list[str] | None = None) -> Any:
    """The process's QApplication (made if there is none).

    Args:
        argv: Command-line arguments for a new QApplication; None or empty means ``["cosim dashboard"]``. Unused if the
            process already has one.
    """
    qt = load_qt()
    app = qt.QtWidgets.QApplication.instance()
    return app if app is not None else qt.QtWidgets.QApplication(argv or ["cosim dashboard"])
