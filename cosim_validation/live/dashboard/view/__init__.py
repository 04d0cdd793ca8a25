"""The dashboard's Qt view: panels over a :class:`~cosim_validation.live.dashboard.DashboardModel`.

Every module here imports Qt (through :mod:`cosim_validation.live.dashboard.qt_binding`); the model does not.
"""
