"""rFSM's step semantics, shared by the runtime and the model-checking translations.

Which transition a step takes (Klotzbuecher's rFSM, as used by I-SUR, [Preda et al. 2016] section 3.3):

1. The events collected since the last step are all visible to this step, and are all dropped after it,
   whether or not they triggered anything (UML instead queues events and dispatches them one at a time).
2. A transition is *enabled* when its source is active, one of its events is present (or it has none),
   its guard holds and, if timed, its source has been active long enough.
3. Conflicts are resolved structurally: the active states are searched from the outermost down
   (``outer_first``, rFSM), and the first state with an enabled transition wins; among the transitions of
   one state the higher priority number wins, then the one declared first. UML gives precedence to the
   innermost source instead (``inner_first``); a machine can choose either, the default is rFSM's.
4. At most one transition is taken per step.

Executing a transition (rFSM's ``exec_trans``): the least common ancestor (LCA) is the nearest state above
the target that is also a proper ancestor of the source, so a transition always exits its source (a
self-transition or a transition into a substate of the source re-enters it). The active states below the
LCA are exited innermost first (exit actions), the transition's actions run, then the states from below the
LCA down to the target are entered outermost first (entry actions) and, if the target is composite, its
initial children down to a leaf; with ``resume`` the target's last active leaf is entered instead (deep
history, remembered whenever the target is exited).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import NamedTuple

from cosim_validation.monitor.statechart.model import INNER_FIRST, ROOT, Action, Machine, Transition


class TransitionPlan(NamedTuple):
    """What taking a transition from a given active leaf does.

    Attributes:
        exited: States exited, innermost first.
        entered: States entered, outermost first.
        leaf: The active leaf afterwards.
        actions: Exit actions, the transition's actions, entry actions, in execution order.
        remembered: (composite, leaf) pairs written to the history: every exited composite remembers
            the leaf that was active in it.
    """

    exited: tuple[str, ...]
    entered: tuple[str, ...]
    leaf: str
    actions: tuple[Action, ...]
    remembered: tuple[tuple[str, str], ...]


def parent(machine: Machine, path: str) -> str:
    """The parent of ``path`` (the root for a top-level state).

    Args:
        machine: The machine.
        path: Dotted path of a state other than the root.
    """
    up = machine.states[path].parent
    return ROOT if up is None else up


def least_common_ancestor(machine: Machine, source: str, target: str) -> str:
    """RFSM's LCA: walking up from the target's parent, the first proper ancestor of the source.

    Args:
        machine: The machine.
        source: Path of the transition's source state.
        target: Path of the transition's target state.
    """
    above_source = {ROOT}
    walker = source
    while walker != ROOT:
        walker = parent(machine, walker)
        above_source.add(walker)
    walker = parent(machine, target) if target != ROOT else ROOT
    while walker not in above_source:
        walker = parent(machine, walker)
    return walker


def entry_leaf(machine: Machine, transition: Transition, history: Mapping[str, str]) -> str:
    """The leaf a transition ends in: the target's remembered leaf with ``resume``, else its default.

    Args:
        machine: The machine.
        transition: The transition taken.
        history: Last active leaf of every composite state exited so far, by the composite's path.
    """
    remembered = history.get(transition.target)
    if transition.resume and remembered is not None:
        return remembered
    return machine.default_leaf(transition.target)


def plan_transition(
    machine: Machine, transition: Transition, active_leaf: str, history: Mapping[str, str]
) -> TransitionPlan:
    """Exits, entries and actions of taking ``transition`` while ``active_leaf`` is active.

    Args:
        machine: The machine.
        transition: The transition taken; its source is ``active_leaf`` or one of its ancestors.
        active_leaf: Path of the active leaf before the step.
        history: Last active leaf of every composite state exited so far, by the composite's path (deep history
            for ``resume``).
    """
    top = least_common_ancestor(machine, transition.source, transition.target)
    active = machine.lineage(active_leaf)
    exited = tuple(reversed([s for s in active if s != top and machine.contains(top, s)]))
    leaf = entry_leaf(machine, transition, history)
    entered = tuple(s for s in machine.lineage(leaf) if s != top and machine.contains(top, s))
    actions = [a for s in exited for a in machine.states[s].exit]
    actions += transition.actions
    actions += [a for s in entered for a in machine.states[s].entry]
    remembered = tuple((s, active_leaf) for s in exited if not machine.states[s].is_leaf)
    return TransitionPlan(exited, entered, leaf, tuple(actions), remembered)


def initial_plan(machine: Machine) -> TransitionPlan:
    """Entering the machine for the first time: the root's initial states down to a leaf.

    Args:
        machine: The machine.
    """
    leaf = machine.default_leaf(ROOT)
    entered = machine.lineage(leaf)
    actions = tuple(a for s in entered for a in machine.states[s].entry)
    return TransitionPlan((), entered, leaf, actions, ())


@lru_cache(maxsize=64)
def by_source(machine: Machine) -> dict[str, tuple[Transition, ...]]:
    """Transitions of every source state, in the order they are tried: priority (high first), then file order.

    Args:
        machine: The machine (results are cached per machine object).

    Returns:
        The sorted transitions by source path; a state without transitions has no entry.
    """
    out: dict[str, list[Transition]] = {}
    for tr in machine.transitions:
        out.setdefault(tr.source, []).append(tr)
    return {src: tuple(sorted(trs, key=lambda t: (-t.priority, t.index))) for src, trs in out.items()}


def candidates(machine: Machine, active_leaf: str) -> tuple[Transition, ...]:
    """Transitions that may fire while ``active_leaf`` is active, in the order the scheme tries them.

    Args:
        machine: The machine; its ``priority`` scheme orders the sources (outermost or innermost first).
        active_leaf: Path of the active leaf.
    """
    table = by_source(machine)
    lineage = machine.lineage(active_leaf)
    ordered = reversed(lineage) if machine.priority == INNER_FIRST else lineage
    return tuple(tr for state in ordered for tr in table.get(state, ()))


def global_order(machine: Machine) -> tuple[Transition, ...]:
    """Every transition in one order such that, for any active leaf, the first enabled one is the one taken.

    Sorting by source depth (outer or inner first), then priority, then file order is equivalent to
    :func:`candidates` because the active sources always form one chain from the root.

    Args:
        machine: The machine; its ``priority`` scheme decides whether outer or inner sources come first.
    """
    sign = -1 if machine.priority == INNER_FIRST else 1
    return tuple(
        sorted(
            machine.transitions,
            key=lambda t: (sign * machine.states[t.source].depth, -t.priority, t.index),
        )
    )
