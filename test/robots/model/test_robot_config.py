"""The ``robot`` configuration section: shipped values and bad input."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import pytest

from cosim_validation.common.config import ConfigNode, parse_config
from cosim_validation.common.exceptions import ConfigError
from cosim_validation.robots.model import RobotConfig


def _section(root_config: ConfigNode, **changes: Any) -> ConfigNode:
    data = copy.deepcopy(root_config["robot"].value)
    for dotted, value in changes.items():
        target = data
        *parents, last = dotted.split("__")
        for key in parents:
            target = target[key]
        if value is None:
            del target[last]
        else:
            target[last] = value
    return ConfigNode(data, root_config.source, "robot")


def test_shipped_robot_section(robot_config: RobotConfig) -> None:
    kin = robot_config.kinematics
    assert kin.n_joints == 7
    assert kin.joint_names == tuple(f"joint{i}" for i in range(1, 8))
    assert kin.needle_length_m > 0
    # ROBOTS.md 1.4: SDK real-time limits, below the URDF velocities
    np.testing.assert_allclose(robot_config.limits.velocity, [2.175] * 4 + [2.61] * 3)
    assert np.all(robot_config.limits.velocity < kin.chain.velocity_limit)
    assert np.all(robot_config.q_lower > kin.q_lower)
    assert kin.limit_violations(robot_config.home_q, robot_config.joint_limit_margin) == []


@pytest.mark.parametrize(
    ("changes", "key", "message"),
    [
        ({"needle_length_m": 0.0}, "robot.needle_length_m", "expected a number >= 0.001, got 0.0"),
        ({"needle_length_m": -0.05}, "robot.needle_length_m", "expected a number >= 0.001"),
        ({"needle_length_m": 1.0e-9}, "robot.needle_length_m", "expected a number >= 0.001"),  # MuJoCo failed
        ({"needle_length_m": 1.0e300}, "robot.needle_length_m", "expected a number <= 1.0"),  # (issue 15)
        ({"needle_length_m": ".nan"}, "robot.needle_length_m", "expected a number"),
        ({"home_q": [0.0] * 6}, "robot.home_q", "expected a list of 7 numbers, got 6"),
        ({"home_q": [0, 3.0, 0, 0, 0, 0, 0]}, "robot.home_q", "joint2 = 3.0 rad outside"),
        ({"urdf": "missing.urdf"}, "robot.urdf", "URDF file not found: 'missing.urdf'"),
        ({"mount_frame": "tool0"}, "robot.urdf", "no frame 'tool0'"),
        ({"limits__velocity": [1.0] * 6 + [0.0]}, "robot.limits.velocity", "expected 7 numbers >= 0.001"),
        ({"model": "ur5"}, "robot.model", "expected one of 'xmate_er3_pro', 'dvrk_psm', 'raven2', got 'ur5'"),
        ({"needle_lenght_m": 0.1}, "robot.needle_lenght_m", "unknown key"),
    ],
)
def test_bad_robot_section(root_config: ConfigNode, changes: dict[str, Any], key: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message) as info:
        RobotConfig.from_config(_section(root_config, **changes))
    assert info.value.key == key


def test_yaml_nan_needle_length(root_config: ConfigNode) -> None:
    root = parse_config("robot: {needle_length_m: .nan}", "x.yaml")
    with pytest.raises(ConfigError, match="finite"):
        root["robot"]["needle_length_m"].to_float(exclusive_minimum=0.0)
    assert root_config.source.endswith("needle_insertion.yaml")


def test_an_older_configuration_with_units_in_the_joint_keys_still_loads(
    root_config: ConfigNode, robot_config: RobotConfig
) -> None:
    """A run directory's copy of an older configuration (home_q_rad, velocity_rad_s, ...) reads the same."""
    data = copy.deepcopy(root_config["robot"].value)
    data["home_q_rad"] = data.pop("home_q")
    data["joint_limit_margin_rad"] = data.pop("joint_limit_margin")
    limits = data["limits"]
    for old, new in (("velocity_rad_s", "velocity"), ("acceleration_rad_s2", "acceleration"), ("jerk_rad_s3", "jerk")):
        limits[old] = limits.pop(new)
    old = RobotConfig.from_config(ConfigNode(data, root_config.source, "robot"))
    np.testing.assert_array_equal(old.home_q, robot_config.home_q)
    np.testing.assert_array_equal(old.limits.jerk, robot_config.limits.jerk)
    assert old.joint_limit_margin == robot_config.joint_limit_margin
    data["home_q"] = list(robot_config.home_q)
    with pytest.raises(ConfigError, match=r"robot\.home_q_rad: give 'home_q' only \('home_q_rad' is its old name\)"):
        RobotConfig.from_config(ConfigNode(data, root_config.source, "robot"))
