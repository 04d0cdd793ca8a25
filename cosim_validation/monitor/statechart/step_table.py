"""A machine as finite tables, the common ground of the Promela and SMV translations.

The environment may send any set of events and set every input guard either way in any step. To keep the
state space small without changing what the goals can observe:

- events the goals name are chosen in every step and kept in the state (``event(e)`` needs them);
- other events matter only through the transitions they trigger, so events triggering the same set of
  transitions form one group, chosen as one bit, and only in leaves where one of those transitions could
  fire; a counterexample names the group's first event (any other member gives the same run);
- input guards are chosen in the steps where a guard that names them could be evaluated.

What a transition does depends only on the active leaf and, with ``resume``, on the remembered leaf of its
target, so it is tabulated per (transition, leaf, remembered leaf) with :func:`semantics.plan_transition`,
the function the runtime executes.
"""

from __future__ import annotations

from dataclasses import dataclass

from cosim_validation.monitor.statechart.errors import MachineError
from cosim_validation.monitor.statechart.expression import Expr, free_names
from cosim_validation.monitor.statechart.ltl import Atom
from cosim_validation.monitor.statechart.model import Action, Machine, Transition
from cosim_validation.monitor.statechart.semantics import candidates, global_order, initial_plan, plan_transition
from cosim_validation.monitor.syntax_tree import Const, Infix, Name, Prefix


@dataclass(frozen=True)
class Row:
    """Taking one transition from one leaf (and remembered leaf): where it ends and what it does.

    Attributes:
        leaf: Active leaf number before the step.
        remembered: Remembered leaf of the target (0: none); -1 when the transition does not resume.
        to_leaf: Active leaf number after the step.
        commands: Controller commands sent by the step's actions.
        history: (composite, leaf number) written to the history by the step.
    """

    leaf: int
    remembered: int
    to_leaf: int
    commands: tuple[str, ...]
    history: tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class StepTable:
    """The tables of one machine (leaf numbers start at 1; 0 means none)."""

    machine: Machine
    leaves: tuple[str, ...]
    event_vars: dict[str, tuple[str, ...]]
    relevant: dict[str, tuple[int, ...]]
    guard_vars: dict[str, tuple[int, ...]]
    history: tuple[str, ...]
    order: tuple[Transition, ...]
    rows: dict[int, tuple[Row, ...]]
    initial: Row

    def number(self, leaf: str) -> int:
        """The number of a leaf.

        Args:
            leaf: Dotted path of a leaf state.

        Returns:
            Its 1-based position in :attr:`leaves`.
        """
        return self.leaves.index(leaf) + 1

    def leaves_of(self, path: str) -> tuple[int, ...]:
        """Numbers of the leaves at or below ``path``.

        Args:
            path: Dotted path of a state ("" for every leaf).
        """
        return tuple(i + 1 for i, leaf in enumerate(self.leaves) if self.machine.contains(path, leaf))

    def event_var(self, event: str) -> str:
        """The variable that carries ``event`` (its own, or its group's).

        Args:
            event: A declared event that has a variable: one the goals name, or one that triggers a transition.

        Raises:
            StopIteration: The event has no variable (it triggers nothing and no goal names it).
        """
        return next(var for var, members in self.event_vars.items() if event in members)


def build_step_table(machine: Machine, observed: set[Atom], *, reduce: bool = True) -> StepTable:
    """The tables of ``machine`` for goals testing the atoms ``observed``.

    With ``reduce=False`` every event is a free bit in every step (the plain encoding, as [Preda et al. 2016]'s SMV
    model has one event module per event); the verdicts are the same, the search larger (benchmarks).

    Args:
        machine: The machine to tabulate.
        observed: The atoms the goals test; ``event(e)`` atoms keep e as its own variable in every step.
        reduce: Whether to group the events no goal names and choose them only where they can fire.

    Raises:
        MachineError: The machine uses what the translation cannot represent (variables, timed
            transitions, guards over values other than input guards), naming the key.
    """
    _check_translatable(machine)
    leaves = machine.leaves()
    watched = {a.argument for a in observed if a.predicate == "event"} if reduce else set(machine.events)
    event_vars, relevant = _event_vars(machine, watched, leaves)
    order = global_order(machine)
    history = tuple(sorted({t.target for t in machine.transitions if t.resume}))
    rows = {t_id: _rows(machine, t, leaves, history) for t_id, t in enumerate(order, start=1)}
    start = initial_plan(machine)
    initial = Row(0, -1, leaves.index(start.leaf) + 1, _commands(start.actions), ())
    guard_vars = _guard_vars(machine, leaves)
    return StepTable(machine, leaves, event_vars, relevant, guard_vars, history, order, rows, initial)


def _check_translatable(machine: Machine) -> None:
    if machine.variables:
        raise MachineError(machine.source, "variables", "machines with variables cannot be model-checked")
    for tr in machine.transitions:
        if tr.after_s is not None:
            raise MachineError(
                machine.source,
                f"{tr.key}.after_s",
                "timed transitions cannot be model-checked "
                "(the translation has no clock); send a timeout event instead",
            )
        if tr.guard is not None and not _boolean_over_inputs(tr.guard, machine):
            raise MachineError(
                machine.source,
                f"{tr.key}.guard",
                f"guard {tr.guard_text!r} cannot be model-checked: only and/or/not over input guards",
            )


def _boolean_over_inputs(expr: Expr, machine: Machine) -> bool:
    if isinstance(expr, Name):
        guard = machine.guards.get(expr.ident)
        return guard is not None and guard.expr is None
    if isinstance(expr, Const):
        return isinstance(expr.value, bool)
    if isinstance(expr, Prefix):
        return expr.op == "not" and _boolean_over_inputs(expr.operand, machine)
    if isinstance(expr, Infix):
        return expr.op in ("and", "or") and all(_boolean_over_inputs(e, machine) for e in (expr.left, expr.right))
    return False


def _event_vars(
    machine: Machine, watched: set[str], leaves: tuple[str, ...]
) -> tuple[dict[str, tuple[str, ...]], dict[str, tuple[int, ...]]]:
    """Event variables (watched events alone, the others grouped) and the leaves where each is chosen."""
    triggers: dict[str, frozenset[int]] = {
        e: frozenset(i for i, t in enumerate(machine.transitions) if e in t.events) for e in machine.events
    }
    event_vars: dict[str, tuple[str, ...]] = {}
    groups: dict[frozenset[int], list[str]] = {}
    for event in machine.events:
        if event in watched:
            event_vars[f"ev_{event}"] = (event,)
        elif triggers[event]:
            groups.setdefault(triggers[event], []).append(event)
    for group in groups.values():
        event_vars[f"grp_{group[0]}"] = tuple(group)
    relevant = {}
    for var, members in event_vars.items():
        if var.startswith("ev_"):
            relevant[var] = tuple(range(1, len(leaves) + 1))
            continue
        fired_by = triggers[members[0]]
        relevant[var] = tuple(
            n
            for n, leaf in enumerate(leaves, start=1)
            if any(machine.transitions.index(t) in fired_by for t in candidates(machine, leaf))
        )
    return event_vars, relevant


def _guard_vars(machine: Machine, leaves: tuple[str, ...]) -> dict[str, tuple[int, ...]]:
    """Input guards and the leaves where some candidate transition's guard names them."""
    out: dict[str, tuple[int, ...]] = {}
    for name, guard in machine.guards.items():
        if guard.expr is not None:
            continue
        out[name] = tuple(
            n
            for n, leaf in enumerate(leaves, start=1)
            if any(t.guard is not None and name in free_names(t.guard) for t in candidates(machine, leaf))
        )
    return out


def _rows(machine: Machine, tr: Transition, leaves: tuple[str, ...], history: tuple[str, ...]) -> tuple[Row, ...]:
    out = []
    for leaf in machine.leaves_under(tr.source):
        remembered_options: list[str | None] = [None]
        if tr.resume:
            remembered_options += list(machine.leaves_under(tr.target))
        for remembered in remembered_options:
            memory = {} if remembered is None else {tr.target: remembered}
            plan = plan_transition(machine, tr, leaf, memory)
            out.append(
                Row(
                    leaves.index(leaf) + 1,
                    -1 if not tr.resume else (0 if remembered is None else leaves.index(remembered) + 1),
                    leaves.index(plan.leaf) + 1,
                    _commands(plan.actions),
                    tuple((c, leaves.index(lf) + 1) for c, lf in plan.remembered if c in history),
                )
            )
    return tuple(out)


def _commands(actions: tuple[Action, ...]) -> tuple[str, ...]:
    return tuple(a.command for a in actions if a.command is not None)
