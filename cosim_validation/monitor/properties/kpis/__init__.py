"""KPIs of a run ([Actuators 2025]) and the properties over them (decided at the end of a run).

Import from the modules of this package (``cosim_validation.monitor.properties`` holds the public API).
"""
