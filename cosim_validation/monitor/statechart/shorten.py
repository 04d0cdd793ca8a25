"""Shortening a counterexample while the runtime's run of it still violates the goal.

SPIN's depth-first search returns a valid but often long trail. Greedily, steps are dropped, then events
and true input guards are removed from the steps left, each change kept only if the replayed run still
violates the goal (:func:`ltl_eval.violates`). The result is a counterexample of the runtime machine,
confirmed by an evaluation independent of SPIN; SPIN's own trail is kept beside it.
"""

from __future__ import annotations

from dataclasses import replace

from cosim_validation.monitor.statechart.counterexample import Trace, TraceStep
from cosim_validation.monitor.statechart.ltl import Formula
from cosim_validation.monitor.statechart.ltl_eval import as_lasso, violates
from cosim_validation.monitor.statechart.model import Machine
from cosim_validation.monitor.statechart.replay import replay_trace

MAX_ROUNDS = 20


def shorten(machine: Machine, formula: Formula, trace: Trace) -> Trace | None:
    """A shorter trace that still violates ``formula`` on the runtime, with the runtime's states filled in.

    Args:
        machine: The runtime machine.
        formula: The violated goal's formula, atoms naming states by path.
        trace: The counterexample to shorten (SPIN's); a finite one is made a lasso first.

    Returns:
        None if ``trace`` itself does not violate the formula on the runtime (nothing to shorten).
    """
    current = _bare(as_lasso(trace))
    if not violates(machine, formula, current):
        return None
    for _ in range(MAX_ROUNDS):
        candidate = _drop_steps(machine, formula, current)
        candidate = _drop_inputs(machine, formula, candidate)
        if candidate == current:
            break
        current = candidate
    return _with_states(machine, current)


def _bare(trace: Trace) -> Trace:
    """The trace without expected states (they change as steps are removed)."""
    steps = tuple(TraceStep(s.events, dict(s.guards)) for s in trace.steps)
    return replace(trace, steps=steps, initial="")


def _drop_steps(machine: Machine, formula: Formula, trace: Trace) -> Trace:
    i = len(trace.steps) - 1
    while i >= 0:
        cycle = trace.cycle_start
        assert cycle is not None
        if not (i >= cycle and len(trace.steps) - cycle == 1):  # keep the cycle non-empty
            steps = trace.steps[:i] + trace.steps[i + 1 :]
            candidate = replace(trace, steps=steps, cycle_start=cycle - 1 if i < cycle else cycle)
            if violates(machine, formula, candidate):
                trace = candidate
        i -= 1
    return trace


def _drop_inputs(machine: Machine, formula: Formula, trace: Trace) -> Trace:
    for i in range(len(trace.steps)):
        step = trace.steps[i]
        for event in step.events:
            smaller = TraceStep(tuple(e for e in step.events if e != event), dict(step.guards))
            candidate = replace(trace, steps=(*trace.steps[:i], smaller, *trace.steps[i + 1 :]))
            if violates(machine, formula, candidate):
                trace, step = candidate, smaller
        for guard in [g for g, value in step.guards.items() if value]:
            smaller = TraceStep(step.events, {**step.guards, guard: False})
            candidate = replace(trace, steps=(*trace.steps[:i], smaller, *trace.steps[i + 1 :]))
            if violates(machine, formula, candidate):
                trace, step = candidate, smaller
    steps = tuple(TraceStep(s.events, {g: v for g, v in s.guards.items() if v}) for s in trace.steps)
    return replace(trace, steps=steps)


def _with_states(machine: Machine, trace: Trace) -> Trace:
    replay = replay_trace(machine, trace)
    steps = tuple(
        TraceStep(step.events, step.guards, seen.leaf, seen.transition or "none")
        for step, seen in zip(trace.steps, replay.positions[1:], strict=True)
    )
    return replace(trace, steps=steps, initial=replay.positions[0].leaf)
