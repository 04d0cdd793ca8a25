"""Fixtures of the error-injection tests: the shipped case study's kinematics and a small trained model."""

from __future__ import annotations

from pathlib import Path

import pytest

from cosim_validation.common.config import ConfigNode, load_config
from cosim_validation.error_injection.model_file import ErrorModel
from cosim_validation.robots.model import Kinematics, RobotConfig
from test.error_injection.synthetic import train_synthetic_model
from test.robots.virtual.plans import CONFIG_PATH


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
def synthetic_model(kinematics: Kinematics) -> ErrorModel:
    """Both networks trained on the known synthetic error functions of :mod:`test.error_injection.synthetic`."""
    return train_synthetic_model(kinematics)


@pytest.fixture(scope="session")
def model_path(synthetic_model: ErrorModel, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``synthetic_model`` saved to a file."""
    path = tmp_path_factory.mktemp("model") / "er3pro-synthetic.npz"
    synthetic_model.save(path)
    return path
