"""Whole-machine checks on load: unreachable states, trap states, transitions out of final states."""

from __future__ import annotations

from cosim_validation.monitor.statechart.errors import MachineError
from cosim_validation.monitor.statechart.model import ROOT, Machine
from cosim_validation.monitor.statechart.semantics import candidates


def reachable_leaves(machine: Machine) -> set[str]:
    """Leaves some sequence of steps can make active (guards, events and timers all assumed possible).

    A transition with ``resume`` may also enter a remembered leaf of its target, but a remembered leaf was
    active before, so it is reachable already; only the target's default leaf is new.

    Args:
        machine: The machine, states and transitions parsed.
    """
    start = machine.default_leaf(ROOT)
    seen = {start}
    todo = [start]
    while todo:
        leaf = todo.pop()
        for tr in candidates(machine, leaf):
            nxt = machine.default_leaf(tr.target)
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


def check_machine(machine: Machine) -> None:
    """Raise :class:`MachineError` (file and key) for the first structural defect found.

    Defects: a transition from the root or from a final state; a state no sequence of steps reaches;
    a non-final leaf that no transition can leave (a trap: the task would hang there; mark it
    ``final: true`` if the task ends there).

    Args:
        machine: The machine, states and transitions parsed.
    """
    for tr in machine.transitions:
        if tr.source == ROOT:
            raise MachineError(machine.source, f"{tr.key}.source", "the root cannot be a source")
        if machine.states[tr.source].final:
            raise MachineError(
                machine.source, f"{tr.key}.source", f"{tr.source!r} is final: no transition may leave it"
            )
    reached = reachable_leaves(machine)
    for path, state in machine.states.items():
        if path == ROOT:
            continue
        if not any(machine.contains(path, leaf) for leaf in reached):
            raise MachineError(
                machine.source,
                state.key,
                f"state {path!r} is unreachable from the initial state {machine.default_leaf(ROOT)!r}",
            )
    for leaf in machine.leaves():
        state = machine.states[leaf]
        if not state.final and not candidates(machine, leaf):
            raise MachineError(
                machine.source,
                state.key,
                f"trap state {leaf!r}: no transition leaves it (mark it 'final: true' if the task ends there)",
            )
