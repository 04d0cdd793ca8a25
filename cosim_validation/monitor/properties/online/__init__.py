"""Online evaluation: samples pushed one at a time, verdict changes at once (O(1) amortized per sample).

Import from the modules of this package (``cosim_validation.monitor.properties`` holds the public API).
"""
