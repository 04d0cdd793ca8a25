"""Self-collision of the arm and needle (MuJoCo on the URDF's cylinders plus a needle capsule)."""

from __future__ import annotations

import numpy as np
import pytest

from cosim_validation.robots.model import ArmCapsules, RobotConfig, SelfCollision

ADJACENT = {
    ("link1", "link2"),
    ("link2", "link3"),
    ("link3", "link4"),
    ("link4", "link5"),
    ("link5", "link6"),
    ("link6", "link7"),
    ("world", "link1"),
}


@pytest.fixture(scope="module")
def self_collision(robot_config: RobotConfig) -> SelfCollision:
    return SelfCollision(robot_config.kinematics)


@pytest.fixture(scope="module")
def colliding(
    self_collision: SelfCollision, robot_config: RobotConfig
) -> list[tuple[np.ndarray, list[tuple[str, str]]]]:
    """Self-colliding configurations among seeded random ones, with their pairs."""
    rng = np.random.default_rng(11)
    found = []
    for q in rng.uniform(robot_config.q_lower, robot_config.q_upper, size=(3000, 7)):
        pairs = self_collision.colliding_pairs(q)
        if pairs:
            found.append((q, pairs))
    return found


def test_home_and_zero_pose_are_free(self_collision: SelfCollision, robot_config: RobotConfig) -> None:
    assert self_collision.colliding_pairs(robot_config.home_q) == []
    assert self_collision.colliding_pairs(np.zeros(7)) == []


def test_folded_arm_collides(self_collision: SelfCollision) -> None:
    """Bending shoulder, elbow and wrist fully brings the needle back onto the upper arm."""
    q = np.array([0.0, 2.0, 0.0, 2.0, 0.0, 2.0, 0.0])
    assert self_collision.in_collision(q[None, :])[0]


def test_adjacent_links_are_never_reported(colliding: list[tuple[np.ndarray, list[tuple[str, str]]]]) -> None:
    assert len(colliding) > 5
    for _, pairs in colliding:
        for a, b in pairs:
            assert (a, b) not in ADJACENT
            assert (b, a) not in ADJACENT


def test_the_needle_takes_part(colliding: list[tuple[np.ndarray, list[tuple[str, str]]]]) -> None:
    assert any("needle" in pair for _, pairs in colliding for pair in pairs)


def test_capsule_points_follow_the_links(robot_config: RobotConfig) -> None:
    kin = robot_config.kinematics
    capsules = ArmCapsules(kin)
    q = np.random.default_rng(3).uniform(-1, 1, size=(5, 7))
    points = capsules.points(q)
    mounts, _ = kin.needle_segments(q)
    # the holder's last sample point is the needle mount; the first link starts at the base
    np.testing.assert_allclose(points[:, -1], mounts, atol=1e-12)
    zero = capsules.points(np.zeros((1, 7)))[0]
    np.testing.assert_allclose(zero[:, :2], 0.0, atol=1e-12)
    assert set(capsules.link_names) >= {"base_link", "link1", "link7", "needle_holder"}
    assert np.all(
        np.diff(zero[:, 2][np.array(capsules.link_names) != "base_link"]) >= -1e-6
    )  # URDF centres rounded to 1 µm
