"""The rule of the parameter values launch_ros 0.28 passes to a node (module docstring of launch_values)."""

from __future__ import annotations

from typing import Any

import pytest

from cosim_validation.live.session.launch_values import launch_accepts, launch_value_problem
from cosim_validation.live.session.node_parameters import NODE_PARAMETERS


@pytest.mark.parametrize(
    "value",
    [True, 3, 2.5, "", "yes", "a: b", b"\x00", ["virtual", "physical"], [1, 2], [1, 2.5], [True, False], ("/a",)],
)
def test_accepted(value: Any) -> None:
    assert launch_accepts(value)


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ([], "an empty list has no type"),
        ((), "an empty list has no type"),
        (["a", 1], "list items must all be of one type, got int, str"),
        ([True, 1], "list items must all be of one type, got bool, int"),
        ([None], "list items must be bool, int, float or str, got NoneType"),
        ([["a"]], "list items must be bool, int, float or str, got list"),
        (None, "NoneType is not a parameter type"),
        ({"a": []}, "a: an empty list has no type"),
        ({1, 2}, "set is not a parameter type"),
    ],
)
def test_refused(value: Any, problem: str) -> None:
    found = launch_value_problem(value)
    assert found is not None
    assert problem in found


def test_every_non_empty_declared_default_is_accepted() -> None:
    """What the graph loader fills in; empty-list and unset (None) defaults are left out (see session.graph)."""
    for executable, params in NODE_PARAMETERS.items():
        for spec in params.specs():
            assert launch_accepts(spec.default) or spec.default in ([], None), (executable, spec.name)
