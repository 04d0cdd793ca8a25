"""Typed, validated, frozen node parameters, declared once per node as a dataclass.

The pattern of ros-generate_parameter_library (PickNik): every parameter is declared in one place with its
name, type, default, description and validation, and a node gets one immutable struct of checked values
instead of a dictionary it casts by hand. Here the declaration is a frozen dataclass whose fields are made by
:func:`param`; the field's annotation is the parameter's type::

    @dataclass(frozen=True)
    class RecorderParams(NodeParams):
        executable: ClassVar[str] = "recorder"
        discovery_period_s: float = param(0.2, "how often to look for new topics [s]", exclusive_minimum=0.0)

    RecorderParams.from_values({"discovery_period_s": 0.5}, node="recorder").discovery_period_s  # 0.5

Types: ``bool``, ``int``, ``float``, ``str``, ``tuple[str, ...]`` (a ROS string array), each optionally
``| None`` (declared with a None default: unset, the node then reads the configuration). The same
:class:`ParamSpec` rules check a graph YAML (:mod:`cosim_validation.live.session.graph`) before anything starts
and the values a node is given (:mod:`cosim_validation.live.nodes.node_runtime`), so both refuse the same values.
"""

from __future__ import annotations

import difflib
import math
import types
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar, Self, TypeVar, Union, cast, get_args, get_origin, get_type_hints

from cosim_validation.common.config.config_node import text_number_hint
from cosim_validation.common.exceptions import CosimError
from cosim_validation.common.ros_names import ros_name_problem

T = TypeVar("T")
_RULE = "cosim_param"

#: The ROS type name of each parameter kind, as in the error messages.
KIND_NAMES: dict[type, str] = {
    bool: "a bool",
    int: "an integer",
    float: "a double",
    str: "a string",
    list: "a list of strings",
}


#: the largest value of a parameter in this unit when its declaration states none: a day for a time, a MHz for a
#: rate (a node never waits longer for one thing; no update loop here runs faster)
_CEILINGS = {"s": 86400.0, "Hz": 1e6}


class NodeParameterError(CosimError):
    """A node parameter is unknown, of the wrong type or out of its range (the message names node and parameter)."""


@dataclass(frozen=True)
class ParamRule:
    """The description and validation of one parameter (the arguments of :func:`param`)."""

    description: str
    minimum: float | None = None
    exclusive_minimum: float | None = None
    maximum: float | None = None
    choices: tuple[str, ...] = ()
    not_empty: bool = False
    unit: str = ""
    ros_name: bool = False


def param(
    default: T,
    description: str,
    *,
    minimum: float | None = None,
    exclusive_minimum: float | None = None,
    maximum: float | None = None,
    choices: tuple[str, ...] = (),
    not_empty: bool = False,
    unit: str = "",
    ros_name: bool = False,
) -> T:
    """A parameter field of a :class:`NodeParams` dataclass.

    Args:
        default: The value when none is given (a tuple for a string array; None: unset).
        description: What it is, with its unit in brackets (shown by ``ros2 param describe``).
        minimum: Smallest allowed number (inclusive).
        exclusive_minimum: The number it must exceed.
        maximum: Largest allowed number (inclusive).
        choices: The allowed strings (for a string array: of each item).
        not_empty: A string or array that must be given (its default is empty).
        unit: Unit of a number, shown in range errors (``s``, ``m``).
        ros_name: A string (or each item) that is a ROS name, a topic, service or namespace ('' allowed: unused).
    """
    if maximum is None:  # a time or rate without a stated ceiling is still bounded (1e300 s overflowed the waits)
        maximum = _CEILINGS.get(unit)
    rule = ParamRule(description, minimum, exclusive_minimum, maximum, choices, not_empty, unit, ros_name)
    return field(default=default, metadata={_RULE: rule})


@dataclass(frozen=True)
class ParamSpec:
    """One declared parameter: what rclpy declares and what a graph YAML is checked against.

    Attributes:
        name: The ROS parameter name.
        kind: ``bool``, ``int``, ``float``, ``str`` or ``list`` (a list of strings).
        default: Its value when not given (a list for ``list``); None: declared unset.
        description: For ``ros2 param describe``.
        rule: Its validation (range, choices, required).
    """

    name: str
    kind: type
    default: Any
    description: str
    rule: ParamRule = field(default_factory=lambda: ParamRule(""))

    def problem(self, value: Any) -> str | None:
        """Why ``value`` is not a valid value of this parameter (None: it is).

        Args:
            value: A value as rclpy or a graph YAML gives it (a list or tuple of strings for a string array); None:
                unset, valid only for a parameter declared with a None default.
        """
        if value is None:
            return None if self.default is None else f"expected {KIND_NAMES[self.kind]}, got no value"
        wrong = _type_problem(self.kind, value)
        if wrong is not None:
            return wrong
        if self.kind in (int, float):
            return _range_problem(self.rule, value)
        if self.kind is bool:
            return None
        items = [value] if self.kind is str else list(value)
        if self.rule.not_empty and not any(items):
            return f"required ({self.description})"
        bad = [item for item in items if self.rule.choices and item not in self.rule.choices]
        if bad:
            return f"expected one of: {', '.join(self.rule.choices)}; got {bad[0]!r}"
        names = [ros_name_problem(item) for item in items if self.rule.ros_name and item]  # '' = not used
        return next((problem for problem in names if problem is not None), None)


def _type_problem(kind: type, value: Any) -> str | None:
    if kind is list:
        ok = isinstance(value, list | tuple) and all(isinstance(item, str) for item in value)
    elif kind is float:
        ok = isinstance(value, int | float) and not isinstance(value, bool)
    elif kind is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
        if ok and not -(2**63) <= value < 2**63:  # a ROS integer parameter is 64 bits: rclpy took 1e20 as a double
            return f"expected an integer of 64 bits (a ROS integer parameter), got {value!r}"
    else:
        ok = isinstance(value, kind)
    hint = text_number_hint(value) if kind in (int, float) else ""
    return None if ok else f"expected {KIND_NAMES[kind]}, got {value!r}{hint}"


def _range_problem(rule: ParamRule, value: float) -> str | None:
    unit = f" {rule.unit}" if rule.unit else ""
    if not math.isfinite(value):
        return f"expected a finite number, got {value!r}"
    if rule.minimum is not None and value < rule.minimum:
        return f"expected >= {rule.minimum:g}{unit}, got {value!r}"
    if rule.exclusive_minimum is not None and not value > rule.exclusive_minimum:
        return f"expected > {rule.exclusive_minimum:g}{unit}, got {value!r}"
    if rule.maximum is not None and value > rule.maximum:
        return f"expected <= {rule.maximum:g}{unit}, got {value!r}"
    return None


def _kind_of(hint: Any) -> type:
    """The parameter kind of a field annotation (``X | None`` is X's)."""
    if get_origin(hint) in (Union, types.UnionType):
        (hint,) = [a for a in get_args(hint) if a is not type(None)]
    if get_origin(hint) is tuple and get_args(hint) == (str, ...):
        return list
    if hint in (bool, int, float, str):
        return cast(type, hint)
    raise TypeError(f"unsupported parameter type {hint!r}")


@dataclass(frozen=True)
class NodeParams:
    """Base of every node's parameter struct (subclasses: :mod:`cosim_validation.live.session.node_parameters`).

    Attributes:
        executable: The node executable these parameters belong to (or the composed node's name).
        process: The executable whose process the node runs in: nodes composed into one process see the same
            process-wide parameter overrides, so one's parameters are no unknown parameters of the other.
        ignores_unknown: Parameters it does not declare are ignored (as rclpy does), not refused: for a stand-in
            that takes the parameter files of the node it stands in for.
    """

    executable: ClassVar[str] = ""
    process: ClassVar[str] = ""
    ignores_unknown: ClassVar[bool] = False

    @classmethod
    def specs(cls) -> tuple[ParamSpec, ...]:
        """The declared parameters, in field order (inherited ones first)."""
        cached = _SPECS.get(cls)
        if cached is None:
            hints = get_type_hints(cls)
            cached = tuple(_spec(f.name, _kind_of(hints[f.name]), f.default, f.metadata[_RULE]) for f in fields(cls))
            _SPECS[cls] = cached
        return cached

    @classmethod
    def from_values(cls, values: Mapping[str, Any], node: str) -> Self:
        """The struct of ``values`` (name -> value; a missing name takes its default), checked.

        Args:
            values: Parameter values as rclpy or a graph YAML gives them (lists for string arrays).
            node: The node's name, for error messages.

        Raises:
            NodeParameterError: An unknown name, or a value of the wrong type or out of its range.
        """
        specs = {s.name: s for s in cls.specs()}
        for name in values:
            if name not in specs:
                raise NodeParameterError(cls.unknown_message(name, node))
        checked: dict[str, Any] = {}
        for name, spec in specs.items():
            value = values.get(name, spec.default)
            problem = spec.problem(value)
            if problem is not None:
                raise NodeParameterError(f"{cls.label(name, node)}: {problem}")
            checked[name] = _frozen(spec.kind, value)
        return cls(**checked)

    @classmethod
    def label(cls, name: str, node: str) -> str:
        """``parameter 'name' of node 'node'`` (with the executable when the node is named otherwise).

        Args:
            name: The parameter's name.
            node: The node's name.
        """
        runs = f" ({cls.executable})" if cls.executable and cls.executable != node else ""
        return f"parameter {name!r} of node {node!r}{runs}"

    @classmethod
    def unknown_message(cls, name: str, node: str) -> str:
        """The error for an undeclared parameter ``name``: what exists, and the closest name.

        Args:
            name: The undeclared parameter's name.
            node: The node's name.
        """
        names = [s.name for s in cls.specs()]
        close = difflib.get_close_matches(name, names, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        return f"{cls.label(name, node)}: unknown parameter{hint}; declared: {', '.join(names)}"


_SPECS: dict[type[NodeParams], tuple[ParamSpec, ...]] = {}


def _spec(name: str, kind: type, default: Any, rule: ParamRule) -> ParamSpec:
    external = list(default) if kind is list and default is not None else default
    return ParamSpec(name, kind, external, rule.description, rule)


def _frozen(kind: type, value: Any) -> Any:
    if value is None:
        return None
    if kind is list:
        return tuple(value)
    return float(value) if kind is float else value
