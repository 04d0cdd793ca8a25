"""The offset filter, and a robot seen through a filter (FilteredBackend): commands shifted, readings as they are."""

from __future__ import annotations

import numpy as np
import pytest

from cosim_validation.assembly.robots import build_robot
from cosim_validation.common.config import ConfigNode
from cosim_validation.common.exceptions import InputError
from cosim_validation.robots.filters.offset_filter import OffsetFilter, parse_offsets
from cosim_validation.robots.filters.robot_filter import FilteredBackend
from cosim_validation.robots.model import Kinematics, RobotConfig

NAMES = tuple(f"joint{i}" for i in range(1, 8))


def test_offsets_by_joint_name() -> None:
    offsets = parse_offsets("joint2=0.001, joint7=-0.5", NAMES)
    np.testing.assert_array_equal(offsets, [0, 0.001, 0, 0, 0, 0, -0.5])
    shifted = OffsetFilter(offsets, "x").command(0.1, np.ones(7))
    np.testing.assert_array_equal(shifted, 1 + offsets)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ("", "name at least one JOINT=VALUE"),
        ("joint2", "expected JOINT=VALUE, got 'joint2'"),
        ("wrist=0.1", "unknown joint 'wrist'; joints: joint1, joint2"),
        ("joint2=abc", "joint2: expected a number"),
        ("joint2=nan", "joint2: expected a finite number"),
        ("joint2=1e300", r"joint2: expected an offset within \+-3\.142 \[rad or m\], got 1e300"),
        ("joint1=-3.2", "joint1: expected an offset within"),
        ("joint2=0.1,joint2=0.2", "joint 'joint2' given twice"),
    ],
)
def test_bad_offsets_are_named(options: str, message: str) -> None:
    with pytest.raises(InputError, match=message):
        parse_offsets(options, NAMES)


def test_the_filtered_robot_sits_away_from_the_plan_by_the_offset(config: ConfigNode, kinematics: Kinematics) -> None:
    home = RobotConfig.from_config(config["robot"]).home_q
    robot = build_robot(config, "mujoco", kinematics, filters=["offset:joint2=0.002"])
    assert isinstance(robot, FilteredBackend)
    assert robot.name == "mujoco+offset:joint2=0.002"
    assert robot.joint_names == kinematics.joint_names  # the robot's own attributes show through
    robot.reset(home)
    for _ in range(20):  # hold the home setpoint for 2 s: the servo settles on home + offset
        robot.command(home, 0.1)
        robot.advance(0.1)
    q = robot.read().q_measured
    assert q[1] - home[1] == pytest.approx(0.002, abs=2e-5)
    assert np.abs(np.delete(q - home, 1)).max() < 2e-5
    robot.close()
