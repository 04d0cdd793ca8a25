"""Fixtures of the robot tests: the shipped configuration's robot, loaded once."""

from __future__ import annotations

from pathlib import Path

import pytest

from cosim_validation.common.config import ConfigNode, load_config
from cosim_validation.robots.model import Kinematics, RobotConfig


@pytest.fixture(scope="session")
def config_path(repo_root: Path) -> Path:
    """The shipped case-study configuration."""
    return repo_root / "config" / "needle_insertion.yaml"


@pytest.fixture(scope="session")
def root_config(config_path: Path) -> ConfigNode:
    """The whole shipped configuration."""
    return load_config(config_path)


@pytest.fixture(scope="session")
def robot_config(root_config: ConfigNode) -> RobotConfig:
    """The ``robot`` section as an object."""
    return RobotConfig.from_config(root_config["robot"])


@pytest.fixture(scope="session")
def kinematics(robot_config: RobotConfig) -> Kinematics:
    """Arm + needle of the shipped configuration."""
    return robot_config.kinematics
