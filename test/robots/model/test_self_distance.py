"""The self distance is <= 0 exactly where the self-collision check finds contact, and positive at home."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cosim_validation.common.config import load_config
from cosim_validation.robots.model import RobotConfig
from cosim_validation.robots.model.self_collision import SelfCollision
from cosim_validation.robots.model.self_distance import SelfDistance

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def models() -> tuple[RobotConfig, SelfCollision, SelfDistance]:
    robot = RobotConfig.from_config(load_config(REPO / "config" / "needle_insertion.yaml")["robot"])
    collision = SelfCollision(robot.kinematics)
    return robot, collision, SelfDistance(collision)


def test_sign_agrees_with_the_collision_check(models: tuple[RobotConfig, SelfCollision, SelfDistance]) -> None:
    robot, collision, distance = models
    rng = np.random.default_rng(7)
    q = rng.uniform(robot.q_lower, robot.q_upper, size=(400, robot.kinematics.n_joints))
    folded = np.array([0.0, 2.0, 0.0, 2.05, 0.0, 2.0, 0.0])  # elbow and wrist folded onto the base
    q = np.vstack([q, folded])
    d = distance(q)
    np.testing.assert_array_equal(d <= 0, collision.in_collision(q))
    assert d[-1] <= 0
    assert (d > 0).sum() > 300


def test_home_is_clear_and_distance_is_continuous(models: tuple[RobotConfig, SelfCollision, SelfDistance]) -> None:
    robot, _, distance = models
    home = robot.home_q
    assert distance(home[None])[0] > 0.02
    step = np.zeros_like(home)
    step[3] = 1e-4
    # a distance function is 1-Lipschitz in space; a 1e-4 rad step moves no point more than ~0.1 mm
    assert abs(distance((home + step)[None])[0] - distance(home[None])[0]) < 2e-4
