"""Fixtures of the hazard tests: the shipped configuration, its kinematics, the shipped scenario library."""

from __future__ import annotations

import pytest

from cosim_validation.common.config import ConfigNode, load_config
from cosim_validation.hazards.hazard_library import load_library
from cosim_validation.hazards.scenario import Scenario
from cosim_validation.robots.model import Kinematics, RobotConfig
from test.robots.virtual.plans import CONFIG_PATH


@pytest.fixture(scope="session")
def config() -> ConfigNode:
    """The shipped case-study configuration."""
    return load_config(CONFIG_PATH)


@pytest.fixture(scope="session")
def kinematics(config: ConfigNode) -> Kinematics:
    """The nominal arm with its needle."""
    return RobotConfig.from_config(config["robot"]).kinematics


@pytest.fixture(scope="session")
def library() -> dict[str, Scenario]:
    """config/hazards.yaml."""
    return load_library()
