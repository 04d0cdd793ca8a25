"""Naming filters on the command line and in a graph: ROBOT=KIND:OPTIONS, checked before anything runs."""

from __future__ import annotations

import pytest

from cosim_validation.common.config import load_config
from cosim_validation.common.exceptions import InputError
from cosim_validation.common.record import RobotRole
from cosim_validation.robots.filters.robot_filters import FILTER_KINDS, FilterSpec, check_filters, make_filter
from cosim_validation.robots.model import RobotConfig
from test.controllers.planning.setup_fixtures import CONFIG_PATH


def test_a_filter_spec() -> None:
    spec = FilterSpec.parse("physical=offset:joint2=0.001,joint3=-0.002")
    assert spec == FilterSpec(RobotRole.PHYSICAL, "offset", "joint2=0.001,joint3=-0.002")
    assert spec.text == "offset:joint2=0.001,joint3=-0.002"
    assert "offset" in FILTER_KINDS


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("offset:joint2=0.1", "expected ROBOT=KIND:OPTIONS"),
        ("virtual=joint2", "expected KIND:OPTIONS with KIND one of: offset"),
        ("virtual=magic:x", "unknown kind 'magic'; expected one of: offset"),
        ("robot=offset:joint2=0.1", "unknown robot 'robot'; expected one of"),
        ("expected=offset:joint2=0.1", "the expected trajectory is not a robot"),
    ],
)
def test_bad_filter_specs(text: str, message: str) -> None:
    with pytest.raises(InputError, match=message):
        FilterSpec.parse(text)


def test_filters_are_checked_against_the_robots_run() -> None:
    config = load_config(CONFIG_PATH)
    kinematics = RobotConfig.from_config(config["robot"]).kinematics
    check_filters(config, [("virtual", "offset:joint1=0.01")], [RobotRole.VIRTUAL], kinematics)
    with pytest.raises(InputError, match=r"the physical robot is not run here \(robots: virtual\)"):
        check_filters(config, [("physical", "offset:joint1=0.01")], [RobotRole.VIRTUAL], kinematics)
    with pytest.raises(InputError, match="unknown joint 'joint9'"):
        make_filter(config, "offset:joint9=0.01", kinematics)
