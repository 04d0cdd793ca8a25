"""A hierarchical state machine as data: states (a tree), events, guards, commands, transitions.

States are named by their dotted path from the root (``AutonomousMode.InsertionTask.Inject``); the root
itself is ``""``. A composite state has children and an initial child; a leaf has none. At run time exactly
one leaf is active together with all its ancestors (no concurrent regions, as in rFSM).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from cosim_validation.monitor.statechart.expression import Assignment, Expr

ROOT = ""
OUTER_FIRST, INNER_FIRST = "outer_first", "inner_first"
PRIORITY_SCHEMES = (OUTER_FIRST, INNER_FIRST)


@dataclass(frozen=True)
class Action:
    """An entry, exit or transition action: a controller command, or an assignment to a variable."""

    text: str
    command: str | None = None
    assignment: Assignment | None = None


@dataclass(frozen=True)
class State:
    """One state of the tree.

    Attributes:
        path: Dotted path from the root ("" for the root).
        parent: Path of the parent; None for the root.
        children: Paths of the children, in file order.
        initial: Path of the child entered by default; None for a leaf.
        entry: Actions run when the state is entered (outermost first along a transition).
        exit: Actions run when the state is exited (innermost first).
        final: The task ends here: a leaf without outgoing transitions that is not a trap.
        flags: Names the host reads (e.g. ``motion``, ``hold``) and LTL goals test with ``flag(name)``.
        attributes: Other values for the host (e.g. ``stage: injection``).
        key: Key path in the machine file, for error messages.
    """

    path: str
    parent: str | None
    children: tuple[str, ...] = ()
    initial: str | None = None
    entry: tuple[Action, ...] = ()
    exit: tuple[Action, ...] = ()
    final: bool = False
    flags: frozenset[str] = frozenset()
    attributes: Mapping[str, Any] = field(default_factory=dict)
    key: str = ""

    @property
    def name(self) -> str:
        """The last component of the path."""
        return self.path.rsplit(".", 1)[-1]

    @property
    def is_leaf(self) -> bool:
        """Whether the state has no children."""
        return not self.children

    @property
    def depth(self) -> int:
        """0 for the root, 1 for its children, ..."""
        return 0 if self.path == ROOT else self.path.count(".") + 1


@dataclass(frozen=True)
class Guard:
    """A named guard: an input the host sets each step (``expr`` None) or an expression over names."""

    name: str
    expr: Expr | None
    description: str = ""


@dataclass(frozen=True)
class Transition:
    """One transition (a wildcard source is expanded into one transition per state it stands for).

    Attributes:
        index: Declaration order in the file (shared by the expansions of one wildcard).
        source: Path of the source state.
        target: Path of the target state.
        events: Triggering events: any one of them present in the step enables it; () = no trigger needed.
        guard: Condition that must hold as well (None: always).
        guard_text: The guard as written.
        priority: rFSM's priority number: higher goes first among transitions of the same source depth.
        after_s: Fires only once the source has been active this long [s]; None: untimed.
        resume: Enter the target's last active leaf (deep history) instead of its initial states.
        actions: The transition's effect, run between the exit and the entry actions.
        key: Key path in the machine file.
    """

    index: int
    source: str
    target: str
    events: tuple[str, ...] = ()
    guard: Expr | None = None
    guard_text: str = ""
    priority: int = 0
    after_s: float | None = None
    resume: bool = False
    actions: tuple[Action, ...] = ()
    key: str = ""

    @property
    def label(self) -> str:
        """Human-readable ``source -> target [events] [guard]``."""
        text = f"{self.source or 'root'} -> {self.target}"
        if self.events:
            text += f" on {'|'.join(self.events)}"
        if self.guard_text:
            text += f" [{self.guard_text}]"
        if self.after_s is not None:
            text += f" after {self.after_s:g} s"
        return text


#: What a behaviour test may require of a run, and the reason given when the run lacks it.
REQUIREMENTS: dict[str, str] = {
    "stages": "the stages of a case (no sample carries one: a recording without the expected trajectory?)",
    "target": "the case's target (none in the context, the record or the plan)",
}

#: How the reason of a behaviour test that was decided by the end of its run ends (every runner words it so):
#: it ended outside green without entering red, or it entered red while settling on the last sample, where the
#: end-of-run signal (``is_last``) is on. Such a verdict is about the run's end, so a case stopped early (aborted,
#: refused) makes it unknown (``assembly/case_outcome.py``), while one that entered red earlier stays violated.
NOT_GREEN = ", not green"
AT_END = ", at the end of the run"


@dataclass(frozen=True, eq=False)
class Machine:
    """A validated state machine (build it with :func:`~cosim_validation.monitor.statechart.loader.load_machine`).

    Attributes:
        name: Name of the machine.
        source: File it was read from.
        description: What it is for.
        priority: ``outer_first`` (rFSM) or ``inner_first`` (UML) conflict resolution.
        states: Every state by path, the root ("") included.
        events: Declared events and their descriptions.
        guards: Named guards.
        commands: Declared controller commands and their descriptions.
        variables: Initial values of the machine's variables.
        parameters: Constants usable in expressions.
        signals: Names the host provides at each step (snapshot values), with descriptions.
        transitions: Every transition, wildcards expanded, in declaration order.
        goals_file: The LTL goals file named by the machine ("" if none).
        requires: What a run must have for a behaviour test to judge it (``stages``, ``target``); a run without
            it gives ``unknown`` with the reason (statechart/behaviour.py).
    """

    name: str
    source: str
    description: str
    priority: str
    states: Mapping[str, State]
    events: Mapping[str, str]
    guards: Mapping[str, Guard]
    commands: Mapping[str, str]
    variables: Mapping[str, Any]
    parameters: Mapping[str, Any]
    signals: Mapping[str, str]
    transitions: tuple[Transition, ...]
    goals_file: str = ""
    requires: tuple[str, ...] = ()

    # ------------------------------------------------------------------ tree navigation
    def state(self, path: str) -> State:
        """The state at ``path``.

        Args:
            path: Dotted path of a state from the root ("" for the root).

        Raises:
            KeyError: No state has this path.
        """
        return self.states[path]

    def lineage(self, path: str) -> tuple[str, ...]:
        """``path`` and its ancestors up to (excluding) the root, outermost first.

        Args:
            path: Dotted path of a state; the root ("") gives ().
        """
        out: list[str] = []
        while path != ROOT:
            out.append(path)
            parent = self.states[path].parent
            path = ROOT if parent is None else parent
        return tuple(reversed(out))

    def leaves(self) -> tuple[str, ...]:
        """Every leaf state, in depth-first file order."""
        return self.leaves_under(ROOT)

    def leaves_under(self, path: str) -> tuple[str, ...]:
        """The leaves at or below ``path``, in depth-first file order.

        Args:
            path: Dotted path of a state ("" for the whole tree); a leaf gives itself.
        """
        state = self.states[path]
        if state.is_leaf:
            return (path,)
        return tuple(leaf for child in state.children for leaf in self.leaves_under(child))

    def default_leaf(self, path: str) -> str:
        """The leaf entered when ``path`` is entered by default (following initial children).

        Args:
            path: Dotted path of the state entered ("" for the machine's start leaf).
        """
        state = self.states[path]
        while not state.is_leaf:
            assert state.initial is not None
            state = self.states[state.initial]
        return state.path

    def contains(self, outer: str, path: str) -> bool:
        """Whether ``path`` is ``outer`` or lies below it.

        Args:
            outer: Dotted path of the enclosing state; the root ("") contains every path.
            path: Dotted path of the state tested.
        """
        return outer == ROOT or path == outer or path.startswith(outer + ".")

    def with_priority(self, scheme: str) -> Machine:
        """The same machine resolving conflicts by ``scheme`` (to compare rFSM's and UML's choice).

        Args:
            scheme: ``outer_first`` (rFSM) or ``inner_first`` (UML); not checked here.
        """
        return replace(self, priority=scheme)
