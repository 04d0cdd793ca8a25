"""The exact ray-parity inside test, re-exported from :mod:`cosim_validation.monitor.metrics.inside_test`.

It lives in ``metrics`` because :class:`~cosim_validation.monitor.metrics.MeshDistance` signs its distances with it
(``coverage`` imports ``metrics``, never the other way round); this name keeps older imports working.
"""

from cosim_validation.monitor.metrics.inside_test import InsideTest

__all__ = ["InsideTest"]
