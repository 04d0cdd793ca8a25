"""The rqt plugin "Digital twin dashboard" (``plugin.xml``, exported from ``package.xml``).

rqt (``rqt_gui_py``, ROS 2) loads this class with a plugin context whose ``node`` is the rclpy node rqt
spins in its own thread (``rqt_gui_py.rclpy_spinner.RclpySpinner``); the plugin subscribes on that node,
adds its widget with ``context.add_widget`` and keeps its options in rqt's per-instance settings
(``save_settings`` / ``restore_settings``, with ``Settings.set_value`` / ``value``). The interface follows
the public sources of rqt (``rqt_gui_py/plugin.py``, ``rqt_gui/ros2_plugin_context.py``) and qt_gui
(``qt_gui/plugin.py``, ``plugin_context.py``, ``settings.py``), rolling branches.

Where rqt is not installed (here: it is not on PyPI), the base class is a stand-in with qt_gui's Plugin
interface (a QObject parented to the context), so the same class loads in tests and in ``cosim dashboard``.
It has not been run inside a real rqt (see docs/DASHBOARD.md).
"""

from __future__ import annotations

import queue
from typing import Any

from cosim_validation.live.dashboard.qt_binding import load_qt
from cosim_validation.live.dashboard.view.dashboard_widget import DashboardWidget
from cosim_validation.live.ros.dashboard_live import LiveFeed

TITLE = "Digital twin dashboard"
DEFAULT_ROBOTS = ("virtual", "physical")
DEFAULT_EXTRA = ("/diagnostics",)  # later: /cosim/hazards/events, /cosim/supervisor/state, ... (settings)


def _plugin_base() -> type:
    """rqt_gui_py's Plugin, or a stand-in with its interface when rqt is absent."""
    try:
        from rqt_gui_py.plugin import Plugin

        return Plugin  # type: ignore[no-any-return]
    except ImportError:
        pass
    qt = load_qt()

    class StandInPlugin(qt.QtCore.QObject):  # type: ignore[misc,name-defined]
        """qt_gui.plugin.Plugin's interface: a QObject child of the context, four overridable methods."""

        def __init__(self, context: Any) -> None:
            super().__init__(context)
            self.setObjectName("Plugin")

        def shutdown_plugin(self) -> None:
            """Nothing to clean up in the base."""

        def save_settings(self, plugin_settings: Any, instance_settings: Any) -> None:
            """Nothing to save in the base."""

        def restore_settings(self, plugin_settings: Any, instance_settings: Any) -> None:
            """Nothing to restore in the base."""

    return StandInPlugin


def _as_list(value: Any, default: tuple[str, ...]) -> list[str]:
    """A settings value as a list of strings (QSettings gives one string for a one-item list, None if unset)."""
    if value is None:
        return list(default)
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    return [str(v) for v in value]


def _as_bool(value: Any, default: bool) -> bool:
    if value is None:
        return default
    return value.lower() == "true" if isinstance(value, str) else bool(value)


class DashboardPlugin(_plugin_base()):  # type: ignore[misc]
    """The dashboard as an rqt plugin, live on the node rqt hands over."""

    def __init__(self, context: Any) -> None:
        super().__init__(context)
        self.setObjectName("CosimDashboard")
        self._context = context
        self._events: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self.robots, self.extra_topics = list(DEFAULT_ROBOTS), list(DEFAULT_EXTRA)
        self.dashboard = DashboardWidget()
        serial = context.serial_number()
        self.dashboard.widget.setWindowTitle(TITLE if serial < 2 else f"{TITLE} ({serial})")
        self.feed = LiveFeed(context.node, self._events, self.robots, self.extra_topics)
        self.dashboard.attach_queue(self._events)
        context.add_widget(self.dashboard.widget)

    def _resubscribe(self) -> None:
        self.feed.close()
        self.feed = LiveFeed(self._context.node, self._events, self.robots, self.extra_topics)

    def shutdown_plugin(self) -> None:
        """Stop drawing and unsubscribe (rqt destroys the node itself)."""
        self.dashboard.stop()
        self.feed.close()

    def save_settings(self, plugin_settings: Any, instance_settings: Any) -> None:
        """Keep the robots, the extra alert/state topics and the follow option of this instance.

        Args:
            plugin_settings: rqt's settings shared by every instance of the plugin (unused).
            instance_settings: rqt's settings of this instance, written.
        """
        instance_settings.set_value("robots", list(self.robots))
        instance_settings.set_value("extra_topics", list(self.extra_topics))
        instance_settings.set_value("follow_running_case", self.dashboard.follow)
        instance_settings.set_value("max_points", self.dashboard.deviation_plot.max_points)

    def restore_settings(self, plugin_settings: Any, instance_settings: Any) -> None:
        """Restore what :meth:`save_settings` kept (defaults where a key is missing).

        Args:
            plugin_settings: rqt's settings shared by every instance of the plugin (unused).
            instance_settings: rqt's settings of this instance, read.
        """
        robots = _as_list(instance_settings.value("robots"), DEFAULT_ROBOTS)
        extra = _as_list(instance_settings.value("extra_topics"), DEFAULT_EXTRA)
        if (robots, extra) != (self.robots, self.extra_topics):
            self.robots, self.extra_topics = robots, extra
            self._resubscribe()
        self.dashboard.follow_box.setChecked(_as_bool(instance_settings.value("follow_running_case"), True))
        max_points = instance_settings.value("max_points")
        if max_points is not None:
            self.dashboard.set_max_points(int(max_points))

    def trigger_configuration(self) -> None:
        """Rqt's gear button: edit the extra alert/state topics (comma-separated)."""
        qt = load_qt()
        text, ok = qt.QtWidgets.QInputDialog.getText(
            self.dashboard.widget,
            TITLE,
            "extra alert/state topics (comma-separated):",
            text=", ".join(self.extra_topics),
        )
        if ok:
            self.extra_topics = _as_list(text, ())
            self._resubscribe()
