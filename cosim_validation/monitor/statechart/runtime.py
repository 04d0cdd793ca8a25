"""Running a machine: post events, then step it once per period (rFSM's semantics, see :mod:`.semantics`)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from cosim_validation.common.exceptions import InputError
from cosim_validation.monitor.statechart.errors import ExpressionError, MachineError
from cosim_validation.monitor.statechart.evaluation import evaluate
from cosim_validation.monitor.statechart.model import Action, Machine, Transition
from cosim_validation.monitor.statechart.semantics import TransitionPlan, candidates, initial_plan, plan_transition


class StepResult(NamedTuple):
    """What one step did.

    Attributes:
        t_s: Time of the step [s].
        events: The events the step saw (all dropped afterwards).
        transition: The transition taken; None if none was enabled.
        before: Active leaf before the step ("" before the machine was started).
        after: Active leaf after the step.
        exited: States exited, innermost first.
        entered: States entered, outermost first.
        commands: Controller commands of the actions run, in order.
    """

    t_s: float
    events: frozenset[str]
    transition: Transition | None
    before: str
    after: str
    exited: tuple[str, ...]
    entered: tuple[str, ...]
    commands: tuple[str, ...]


class Statechart:
    """One running instance of a machine.

    Args:
        machine: The machine (validated by the loader).

    Use: :meth:`start` once, then per period :meth:`post` the events that occurred and call :meth:`step`.
    Guards and assignments see the machine's parameters and variables and the values passed to
    :meth:`step` (signals and input guards).
    """

    def __init__(self, machine: Machine) -> None:
        self.machine = machine
        self.variables: dict[str, Any] = dict(machine.variables)
        self.history: dict[str, str] = {}
        self.leaf = ""
        self.entered_at: dict[str, float] = {}
        self.pending: set[str] = set()
        self.t_s = -math.inf
        self._candidates: dict[str, tuple[Transition, ...]] = {}  # by active leaf; the machine never changes

    @property
    def started(self) -> bool:
        """Whether :meth:`start` was called."""
        return bool(self.leaf)

    @property
    def active(self) -> tuple[str, ...]:
        """The active states, outermost first (empty before the start)."""
        return self.machine.lineage(self.leaf) if self.leaf else ()

    def is_active(self, path: str) -> bool:
        """Whether ``path`` (or a state below it) is active.

        Args:
            path: Dotted path of a state; the root ("") is active once the machine is started.
        """
        return bool(self.leaf) and self.machine.contains(path, self.leaf)

    def flags(self) -> frozenset[str]:
        """The flags of every active state."""
        return frozenset().union(*(self.machine.states[s].flags for s in self.active))

    def attribute(self, name: str) -> Any:
        """The value of attribute ``name`` of the innermost active state that has it; None if none has.

        Args:
            name: Attribute key as written in the machine file, e.g. ``stage``.
        """
        for state in reversed(self.active):
            if name in self.machine.states[state].attributes:
                return self.machine.states[state].attributes[name]
        return None

    def post(self, *events: str) -> None:
        """Collect events for the next step.

        Args:
            *events: Names of declared events.

        Raises:
            InputError: An event the machine does not declare.
        """
        for event in events:
            if event not in self.machine.events:
                known = ", ".join(self.machine.events) or "none"
                raise InputError(f"machine {self.machine.name!r} has no event {event!r}; events: {known}")
            self.pending.add(event)

    def start(self, t_s: float = 0.0, env: Mapping[str, Any] | None = None) -> StepResult:
        """Enter the initial states (their entry actions run).

        Args:
            t_s: Time of the start [s]; the clock of the ``after`` timeouts starts here.
            env: Signals and input guards for the entry actions' assignments; None for none.

        Raises:
            InputError: The machine is already started.
        """
        if self.started:
            raise InputError(f"machine {self.machine.name!r} is already started")
        self._clock(t_s)
        return self._apply(initial_plan(self.machine), None, frozenset(), env or {})

    def step(self, t_s: float, env: Mapping[str, Any] | None = None, events: Iterable[str] = ()) -> StepResult:
        """One step at time ``t_s``: take the first enabled transition (if any), drop every collected event.

        Args:
            t_s: Time [s], not before the previous step.
            env: Signals and input guards for the guards and assignments of this step.
            events: More events for this step (as if posted before).
        """
        if not self.started:
            raise InputError(f"machine {self.machine.name!r}: start() it before stepping")
        self.post(*events)
        self._clock(t_s)
        seen, self.pending = frozenset(self.pending), set()
        scope = {**self.machine.parameters, **self.variables, **(env or {})}
        for tr in self.candidates():
            if self.enabled(tr, seen, scope):
                plan = plan_transition(self.machine, tr, self.leaf, self.history)
                return self._apply(plan, tr, seen, env or {})
        return StepResult(t_s, seen, None, self.leaf, self.leaf, (), (), ())

    def candidates(self) -> tuple[Transition, ...]:
        """The transitions that may fire in the active configuration, in the order a step tries them."""
        trs = self._candidates.get(self.leaf)
        if trs is None:
            trs = self._candidates[self.leaf] = candidates(self.machine, self.leaf)
        return trs

    def enabled(self, tr: Transition, events: frozenset[str], scope: Mapping[str, Any]) -> bool:
        """Whether ``tr`` (whose source is active) may fire with these events and values.

        Args:
            tr: A candidate transition of the active configuration.
            events: The events of this step.
            scope: Values for the guard: parameters, variables, signals and input guards by name.

        Raises:
            MachineError: The guard cannot be evaluated (names the file, the transition's key, time and state).
        """
        if tr.events and events.isdisjoint(tr.events):
            return False
        if tr.after_s is not None and self.t_s - self.entered_at[tr.source] < tr.after_s:
            return False
        if tr.guard is None:
            return True
        try:
            value = evaluate(tr.guard, scope)
            try:
                return bool(value)
            except (TypeError, ValueError) as exc:  # e.g. a vector: no truth value (numpy refuses one)
                raise ExpressionError(f"cannot evaluate: {exc}") from None
        except ExpressionError as exc:  # say which guard of which file, at which time, with the values
            raise MachineError(self.machine.source, f"{tr.key}.guard", self._failed(tr.guard_text, exc)) from None

    def _clock(self, t_s: float) -> None:
        if not t_s >= self.t_s:
            raise InputError(f"machine {self.machine.name!r}: time {t_s!r} s is before the last step at {self.t_s!r} s")
        self.t_s = t_s

    def _apply(
        self, plan: TransitionPlan, tr: Transition | None, events: frozenset[str], env: Mapping[str, Any]
    ) -> StepResult:
        before = self.leaf
        for state in plan.exited:
            self.entered_at.pop(state, None)
        self.history.update(plan.remembered)
        for state in plan.entered:
            self.entered_at[state] = self.t_s
        self.leaf = plan.leaf
        commands = self._run(plan.actions, env)
        return StepResult(self.t_s, events, tr, before, self.leaf, plan.exited, plan.entered, commands)

    def _run(self, actions: tuple[Action, ...], env: Mapping[str, Any]) -> tuple[str, ...]:
        commands = []
        for action in actions:
            if action.command is not None:
                commands.append(action.command)
            elif action.assignment is not None:
                scope = {**self.machine.parameters, **self.variables, **env}
                try:
                    self.variables[action.assignment.name] = evaluate(action.assignment.value, scope)
                except ExpressionError as exc:
                    raise MachineError(self.machine.source, "action", self._failed(action.text, exc)) from None
        return tuple(commands)

    def _failed(self, text: str, exc: ExpressionError) -> str:
        """What an expression that could not be evaluated was, when, and the error."""
        return f"{text!r} at t = {self.t_s:g} s in state {self.leaf!r}: {exc}"
