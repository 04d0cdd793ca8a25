"""Fixtures of the robot tests: the shipped configuration, the nominal kinematics, a five-stage plan, the
CoppeliaSim stand-in (a separate process, started once)."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from cosim_validation.common.config import ConfigNode, load_config
from cosim_validation.robots.model import Kinematics, RobotConfig
from test.robots.virtual.coppeliasim_process import standin, with_coppeliasim
from test.robots.virtual.plans import CONFIG_PATH, config_node, five_stage_plan, shipped_config_dict


@pytest.fixture(scope="session")
def config() -> ConfigNode:
    """The shipped configuration."""
    return load_config(CONFIG_PATH)


@pytest.fixture(scope="session")
def robot_config(config: ConfigNode) -> RobotConfig:
    """The robot section (kinematics, home pose)."""
    return RobotConfig.from_config(config["robot"])


@pytest.fixture(scope="session")
def kinematics(robot_config: RobotConfig) -> Kinematics:
    """Nominal kinematics of the arm with the configured needle."""
    return robot_config.kinematics


@pytest.fixture(scope="session")
def plan(robot_config: RobotConfig) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A 21 s five-stage joint plan at 10 Hz: (t_s, stage, q_setpoint)."""
    return five_stage_plan(robot_config.home_q)


@pytest.fixture(scope="session")
def coppeliasim_port() -> Iterator[int]:
    """Port of a CoppeliaSim stand-in serving the shipped arm on loopback."""
    with standin(CONFIG_PATH) as port:
        yield port


@pytest.fixture(scope="session")
def coppeliasim_config(coppeliasim_port: int) -> ConfigNode:
    """The shipped configuration with its CoppeliaSim engine pointing at the stand-in."""
    return config_node(with_coppeliasim(shipped_config_dict(), coppeliasim_port))
