"""The ``states:`` tree of a machine file, and resolving state references (paths, unique names, wildcards)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from cosim_validation.common.config import ConfigNode
from cosim_validation.monitor.statechart.errors import MachineError
from cosim_validation.monitor.statechart.model import ROOT, State
from cosim_validation.monitor.statechart.scope import ExpressionScope

_STATE_KEYS = ("description", "initial", "states", "entry", "exit", "final", "flags", "attributes")
_NAME = re.compile(r"[A-Za-z_][A-Za-z_0-9]*\Z")


def parse_states(root: ConfigNode, scope: ExpressionScope) -> dict[str, State]:
    """Every state by path, the root ("") included, from the machine file's ``states`` and ``initial``.

    Args:
        root: The document root of the machine file.
        scope: The machine's names, to parse the states' entry and exit actions.

    Raises:
        MachineError: A malformed state, a missing or unknown ``initial``, a bad action.
    """
    states: dict[str, State] = {}
    _composite(ROOT, None, root, root["states"], states, scope)
    return states


def _composite(
    path: str,
    parent: str | None,
    node: ConfigNode,
    children_node: ConfigNode,
    states: dict[str, State],
    scope: ExpressionScope,
) -> tuple[str, ...]:
    """Parse the children of ``path`` (recursively), add ``path`` itself, return the children's paths."""
    names = children_node.keys()
    if not names:
        raise MachineError(children_node.source, children_node.key, "expected at least one state")
    children = []
    for name in names:
        if not _NAME.match(name):
            raise MachineError(
                children_node.source, f"{children_node.key}.{name}", "a state name is letters, digits and '_' (no dots)"
            )
        child_path = f"{path}.{name}" if path else name
        children.append(child_path)
        _state(child_path, path, children_node[name], states, scope)
    initial = _initial(path, node, names)
    key = node.key
    states[path] = State(path, parent, tuple(children), initial, *_actions(node, scope), **_extras(node), key=key)
    return tuple(children)


def _initial(path: str, node: ConfigNode, names: list[str]) -> str:
    if not node.has("initial"):
        if len(names) == 1:
            return f"{path}.{names[0]}" if path else names[0]
        raise MachineError(
            node.source,
            f"{node.key}.initial" if node.key else "initial",
            f"missing: which child is entered first (children: {', '.join(names)})",
        )
    initial = node["initial"]
    name = initial.to_str()
    if name not in names:
        raise MachineError(initial.source, initial.key, f"{name!r} is not a child; children: {', '.join(names)}")
    return f"{path}.{name}" if path else name


def _state(path: str, parent: str, node: ConfigNode, states: dict[str, State], scope: ExpressionScope) -> None:
    if node.value is None:
        states[path] = State(path, parent, key=node.key)
        return
    node.reject_unknown(_STATE_KEYS)
    if node.has("states"):
        _composite(path, parent, node, node["states"], states, scope)
        if node.has("final") and node["final"].to_bool():
            raise MachineError(node.source, f"{node.key}.final", "only a leaf state can be final")
        return
    if node.has("initial"):
        raise MachineError(node.source, f"{node.key}.initial", "a leaf state has no initial child")
    final = node["final"].to_bool() if node.has("final") else False
    states[path] = State(path, parent, (), None, *_actions(node, scope), final=final, **_extras(node), key=node.key)


def _actions(node: ConfigNode, scope: ExpressionScope) -> tuple[Any, Any]:
    if node.key == "":  # the root has no actions
        return (), ()
    return scope.actions(node.get("entry")), scope.actions(node.get("exit"))


def _extras(node: ConfigNode) -> dict[str, Any]:
    if node.key == "":
        return {}
    flags = frozenset(item.to_str() for item in node["flags"].elements()) if node.has("flags") else frozenset()
    attributes: Mapping[str, Any] = {}
    if node.has("attributes"):
        for _, child in node["attributes"].items():
            if not isinstance(child.value, str | int | float | bool):
                raise MachineError(child.source, child.key, f"expected a scalar attribute, got {child.value!r}")
        attributes = {name: child.value for name, child in node["attributes"].items()}
    return {"flags": flags, "attributes": attributes}


def resolve_state(states: Mapping[str, State], node: ConfigNode, *, wildcard: bool = False) -> tuple[str, ...]:
    """The state(s) a reference names: a dotted path, a name unique in the machine, or ``P.*``/``*``.

    Args:
        states: Every state by path, the root ("") included.
        node: The reference in the machine file (a string), e.g. a transition's ``source``.
        wildcard: Whether ``P.*`` (every child of P) and ``*`` (every top-level state) are accepted.

    Returns:
        One path, or every child of P for a wildcard.
    """
    text = node.to_str()
    if wildcard and (text == "*" or text.endswith(".*")):
        parent = ROOT if text == "*" else resolve_state(states, ConfigNode(text[:-2], node.source, node.key))[0]
        if states[parent].is_leaf:
            raise MachineError(node.source, node.key, f"{text!r}: {parent!r} has no children to stand for")
        return states[parent].children
    if text in states and text != ROOT:
        return (text,)
    matches = [p for p in states if p and p.rsplit(".", 1)[-1] == text]
    if len(matches) == 1:
        return (matches[0],)
    if matches:
        raise MachineError(
            node.source, node.key, f"state name {text!r} is ambiguous; give the path: {', '.join(matches)}"
        )
    known = ", ".join(p for p in states if p)
    raise MachineError(node.source, node.key, f"unknown state {text!r}; states: {known}")
