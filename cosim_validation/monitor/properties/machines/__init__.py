"""LT4R-style behaviour tests as nested state machines (seed 004): DSL, replay, shipped examples."""

from cosim_validation.monitor.properties.machines.examples import (
    SHIPPED,
    no_retraction_during_injection,
    settles_at_target,
    shipped,
    stage_order,
)
from cosim_validation.monitor.properties.machines.fuzzy import Interval, fuzzy
from cosim_validation.monitor.properties.machines.machine import ANY, EOF, Machine, Snapshot
from cosim_validation.monitor.properties.machines.runner import MachineResult, MachineRunner, run_machine

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
