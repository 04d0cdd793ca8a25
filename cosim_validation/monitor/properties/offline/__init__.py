"""Offline evaluation: every property on a whole trajectory record (vectorised terms, numba operators).

Import from the modules of this package (``cosim_validation.monitor.properties`` holds the public API).
"""
