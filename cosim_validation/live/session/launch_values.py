"""Which parameter values ``launch_ros.actions.Node(parameters=[{...}])`` passes to a node.

The rule, as launch_ros 0.28 (ROS 2 Kilted) implements it, read in its sources
(``launch_ros/utilities/normalize_parameters.py`` and ``evaluate_parameters.py``):

- ``bool``, ``int``, ``float`` and ``bytes`` are kept as they are; a ``str`` is passed through
  ``yaml.dump`` and read back with ``yaml.safe_load``, so every string, the empty one included, arrives
  unchanged;
- a sequence is normalised by the types of its items: all ``int`` stay ints, ``int`` and ``float`` become
  floats, all ``bool`` stay bools, anything else is dumped item by item and read back, and the result must
  be a **non-empty** sequence whose items are all of the type of the first, one of bool, int, float, str
  ("Expected a non-empty sequence, with items of uniform type"). An empty list becomes ``()`` and fails
  with ``TypeError: Expected 'value' to be one of [float, int, str, bool, bytes], but got '()'``;
- a mapping is flattened into dotted names, each leaf under the same rules;
- anything else (``None``, sets, objects) is a ``TypeError``.

The session graph keeps to this rule, so ``cosim session`` and ``ros2 launch`` pass the same values.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

_SCALARS = (bool, int, float, str, bytes)
_ITEM_TYPES = (bool, int, float, str)


def launch_value_problem(value: Any) -> str | None:
    """Why launch_ros would refuse ``value`` as a parameter value, or None if it passes it.

    Args:
        value: A parameter value: a scalar, a list, or a mapping of them (its leaves are checked).
    """
    if isinstance(value, _SCALARS):
        return None
    if isinstance(value, Mapping):
        problems = [f"{key}: {p}" for key, item in value.items() if (p := launch_value_problem(item)) is not None]
        return "; ".join(problems) or None
    if isinstance(value, Sequence):
        return _sequence_problem(value)
    return f"{type(value).__name__} is not a parameter type (bool, int, float, str, bytes or a list of one of them)"


def _sequence_problem(items: Sequence[Any]) -> str | None:
    if len(items) == 0:
        return "an empty list has no type; leave the parameter out for its declared default"
    kinds = {type(item) for item in items}
    if not kinds <= set(_ITEM_TYPES):
        return f"list items must be bool, int, float or str, got {', '.join(sorted(k.__name__ for k in kinds))}"
    if kinds in ({int}, {float}, {int, float}, {bool}, {str}):
        return None
    # mixed lists are dumped item by item; their items come back of different types
    return f"list items must all be of one type, got {', '.join(sorted(k.__name__ for k in kinds))}"


def launch_accepts(value: Any) -> bool:
    """Whether launch_ros passes ``value`` to a node (see the module docstring).

    Args:
        value: A parameter value: a scalar, a list, or a mapping of them.
    """
    return launch_value_problem(value) is None
