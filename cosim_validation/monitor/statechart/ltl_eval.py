"""Evaluating an LTL formula on a run of the runtime machine (a lasso), independently of SPIN.

A counterexample from SPIN is either a lasso (a prefix, then a cycle repeated forever) or a finite bad
prefix (every continuation violates the goal). A finite one is made a lasso by repeating a step without
events or guards after it. The formula is evaluated bottom-up on the positions of the runtime's replay,
each temporal operator as a fixpoint over the lasso's successor function.
"""

from __future__ import annotations

from dataclasses import replace

from cosim_validation.monitor.statechart.counterexample import Trace, TraceStep
from cosim_validation.monitor.statechart.ltl import Atom, Formula
from cosim_validation.monitor.statechart.model import Machine
from cosim_validation.monitor.statechart.replay import Observation, Replay, replay_trace
from cosim_validation.monitor.syntax_tree import Const, Infix, Prefix


def as_lasso(trace: Trace) -> Trace:
    """``trace`` itself if it has a cycle, else the trace followed by an idle step repeated forever.

    Args:
        trace: A counterexample, a lasso (``cycle_start`` set) or a finite bad prefix.
    """
    if trace.cycle_start is not None:
        return trace
    idle = TraceStep((), {}, "", "")
    return replace(trace, steps=(*trace.steps, idle), cycle_start=len(trace.steps))


def violates(machine: Machine, formula: Formula, trace: Trace) -> bool | None:
    """Whether the runtime's run of ``trace`` (as a lasso) violates ``formula``.

    Args:
        machine: The runtime machine the trace is replayed on.
        formula: The goal's formula, definitions expanded, atoms naming states by path.
        trace: The counterexample; a finite one is made a lasso by :func:`as_lasso`.

    Returns:
        True or False; None when the replayed cycle does not close (the lasso is not a run of the machine).
    """
    replay = replay_trace(machine, replace(as_lasso(trace), initial=""))
    if not replay.cycle_closes:
        return None
    return not evaluate_on(machine, formula, replay)[0]


def evaluate_on(machine: Machine, formula: Formula, replay: Replay) -> list[bool]:
    """The truth value of ``formula`` at every position of a replayed lasso.

    Args:
        machine: The machine the replay ran on (for state paths and flags).
        formula: The formula, atoms naming states by path.
        replay: A replay of a lasso whose cycle closes (``loop_to`` set).

    Returns:
        One value per position of ``replay.positions``; the first is the formula's value on the run.
    """
    assert replay.loop_to is not None
    n = len(replay.positions)
    succ = [*range(1, n), replay.loop_to]
    return _eval(machine, formula, replay.positions, succ)


def _eval(machine: Machine, f: Formula, pos: tuple[Observation, ...], succ: list[int]) -> list[bool]:
    if isinstance(f, Const):
        return [f.value] * len(pos)
    if isinstance(f, Atom):
        return [_atom(machine, f, p) for p in pos]
    if isinstance(f, Prefix):
        a = _eval(machine, f.operand, pos, succ)
        if f.op == "not":
            return [not v for v in a]
        if f.op == "X":
            return [a[succ[i]] for i in range(len(pos))]
        if f.op == "F":
            return _until([True] * len(pos), a, succ)
        return [not v for v in _until([True] * len(pos), [not v for v in a], succ)]  # G
    return _infix(f, _eval(machine, f.left, pos, succ), _eval(machine, f.right, pos, succ), succ)


def _infix(f: Infix[Formula], a: list[bool], b: list[bool], succ: list[int]) -> list[bool]:
    if f.op == "and":
        return [x and y for x, y in zip(a, b, strict=True)]
    if f.op == "or":
        return [x or y for x, y in zip(a, b, strict=True)]
    if f.op == "->":
        return [(not x) or y for x, y in zip(a, b, strict=True)]
    if f.op == "<->":
        return [x == y for x, y in zip(a, b, strict=True)]
    if f.op == "U":
        return _until(a, b, succ)
    if f.op == "W":
        always = [not v for v in _until([True] * len(a), [not v for v in a], succ)]
        return [x or y for x, y in zip(_until(a, b, succ), always, strict=True)]
    # R: a R b = not (not a U not b)
    return [not v for v in _until([not v for v in a], [not v for v in b], succ)]


def _until(a: list[bool], b: list[bool], succ: list[int]) -> list[bool]:
    """Least fixpoint of v = b or (a and v∘succ)."""
    value = list(b)
    changed = True
    while changed:
        changed = False
        for i in reversed(range(len(value))):
            if not value[i] and a[i] and value[succ[i]]:
                value[i] = changed = True
    return value


def _atom(machine: Machine, atom: Atom, p: Observation) -> bool:
    kind, arg = atom.predicate, atom.argument
    was = bool(p.prev) and machine.contains(arg, p.prev) if kind in ("left", "entered") else False
    if kind == "in":
        return machine.contains(arg, p.leaf)
    if kind == "left":
        return was and not machine.contains(arg, p.leaf)
    if kind == "entered":
        return not was and machine.contains(arg, p.leaf)
    if kind == "flag":
        return any(arg in machine.states[s].flags for s in machine.lineage(p.leaf))
    if kind == "event":
        return arg in p.events
    if kind == "command":
        return arg in p.commands
    return bool(p.transition)  # fired
