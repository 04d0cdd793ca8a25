"""Behaviour machines of a property set, run on the statechart core (LT4R-style behaviour tests in YAML)."""

from cosim_validation.monitor.properties.machines.behaviours import BehaviourSet, run_named
from cosim_validation.monitor.properties.machines.result import MachineResult, decided_by_the_end

__all__ = ["BehaviourSet", "MachineResult", "decided_by_the_end", "run_named"]
