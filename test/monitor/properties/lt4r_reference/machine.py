"""LT4R-style behaviour tests (seed 004): nested state machines that replay a trajectory snapshot by snapshot.

A machine has states (each with an optional on-entry action and an optional nested machine that is
spawned at its start state on entry), events (predicates on the current snapshot and the variables),
and transitions: ``on(event, source, target)``, ``eps(source, target)`` (always fires),
``after(seconds, source, target)`` (timed: fires once the machine has been in ``source`` that long),
``exit(event, source, target)`` (from a state of a nested machine to a state of its parent). A source
of :data:`ANY` makes a wildcard transition. The built-in event ``eof`` occurs at the last snapshot.

The test passes if the top machine ends in a state named ``green``; it fails at once when any
machine enters a state named ``red``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import numpy as np

from cosim_validation.common.record import Stage
from cosim_validation.monitor.properties.errors import PropertyError
from cosim_validation.monitor.statechart.model import REQUIREMENTS  # without a requirement the test is UNKNOWN

ANY = "*"
GREEN, RED, EOF = "green", "red", "eof"


@dataclass(frozen=True)
class Snapshot:
    """What events and actions see: one sample of the replayed run.

    Attributes:
        t_s: Time since the case start [s].
        stage: Stage of the sample.
        tip_m: (3,) needle tip (forward kinematics) in base_link [m].
        tip_axis: (3,) unit needle direction (towards the tip).
        tip_velocity_m_s: (3,) backward difference of the tip [m/s]; zeros at the first sample.
        q: (J,) measured joint positions [rad].
        actual_tip_m: (3,) tracked / ground-truth tip [m]; NaN if unknown.
        target_m: (3,) the case's target [m], or None if unknown.
        index: 0-based sample index.
        is_last: Whether this is the last snapshot (the ``eof`` event).
    """

    t_s: float
    stage: Stage
    tip_m: np.ndarray
    tip_axis: np.ndarray
    tip_velocity_m_s: np.ndarray
    q: np.ndarray
    actual_tip_m: np.ndarray
    target_m: np.ndarray | None
    index: int
    is_last: bool

    @property
    def insertion_speed_m_s(self) -> float:
        """Tip velocity along the needle axis [m/s]: > 0 moving in, < 0 moving back out."""
        return float(self.tip_velocity_m_s @ self.tip_axis)

    @property
    def distance_to_target_m(self) -> float:
        """Distance of the tip from the target [m]; NaN without a target."""
        if self.target_m is None:
            return float("nan")
        d = self.tip_m - self.target_m
        return float(np.sqrt(d @ d))


Vars = SimpleNamespace
Event = Callable[[Snapshot, Vars], bool]
Action = Callable[[Snapshot, Vars], None]


@dataclass(frozen=True)
class State:
    """A state: name, on-entry action, nested machine."""

    name: str
    on_entry: Action | None = None
    machine: Machine | None = None


@dataclass(frozen=True)
class Transition:
    """kind: on | eps | after | exit; ``seconds`` for after."""

    kind: str
    source: str
    target: str
    event: str = ""
    seconds: float = 0.0


@dataclass
class Machine:
    """A state machine under construction (methods return the machine, so they chain).

    Args:
        name: Name of the test.
        start: The state the machine is spawned in.
        variables: Initial values of the machine's variables (shared with nested machines by name).
        description: What the test checks.
        requires: Keys of :data:`REQUIREMENTS` the test needs; a run without them gives UNKNOWN with the
            reason. With ``stages``, leading samples of stage NONE (before any stage) are not replayed.
    """

    name: str
    start: str
    variables: dict[str, Any] = field(default_factory=dict)
    description: str = ""
    requires: tuple[str, ...] = ()
    states: dict[str, State] = field(default_factory=dict)
    events: dict[str, Event] = field(default_factory=dict)
    transitions: list[Transition] = field(default_factory=list)

    def state(self, name: str, on_entry: Action | None = None, machine: Machine | None = None) -> Machine:
        """Add a state (``machine``: a nested machine spawned at its start state on entry)."""
        if name in self.states or name == ANY:
            raise PropertyError(self.name, f"state {name!r} defined twice or reserved")
        self.states[name] = State(name, on_entry, machine)
        return self

    def event(self, name: str, predicate: Event) -> Machine:
        """Add an event: a predicate on the snapshot and the variables."""
        if name in self.events or name == EOF:
            raise PropertyError(self.name, f"event {name!r} defined twice or reserved")
        self.events[name] = predicate
        return self

    def on(self, event: str, source: str, target: str) -> Machine:
        """When ``event`` occurs in ``source`` (or any state: ANY), go to ``target``."""
        self.transitions.append(Transition("on", source, target, event))
        return self

    def eps(self, source: str, target: str) -> Machine:
        """Go from ``source`` to ``target`` at the next snapshot, unconditionally."""
        self.transitions.append(Transition("eps", source, target))
        return self

    def after(self, seconds: float, source: str, target: str) -> Machine:
        """Go from ``source`` to ``target`` once the machine has been in ``source`` for ``seconds`` [s]."""
        if not seconds >= 0:
            raise PropertyError(self.name, f"timed transition needs seconds >= 0, got {seconds!r}")
        self.transitions.append(Transition("after", source, target, seconds=seconds))
        return self

    def exit(self, event: str, source: str, target: str) -> Machine:
        """From a state of this (nested) machine to a state of its parent when ``event`` occurs."""
        self.transitions.append(Transition("exit", source, target, event))
        return self

    def check(self, parent: Machine | None = None) -> None:
        """Raise :class:`PropertyError` for unknown states or events (also in nested machines)."""
        known = ", ".join(self.states)
        unknown = [r for r in self.requires if r not in REQUIREMENTS]
        if unknown:
            raise PropertyError(
                self.name, f"unknown requirement {unknown[0]!r}; expected some of: {', '.join(REQUIREMENTS)}"
            )
        if self.start not in self.states:
            raise PropertyError(self.name, f"start state {self.start!r} is not a state; states: {known}")
        for tr in self.transitions:
            if tr.source != ANY and tr.source not in self.states:
                raise PropertyError(self.name, f"transition from unknown state {tr.source!r}; states: {known}")
            targets = parent.states if tr.kind == "exit" and parent is not None else self.states
            if tr.kind == "exit" and parent is None:
                raise PropertyError(self.name, "exit transitions belong to nested machines")
            if tr.target not in targets:
                raise PropertyError(
                    self.name, f"transition to unknown state {tr.target!r}; states: {', '.join(targets)}"
                )
            if tr.event and tr.event != EOF and tr.event not in self.events:
                events = ", ".join([EOF, *self.events])
                raise PropertyError(self.name, f"transition on unknown event {tr.event!r}; events: {events}")
        for state in self.states.values():
            if state.machine is not None:
                state.machine.check(self)

    def all_variables(self) -> dict[str, Any]:
        """Initial variables of this machine and every nested one."""
        out = dict(self.variables)
        for state in self.states.values():
            if state.machine is not None:
                out.update(state.machine.all_variables())
        return out
