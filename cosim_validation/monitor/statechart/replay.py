"""Running a trace (events per step) on the runtime machine, and comparing with the states a trace expects."""

from __future__ import annotations

from dataclasses import dataclass

from cosim_validation.common.exceptions import InputError
from cosim_validation.monitor.statechart.counterexample import Trace
from cosim_validation.monitor.statechart.model import Machine
from cosim_validation.monitor.statechart.runtime import Statechart, StepResult


@dataclass(frozen=True)
class Observation:
    """What the goals can see at one position of a run: the configuration and the step that led to it.

    Attributes:
        leaf: Active leaf.
        prev: Active leaf before the step ("" at the initial position).
        events: Events of the step.
        commands: Commands sent by the step's actions.
        transition: Label of the transition taken ("" if none).
        memory: The history (composite, leaf) pairs after the step, to tell whether a cycle closes.
    """

    leaf: str
    prev: str
    events: frozenset[str]
    commands: frozenset[str]
    transition: str
    memory: frozenset[tuple[str, str]]


@dataclass(frozen=True)
class Replay:
    """The runtime's run of a trace.

    Attributes:
        positions: Observation 0 after the initial entry, then one per step.
        expected: The trace's expected state per step ("" where it names none).
        mismatches: Indices of steps (-1: the initial state) whose state or transition differs from the
            trace's; empty when the trace names no states or every one agrees.
        loop_to: For a lasso, the position the last one is followed by (step ``cycle_start`` again); None
            for a finite trace.
        cycle_closes: For a lasso, whether the machine after the last step is where it was before the
            cycle's first step (configuration and history), so the cycle repeats forever; None otherwise.
    """

    positions: tuple[Observation, ...]
    expected: tuple[str, ...]
    mismatches: tuple[int, ...]
    loop_to: int | None
    cycle_closes: bool | None

    @property
    def reproduced(self) -> bool:
        """Every expected state and transition was reproduced (and a cycle closes)."""
        return not self.mismatches and self.cycle_closes is not False

    @property
    def states(self) -> tuple[str, ...]:
        """The active leaf at every position."""
        return tuple(p.leaf for p in self.positions)


def _observe(result: StepResult, chart: Statechart) -> Observation:
    label = result.transition.label if result.transition is not None else ""
    memory = frozenset(chart.history.items())
    return Observation(result.after, result.before, result.events, frozenset(result.commands), label, memory)


def replay_trace(machine: Machine, trace: Trace) -> Replay:
    """Run ``trace`` on a fresh runtime instance of ``machine``, one step per second of machine time.

    Input guards a step does not set are false.

    Args:
        machine: The runtime machine.
        trace: The steps to run; its ``machine`` name, if given, must be the machine's.

    Raises:
        InputError: The trace is for another machine, or names an event, an input guard, a state or a transition the
            machine does not have (naming the step).
    """
    if trace.machine and trace.machine != machine.name:
        raise InputError(f"the trace is for machine {trace.machine!r}, not {machine.name!r}")
    unset = {name: False for name, guard in machine.guards.items() if guard.expr is None}
    _check_names(machine, trace, set(unset))
    chart = Statechart(machine)
    positions = [_observe(chart.start(0.0), chart)]
    mismatches = [-1] if trace.initial and trace.initial != positions[0].leaf else []
    for i, step in enumerate(trace.steps):
        seen = _observe(chart.step(float(i + 1), env={**unset, **step.guards}, events=step.events), chart)
        positions.append(seen)
        expected_label = "" if step.transition == "none" else step.transition
        if (step.state and step.state != seen.leaf) or (step.transition and expected_label != seen.transition):
            mismatches.append(i)
    loop_to, closes = None, None
    if trace.cycle_start is not None and trace.steps:
        loop_to = trace.cycle_start + 1
        before, last = positions[trace.cycle_start], positions[-1]
        closes = (before.leaf, before.memory) == (last.leaf, last.memory)
    expected = tuple(s.state for s in trace.steps)
    return Replay(tuple(positions), expected, tuple(mismatches), loop_to, closes)


def _check_names(machine: Machine, trace: Trace, inputs: set[str]) -> None:
    """Refuse a name the machine does not have: a misspelt guard or state was replayed and reported "DIFFERENT"."""
    leaves = machine.leaves()
    labels = {t.label for t in machine.transitions} | {"none"}
    if trace.initial and trace.initial not in leaves:
        raise InputError(
            f"initial: machine {machine.name!r} has no leaf state {trace.initial!r}; leaves: {', '.join(leaves)}"
        )
    for i, step in enumerate(trace.steps):
        where = f"steps[{i}]"
        unknown = sorted(set(step.events) - set(machine.events))
        if unknown:
            raise InputError(
                f"{where}: machine {machine.name!r} has no event {unknown[0]!r}; events: {', '.join(machine.events)}"
            )
        guards = sorted(set(step.guards) - inputs)
        if guards:
            known = ", ".join(sorted(inputs)) or "none"
            raise InputError(
                f"{where}: machine {machine.name!r} has no input guard {guards[0]!r}; input guards: {known}"
            )
        if step.state and step.state not in leaves:
            raise InputError(
                f"{where}: machine {machine.name!r} has no leaf state {step.state!r}; leaves: {', '.join(leaves)}"
            )
        if step.transition and step.transition not in labels:
            raise InputError(f"{where}: machine {machine.name!r} has no transition {step.transition!r}")
