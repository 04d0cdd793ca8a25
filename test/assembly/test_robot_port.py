"""BackendPort: the one way a setpoint reaches a backend (batch runner and driver nodes)."""

from __future__ import annotations

import numpy as np
import pytest

from cosim_validation.assembly import BackendPort
from cosim_validation.common.config import load_config
from cosim_validation.common.exceptions import InputError
from cosim_validation.robots.model import RobotConfig
from cosim_validation.robots.registry import make_backend
from test.controllers.planning.setup_fixtures import CONFIG_PATH


@pytest.fixture(scope="module")
def arm() -> BackendPort:
    config = load_config(CONFIG_PATH)
    kinematics = RobotConfig.from_config(config["robot"]).kinematics
    return BackendPort(make_backend("emulated", config, kinematics))


def drive(port: BackendPort, seed: int, home: np.ndarray) -> np.ndarray:
    port.reset("case", home, seed)
    for k in range(8):
        port.send(5_000_000_000 + k * 100_000_000, home + 0.01 * k)
    return np.array([np.concatenate((s.q_measured, s.actual_tip_pos_m)) for s in port.samples])


def test_a_case_depends_on_its_seed_only(arm: BackendPort) -> None:
    home = RobotConfig.from_config(load_config(CONFIG_PATH)["robot"]).home_q
    first = drive(arm, 11, home)
    drive(arm, 12, home)  # something else ran in between
    again = drive(arm, 11, home)
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, drive(arm, 12, home))  # the noise follows the seed


def test_the_first_setpoint_answers_with_the_arm_at_rest(arm: BackendPort) -> None:
    home = RobotConfig.from_config(load_config(CONFIG_PATH)["robot"]).home_q
    arm.reset("case", home, 3)
    rest = arm.reset_sample
    arm.send(1_000_000_000, home)
    assert arm.latest is rest  # read once at the reset (a read draws the arm's noise)
    arm.send(1_100_000_000, home + 0.02)
    assert arm.latest.t_s == pytest.approx(0.1)  # tracked for the stamps' difference


def test_stamps_must_increase_and_a_reset_comes_first() -> None:
    config = load_config(CONFIG_PATH)
    kinematics = RobotConfig.from_config(config["robot"]).kinematics
    port = BackendPort(make_backend("mujoco", config, kinematics))
    home = RobotConfig.from_config(config["robot"]).home_q
    port.reset("case", home, 0)
    port.send(1_000_000_000, home)  # the answer read at the reset
    with pytest.raises(InputError, match="setpoint stamped 1000000000 ns is not after the previous one"):
        port.send(1_000_000_000, home)
    with pytest.raises(InputError, match="setpoint before any reset"):
        BackendPort(port.backend).send(2_000_000_000, home)
