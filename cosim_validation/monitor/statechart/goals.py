"""LTL goals of a machine, read from the YAML file beside it and checked against the machine.

Format::

    definitions:               # optional: names usable in formulas, expanded in place
      exception: "event(e_FRTooClose) or event(e_ForceLimit)"
    assumptions:               # optional: what the environment is assumed to do (fairness)
      progress: {ltl: "G F fired", description: "..."}
    goals:
      name: {ltl: "...", description: "...", assuming: [progress]}
      other: {promela: "...", description: "..."}   # SPIN's own syntax, passed through as written

A goal with assumptions is checked as ``(A1 and A2 ...) -> goal``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from cosim_validation.common.config import ConfigNode, load_config
from cosim_validation.monitor.statechart.errors import ExpressionError, MachineError
from cosim_validation.monitor.statechart.ltl import RESERVED, Atom, Formula, atoms, parse_ltl
from cosim_validation.monitor.statechart.model import Machine
from cosim_validation.monitor.statechart.state_tree import resolve_state
from cosim_validation.monitor.syntax_tree import Infix, Prefix

_NAME = re.compile(r"[A-Za-z_][A-Za-z_0-9]*\Z")


@dataclass(frozen=True)
class Goal:
    """One goal.

    Attributes:
        name: Identifier (also the name of SPIN's never claim).
        description: What it asks in words.
        formula: The checked formula (assumptions included) with atoms resolved to state paths; None
            for a goal written in SPIN's syntax.
        promela: The formula in SPIN's syntax as written; "" for an LTL goal.
        assuming: Names of the assumptions it is checked under.
        key: Key path in the goals file.
    """

    name: str
    description: str
    formula: Formula | None
    promela: str
    assuming: tuple[str, ...]
    key: str


@dataclass(frozen=True)
class GoalSet:
    """The goals of one machine and the file they came from."""

    source: str
    goals: tuple[Goal, ...]

    def names(self) -> list[str]:
        """Goal names, in file order."""
        return [goal.name for goal in self.goals]


def load_goals(path: str | Path, machine: Machine) -> GoalSet:
    """Read the goals file ``path`` and check every formula against ``machine``.

    Args:
        path: The goals YAML file (format in the module docstring).
        machine: The machine the goals are about; their state, event, command and flag names must exist in it.

    Raises:
        ConfigError: Missing file or bad YAML; MachineError for a formula that does not parse or names an
            unknown state, event, command or flag (naming the file and the key).
    """
    root = load_config(path)
    root.reject_unknown(("definitions", "assumptions", "goals"))
    definitions: dict[str, Formula] = {}
    for name, node in root["definitions"].items() if root.has("definitions") else []:
        definitions[_name(node, name)] = _formula(node, machine, definitions)
    assumptions = {}
    for name, node in root["assumptions"].items() if root.has("assumptions") else []:
        node.reject_unknown(("ltl", "description"))
        assumptions[_name(node, name)] = _formula(node["ltl"], machine, definitions)
    goals = [_goal(name, node, machine, definitions, assumptions) for name, node in root["goals"].items()]
    if not goals:
        raise MachineError(root.source, "goals", "expected at least one goal")
    return GoalSet(root.source, tuple(goals))


def _goal(
    name: str, node: ConfigNode, machine: Machine, definitions: dict[str, Formula], assumptions: dict[str, Formula]
) -> Goal:
    node.reject_unknown(("ltl", "promela", "description", "assuming"))
    _name(node, name)
    description = node["description"].to_str() if node.has("description") else ""
    assuming = tuple(item.to_str() for item in node["assuming"].elements()) if node.has("assuming") else ()
    for item, assumption in zip(node["assuming"].elements() if assuming else [], assuming, strict=True):
        if assumption not in assumptions:
            known = ", ".join(assumptions) or "none"
            raise MachineError(item.source, item.key, f"unknown assumption {assumption!r}; assumptions: {known}")
    if node.has("ltl") == node.has("promela"):
        raise MachineError(node.source, node.key, "give either 'ltl' (this file's syntax) or 'promela' (SPIN's)")
    if node.has("promela"):
        if assuming:
            raise MachineError(node.source, f"{node.key}.assuming", "assumptions apply to 'ltl' goals only")
        return Goal(name, description, None, node["promela"].to_str(), (), node.key)
    formula = _formula(node["ltl"], machine, definitions)
    for assumption in reversed(assuming):
        formula = Infix("->", assumptions[assumption], formula)
    return Goal(name, description, formula, "", assuming, node.key)


def _name(node: ConfigNode, name: str) -> str:
    if not _NAME.match(name) or name in RESERVED:
        raise MachineError(node.source, node.key, f"{name!r} is not a usable name (an identifier, not a keyword)")
    return name


def _formula(node: ConfigNode, machine: Machine, definitions: dict[str, Formula]) -> Formula:
    try:
        formula = parse_ltl(node.to_str(), definitions)
    except ExpressionError as exc:
        raise MachineError(node.source, node.key, str(exc)) from None
    return _resolved(formula, node, machine)


def _resolved(formula: Formula, node: ConfigNode, machine: Machine) -> Formula:
    """``formula`` with state arguments replaced by full paths, after checking every atom."""
    if isinstance(formula, Atom):
        return _atom(formula, node, machine)
    if isinstance(formula, Prefix):
        return Prefix(formula.op, _resolved(formula.operand, node, machine))
    if isinstance(formula, Infix):
        return Infix(formula.op, _resolved(formula.left, node, machine), _resolved(formula.right, node, machine))
    return formula


def _atom(atom: Atom, node: ConfigNode, machine: Machine) -> Atom:
    kind, arg = atom.predicate, atom.argument
    if kind in ("in", "left", "entered"):
        (path,) = resolve_state(machine.states, ConfigNode(arg, node.source, node.key))
        return Atom(kind, path)
    known: dict[str, list[str]] = {
        "event": list(machine.events),
        "command": list(machine.commands),
        "flag": sorted(set().union(*(s.flags for s in machine.states.values()))),
    }
    if kind in known and arg not in known[kind]:
        raise MachineError(
            node.source,
            node.key,
            f"unknown {kind} {arg!r} in {node.value!r}; "
            f"{kind}s of machine {machine.name!r}: {', '.join(known[kind]) or 'none'}",
        )
    return atom


def observed(goals: GoalSet) -> set[Atom]:
    """Every atom the goals test.

    Args:
        goals: The goals; those written in SPIN's syntax contribute nothing here (see ``promela.raw_atoms``).
    """
    return set().union(*(atoms(g.formula) for g in goals.goals if g.formula is not None))
