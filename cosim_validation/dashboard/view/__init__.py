"""The dashboard's Qt view: panels over a :class:`~cosim_validation.dashboard.DashboardModel`.

Every module here imports Qt (through :mod:`cosim_validation.dashboard.qt_binding`); the model does not.
"""
