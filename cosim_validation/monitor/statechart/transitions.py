"""The ``transitions:`` list of a machine file."""

from __future__ import annotations

from collections.abc import Mapping

from cosim_validation.common.config import ConfigNode
from cosim_validation.common.config.config_node import MAX_CASE_TIME_S, text_number_hint
from cosim_validation.monitor.statechart.errors import MachineError
from cosim_validation.monitor.statechart.model import ROOT, State, Transition
from cosim_validation.monitor.statechart.scope import ExpressionScope
from cosim_validation.monitor.statechart.state_tree import resolve_state

#: The largest priority number a transition may carry, either sign: rFSM's numbers order a handful of transitions
#: of one source; a number past this is a typing error, and SPIN's int (32 bits) could not hold it.
MAX_PRIORITY = 1_000_000
_KEYS = ("source", "target", "events", "guard", "priority", "after_s", "resume", "actions", "description")


def parse_transitions(
    node: ConfigNode | None, states: Mapping[str, State], events: Mapping[str, str], scope: ExpressionScope
) -> tuple[Transition, ...]:
    """Every transition, a wildcard source expanded into one transition per state it stands for.

    Args:
        node: The machine file's ``transitions`` list; None when absent (no transitions).
        states: Every state by path, the root ("") included.
        events: Declared events and their descriptions.
        scope: The machine's names, to parse guards and actions.

    Raises:
        MachineError: An unknown key, state, event or parameter, a bad guard or action, the root as target,
            ``resume`` to a leaf.
    """
    if node is None:
        return ()
    out: list[Transition] = []
    for index, item in enumerate(node.elements()):
        out.extend(_transition(index, item, states, events, scope))
    return tuple(out)


def _transition(
    index: int, node: ConfigNode, states: Mapping[str, State], events: Mapping[str, str], scope: ExpressionScope
) -> list[Transition]:
    node.reject_unknown(_KEYS)
    sources = resolve_state(states, node["source"], wildcard=True)
    (target,) = resolve_state(states, node["target"])
    if target == ROOT:
        raise MachineError(node.source, f"{node.key}.target", "the root cannot be a target")
    guard_node = node.get("guard")
    common = {
        "index": index,
        "target": target,
        "events": _events(node.get("events"), events),
        "guard": None if guard_node is None else scope.expression(guard_node),
        "guard_text": "" if guard_node is None else guard_node.to_str(),
        "priority": node["priority"].to_int(minimum=-MAX_PRIORITY, maximum=MAX_PRIORITY) if node.has("priority") else 0,
        "after_s": _after(node.get("after_s"), scope),
        "resume": node["resume"].to_bool() if node.has("resume") else False,
        "actions": scope.actions(node.get("actions")),
        "key": node.key,
    }
    if common["resume"] and states[target].is_leaf:
        raise MachineError(node.source, f"{node.key}.resume", f"resume needs a composite target; {target!r} is a leaf")
    return [Transition(source=source, **common) for source in sources]  # type: ignore[arg-type]


def _events(node: ConfigNode | None, declared: Mapping[str, str]) -> tuple[str, ...]:
    if node is None:
        return ()
    items = [node] if isinstance(node.value, str) else node.elements()
    names = []
    for item in items:
        name = item.to_str()
        if name not in declared:
            known = ", ".join(declared) or "none declared"
            raise MachineError(item.source, item.key, f"unknown event {name!r}; events: {known}")
        names.append(name)
    if not names:
        raise MachineError(node.source, node.key, "expected at least one event (omit 'events' for none)")
    return tuple(names)


def _after(node: ConfigNode | None, scope: ExpressionScope) -> float | None:
    """A delay in seconds: a number, or the name of a numeric parameter."""
    if node is None:
        return None
    if isinstance(node.value, str):
        value = scope.parameters.get(node.value)
        if not isinstance(value, float):
            numeric = ", ".join(k for k, v in scope.parameters.items() if isinstance(v, float)) or "none"
            raise MachineError(
                node.source,
                node.key,
                f"expected seconds or a numeric parameter, got {node.value!r}{text_number_hint(node.value)}; "
                f"numeric parameters: {numeric}",
            )
        if not 0 <= value <= MAX_CASE_TIME_S:
            raise MachineError(
                node.source, node.key, f"parameter {node.value!r} = {value!r}: expected 0 to {MAX_CASE_TIME_S:g} s"
            )
        return value
    # a delay past any case (1e300 s) held the needle at the target until the case's limit, and exit 0
    return node.to_float(minimum=0.0, maximum=MAX_CASE_TIME_S)
