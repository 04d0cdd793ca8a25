"""Reading a machine file (YAML) into a validated :class:`Machine`; docs/SUPERVISOR.md describes the format."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from cosim_validation.common.config import ConfigNode, load_config
from cosim_validation.monitor.statechart.errors import ExpressionError, MachineError
from cosim_validation.monitor.statechart.expression import parse_expression
from cosim_validation.monitor.statechart.model import OUTER_FIRST, PRIORITY_SCHEMES, REQUIREMENTS, Guard, Machine
from cosim_validation.monitor.statechart.scope import ExpressionScope
from cosim_validation.monitor.statechart.state_tree import parse_states
from cosim_validation.monitor.statechart.transitions import parse_transitions
from cosim_validation.monitor.statechart.validation import check_machine

_TOP_KEYS = (
    "machine",
    "description",
    "priority",
    "goals",
    "events",
    "guards",
    "commands",
    "variables",
    "parameters",
    "signals",
    "initial",
    "states",
    "transitions",
    "requires",
)
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z_0-9]*\Z")


def load_machine(path: str | Path, overrides: Mapping[str, Any] | None = None) -> Machine:
    """Read, parse and validate the machine in ``path``.

    Args:
        path: The YAML file.
        overrides: Values replacing declared parameters (unknown names are an error).

    Raises:
        ConfigError: The file is missing or not YAML (its subclass MachineError for a bad machine, naming
            the file and the key).
    """
    return parse_machine(load_config(path), overrides)


def parse_machine(root: ConfigNode, overrides: Mapping[str, Any] | None = None) -> Machine:
    """A validated machine from the root of a parsed machine file.

    Args:
        root: The document root of the machine file (YAML loaded into a config node).
        overrides: Values replacing declared parameters by name; None for none.

    Raises:
        MachineError: A malformed entry, an override of an undeclared parameter, or a structural defect
            (see :func:`~cosim_validation.monitor.statechart.validation.check_machine`); names the file and key.
    """
    root.reject_unknown(_TOP_KEYS)
    parameters = _values(root.get("parameters"))
    for name, value in (overrides or {}).items():
        if name not in parameters:
            known = ", ".join(parameters) or "none"
            raise MachineError(root.source, "parameters", f"no parameter {name!r} to override; parameters: {known}")
        parameters[name] = value
    variables = _values(root.get("variables"))
    signals = _described(root.get("signals"))
    commands = _described(root.get("commands"))
    guards = _guards(root.get("guards"))
    scope = ExpressionScope(root.source, parameters, variables, signals, guards, commands)
    for name, guard in guards.items():
        if guard.expr is not None:
            node = root["guards"][name]
            scope.checked(guard.expr, node if isinstance(node.value, str) else node["expr"])
    events = _described(root.get("events"))
    states = parse_states(root, scope)
    transitions = parse_transitions(root.get("transitions"), states, events, scope)
    priority = root["priority"].to_str(choices=PRIORITY_SCHEMES) if root.has("priority") else OUTER_FIRST
    description = root["description"].to_str() if root.has("description") else ""
    goals = str(root["goals"].to_path()) if root.has("goals") else ""
    machine = Machine(
        _identifier(root["machine"], root["machine"].to_str()),  # it names the model checker's files
        root.source,
        description,
        priority,
        states,
        events,
        guards,
        commands,
        variables,
        parameters,
        signals,
        transitions,
        goals,
        _requirements(root.get("requires")),
    )
    check_machine(machine)
    return machine


def _requirements(node: ConfigNode | None) -> tuple[str, ...]:
    """The ``requires`` list: each one of :data:`REQUIREMENTS`."""
    if node is None:
        return ()
    out = []
    for child in node.elements():
        name = child.to_str()
        if name not in REQUIREMENTS:
            raise MachineError(
                child.source, child.key, f"unknown requirement {name!r}; expected one of: {', '.join(REQUIREMENTS)}"
            )
        out.append(name)
    return tuple(out)


def _identifier(node: ConfigNode, name: str) -> str:
    if not _IDENTIFIER.match(name):
        raise MachineError(node.source, node.key, f"{name!r} is not a name (letters, digits, '_', not first a digit)")
    return name


def _described(node: ConfigNode | None) -> dict[str, str]:
    """A mapping name -> description (or a list of names)."""
    if node is None:
        return {}
    if isinstance(node.value, list):
        return {_identifier(item, item.to_str()): "" for item in node.elements()}
    out: dict[str, str] = {}
    for name, child in node.items():
        out[_identifier(child, name)] = "" if child.value is None else child.to_str()
    return out


def _value(node: ConfigNode) -> Any:
    value = node.value
    if isinstance(value, list):
        return [_value(item) for item in node.elements()]
    if isinstance(value, bool | str):
        return value
    if isinstance(value, int | float):
        return node.to_float()
    raise MachineError(node.source, node.key, f"expected a number, true/false, a string or a list, got {value!r}")


def _values(node: ConfigNode | None) -> dict[str, Any]:
    if node is None:
        return {}
    return {_identifier(child, name): _value(child) for name, child in node.items()}


def _guards(node: ConfigNode | None) -> dict[str, Guard]:
    """Named guards: ``name: "expression"`` or ``name: {input: true, description: ...}``."""
    out: dict[str, Guard] = {}
    for name, child in node.items() if node is not None else []:
        _identifier(child, name)
        if isinstance(child.value, str):
            out[name] = Guard(name, _parse(child), "")
            continue
        child.reject_unknown(("input", "expr", "description"))
        description = child["description"].to_str() if child.has("description") else ""
        if child.has("expr") == child.has("input"):
            raise MachineError(child.source, child.key, "give either 'input: true' or 'expr: <expression>'")
        if child.has("input"):
            if not child["input"].to_bool():
                raise MachineError(child.source, f"{child.key}.input", "expected true (an input the host sets)")
            out[name] = Guard(name, None, description)
        else:
            out[name] = Guard(name, _parse(child["expr"]), description)
    return out


def _parse(node: ConfigNode) -> Any:
    try:
        return parse_expression(node.to_str())
    except ExpressionError as exc:
        raise MachineError(node.source, node.key, str(exc)) from None
