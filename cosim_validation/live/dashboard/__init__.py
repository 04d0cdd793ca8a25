"""The digital-twin dashboard: a ROS-free, Qt-free model of a session and a Qt view over it.

- :class:`DashboardModel` holds cases (stages, tip paths, deviations, verdicts), alerts, states and the
  anatomy; it is fed :mod:`~cosim_validation.live.dashboard.events` made by the ROS layer from live messages or
  a bag (``cosim_validation.live.ros.dashboard_events``).
- :class:`BagPlayer` plays a recorded session into a model (play, pause, seek).
- ``dashboard.view`` is the Qt widget (rqt's ``python_qt_binding`` or PySide6, plots with pyqtgraph).
"""

from cosim_validation.live.dashboard.bag_player import BagPlayer
from cosim_validation.live.dashboard.case_view import CaseView, StageSpan
from cosim_validation.live.dashboard.dashboard_model import DashboardModel
from cosim_validation.live.dashboard.decimation import DEFAULT_MAX_POINTS, minmax_decimate, stride_decimate

__all__ = [
    "DEFAULT_MAX_POINTS",
    "BagPlayer",
    "CaseView",
    "DashboardModel",
    "StageSpan",
    "minmax_decimate",
    "stride_decimate",
]
