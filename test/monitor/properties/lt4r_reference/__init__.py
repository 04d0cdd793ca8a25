"""The Python LT4R-style behaviour machines (DSL, fuzzy intervals, replay, the three shipped machines): the reference
the statechart engine, which the monitor runs, is tested against (as test/monitor/metrics/reference.py is for the
distance kernels)."""

from cosim_validation.monitor.properties.machines.result import MachineResult
from test.monitor.properties.lt4r_reference.examples import (
    SHIPPED,
    no_retraction_during_injection,
    settles_at_target,
    shipped,
    stage_order,
)
from test.monitor.properties.lt4r_reference.fuzzy import Interval, fuzzy
from test.monitor.properties.lt4r_reference.machine import ANY, EOF, Machine, Snapshot
from test.monitor.properties.lt4r_reference.runner import MachineRunner, run_machine

__all__ = [
    "ANY",
    "EOF",
    "SHIPPED",
    "Interval",
    "Machine",
    "MachineResult",
    "MachineRunner",
    "Snapshot",
    "fuzzy",
    "no_retraction_during_injection",
    "run_machine",
    "settles_at_target",
    "shipped",
    "stage_order",
]
