"""A counterexample as steps of events, read from SPIN's replay of a trail, and written as a trace file.

A trace file (YAML, also what ``cosim supervisor replay`` reads) lists one step per item::

    machine: needle_insertion
    initial: AutonomousMode.InsertionTask.Configure       # optional: expected states, for comparison
    cycle_start: 3                                        # optional: steps from this index on repeat forever
    steps:
      - {events: [e_TaskConfigured], guards: {}, state: AutonomousMode.InsertionTask.MoveToSource}
      - {events: [e_ForceLimit, e_TargetReached]}
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from cosim_validation.common.config import ConfigNode, load_config
from cosim_validation.monitor.statechart.errors import MachineError, ModelCheckError
from cosim_validation.monitor.statechart.step_table import StepTable

CYCLE_MARK = "<<<<<START OF CYCLE>>>>>"


@dataclass(frozen=True)
class TraceStep:
    """One step: the events and input guards it saw; the state and transition SPIN reached.

    ``state`` and ``transition`` are "" when the trace does not say; ``transition`` is "none" when no
    transition was taken.
    """

    events: tuple[str, ...]
    guards: dict[str, bool] = field(default_factory=dict)
    state: str = ""
    transition: str = ""


@dataclass(frozen=True)
class Trace:
    """A run of a machine as steps; with ``cycle_start`` the steps from there on repeat forever (a lasso)."""

    machine: str
    steps: tuple[TraceStep, ...]
    initial: str = ""
    cycle_start: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """The trace-file content."""
        steps = []
        for s in self.steps:
            item: dict[str, Any] = {"events": list(s.events)}
            if s.guards:
                item["guards"] = dict(s.guards)
            if s.state:
                item["state"] = s.state
            if s.transition:
                item["transition"] = s.transition
            steps.append(item)
        out: dict[str, Any] = {"machine": self.machine}
        if self.initial:
            out["initial"] = self.initial
        if self.cycle_start is not None:
            out["cycle_start"] = self.cycle_start
        out["steps"] = steps
        return out

    def write(self, path: Path) -> Path:
        """Write the trace file.

        Args:
            path: The YAML file to write (its folder must exist); replaced if present.

        Returns:
            ``path``.
        """
        path.write_text(yaml.safe_dump(self.to_dict(), sort_keys=False), encoding="utf-8")
        return path


def parse_spin_replay(output: str, table: StepTable) -> Trace:
    """The trace in the output of ``spin -t`` on a model from :mod:`.promela` (its ``@`` lines).

    Args:
        output: SPIN's standard output of the trail replay.
        table: The step table the model was made from (leaf numbers, event and guard variables, transitions).

    Raises:
        ModelCheckError: An ``@E`` line with the wrong number of values.
    """
    names = [*table.event_vars, *(f"g_{g}" for g in table.guard_vars)]
    initial, cycle_start = "", None
    steps: list[TraceStep] = []
    pending: list[int] | None = None
    for line in output.splitlines():
        line = line.strip()
        if line.startswith(CYCLE_MARK):
            cycle_start = len(steps)
        elif line.startswith("@I "):
            initial = table.leaves[int(line.split()[1]) - 1]
        elif line.startswith("@E"):
            pending = [int(v) for v in line.split()[1:]]
            if len(pending) != len(names):
                raise ModelCheckError(f"unexpected SPIN replay line {line!r}: expected {len(names)} values")
        elif line.startswith("@S ") and pending is not None:
            leaf, fired = (int(v) for v in line.split()[1:3])
            steps.append(_step(dict(zip(names, pending, strict=True)), leaf, fired, table))
            pending = None
    if not initial:  # violated in the first state, before the process printed it: the known initial configuration
        initial = table.leaves[table.initial.to_leaf - 1]
    if cycle_start is not None and cycle_start >= len(steps):
        cycle_start = None
    return Trace(table.machine.name, tuple(steps), initial, cycle_start)


def _step(values: dict[str, int], leaf: int, fired: int, table: StepTable) -> TraceStep:
    events = tuple(members[0] for var, members in table.event_vars.items() if values[var])
    guards = {g: bool(values[f"g_{g}"]) for g, where in table.guard_vars.items() if where}
    transition = table.order[fired - 1].label if fired else "none"
    return TraceStep(events, guards, table.leaves[leaf - 1], transition)


def load_trace(path: str | Path) -> Trace:
    """Read a trace file (see the module docstring).

    Args:
        path: The trace YAML file.

    Raises:
        ConfigError: Missing file or bad YAML; MachineError for a malformed step (naming the file and key).
    """
    root = load_config(path)
    root.reject_unknown(("machine", "initial", "cycle_start", "steps"))
    steps = tuple(_trace_step(node) for node in root["steps"].elements())
    if root.has("cycle_start") and not steps:  # the range below, 0..0, read as if the index were wrong
        raise root["cycle_start"].error("a cycle repeats steps, and the trace has none (steps is empty)")
    cycle = root["cycle_start"].to_int(minimum=0, maximum=max(len(steps) - 1, 0)) if root.has("cycle_start") else None
    initial = root["initial"].to_str() if root.has("initial") else ""
    machine = root["machine"].to_str() if root.has("machine") else ""
    return Trace(machine, steps, initial, cycle)


def _trace_step(node: ConfigNode) -> TraceStep:
    if not isinstance(node.value, dict):
        raise MachineError(node.source, node.key, "expected a mapping with 'events' (and optionally 'guards')")
    node.reject_unknown(("events", "guards", "state", "transition"))
    events = tuple(item.to_str() for item in node["events"].elements()) if node.has("events") else ()
    guards = {name: child.to_bool() for name, child in node["guards"].items()} if node.has("guards") else {}
    state = node["state"].to_str() if node.has("state") else ""
    transition = node["transition"].to_str() if node.has("transition") else ""
    return TraceStep(events, guards, state, transition)
