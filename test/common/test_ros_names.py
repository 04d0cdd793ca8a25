"""The one rule for ROS names the configuration checks (topics, namespaces, node names, CRTK namespaces)."""

from __future__ import annotations

import pytest

from cosim_validation.common.ros_names import ros_name_problem
from cosim_validation.live.ros.crtk_topics import namespace_problem


@pytest.mark.parametrize("name", ["/controller_manager", "arm_controller", "/PSM1/jaw", "_private", "a1/b_2"])
def test_names_rcl_takes(name: str) -> None:
    assert ros_name_problem(name) is None


@pytest.mark.parametrize("name", ["", "/", "a b", "2arm", "/a/2b", "/a/", "//a", "/a//b", "a-b", "ä"])
def test_names_rcl_refuses(name: str) -> None:
    assert ros_name_problem(name) is not None


def test_a_crtk_namespace_is_an_absolute_ros_name() -> None:
    assert namespace_problem("/PSM1") is None
    for bad in ("PSM1", "//PSM1", "/PSM 1", "/1PSM"):
        assert "expected an absolute ROS namespace like /PSM1" in (namespace_problem(bad) or ""), bad
