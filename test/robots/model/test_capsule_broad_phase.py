"""The self-collision broad phase: exact segment distances, capsules that follow MuJoCo's geoms, lower bounds
that hold along trajectories, and answers identical to MuJoCo's own check."""

from __future__ import annotations

import numpy as np
import pytest

from cosim_validation.robots.model import RobotConfig, SelfCollision
from cosim_validation.robots.model.capsule_kernels import segment_distance
from cosim_validation.robots.model.self_distance import SelfDistance


def _dense_segment_distance(p1: np.ndarray, q1: np.ndarray, p2: np.ndarray, q2: np.ndarray) -> float:
    """Reference: both segments sampled on a 201 x 201 grid of their parameters, then five zooms, each a 41 x 41
    grid two cells around the best pair (the squared distance is convex in the two parameters, so the best cell of
    a grid borders the minimum; a flat valley, parallel segments, has equal values along it)."""
    lo, hi, n = np.zeros(2), np.ones(2), 201
    best = np.inf
    for _ in range(6):
        s, u = np.linspace(lo[0], hi[0], n), np.linspace(lo[1], hi[1], n)
        d = np.linalg.norm((p1 + s[:, None] * (q1 - p1))[:, None] - (p2 + u[:, None] * (q2 - p2))[None], axis=2)
        i, j = np.unravel_index(int(np.argmin(d)), d.shape)
        best = min(best, float(d[i, j]))
        step = (hi - lo) / (n - 1)
        centre = np.array([s[i], u[j]])
        lo, hi, n = np.clip(centre - 2 * step, 0.0, 1.0), np.clip(centre + 2 * step, 0.0, 1.0), 41
    return best


def test_segment_distance_matches_a_dense_reference() -> None:
    rng = np.random.default_rng(4)
    cases = [rng.normal(size=(4, 3)) * 0.1 for _ in range(60)]
    p, d = rng.normal(size=3), rng.normal(size=3)
    cases += [
        np.array([p, p + d, p + [0.0, 0.0, 0.05] + 0.3 * d, p + [0.0, 0.0, 0.05] + 1.7 * d]),  # parallel, overlapping
        np.array([p, p + d, p + 2.0 * d, p + 3.0 * d]),  # collinear, apart: distance |d|
        np.array([p, p, p + d, p + 2 * d]),  # a point and a segment
        np.array([p, p, p + d, p + d]),  # two points
        np.array([p, p + d, p + 0.5 * d, p + 0.5 * d + np.cross(d, [1.0, 0.0, 0.0])]),  # touching: 0
    ]
    for p1, q1, p2, q2 in cases:
        assert segment_distance(p1, q1, p2, q2) == pytest.approx(_dense_segment_distance(p1, q1, p2, q2), abs=2e-7)
    assert segment_distance(p, p + d, p + 2.0 * d, p + 3.0 * d) == pytest.approx(np.linalg.norm(d), rel=1e-12)


@pytest.fixture(scope="module")
def collision(robot_config: RobotConfig) -> SelfCollision:
    return SelfCollision(robot_config.kinematics)


def _mujoco_flags(collision: SelfCollision, q: np.ndarray) -> np.ndarray:
    """MuJoCo's check on every configuration, no broad phase."""
    return np.array([bool(collision.colliding_pairs(row)) for row in q])


def test_capsules_lower_bound_mujocos_distance(collision: SelfCollision, robot_config: RobotConfig) -> None:
    rng = np.random.default_rng(8)
    q = rng.uniform(robot_config.q_lower, robot_config.q_upper, size=(300, 7))
    capsule = collision.capsule_clearance(q)
    exact = SelfDistance(collision, horizon_m=10.0)(q)
    assert np.all(capsule <= exact + 1e-9)  # each capsule contains its cylinder
    # and a useful one: most configurations MuJoCo finds free, the capsules prove free
    free = exact > 0.0
    assert (capsule[free] > 1e-4).mean() > 0.9


def test_same_answers_as_mujoco_on_random_and_folded_configurations(
    collision: SelfCollision, robot_config: RobotConfig
) -> None:
    rng = np.random.default_rng(12)
    q = rng.uniform(robot_config.q_lower, robot_config.q_upper, size=(4000, 7))
    folded = np.array([0.0, 2.0, 0.0, 2.05, 0.0, 2.0, 0.0])
    q = np.vstack([q, folded, robot_config.home_q])
    expected = _mujoco_flags(collision, q)
    assert expected.sum() >= 10  # collisions occur, so both answers are exercised
    np.testing.assert_array_equal(collision.in_collision(q), expected)


def test_trajectories_through_contact_skip_samples_and_keep_the_answers(
    collision: SelfCollision, robot_config: RobotConfig
) -> None:
    """Smooth paths from home into a folded pose at 1 kHz: most samples are proven free by the Lipschitz
    bound, the answers still equal MuJoCo's at every sample, and the bounds never exceed the exact value."""
    home = robot_config.home_q
    folded = np.array([0.0, 2.0, 0.0, 2.05, 0.0, 2.0, 0.0])
    s = np.linspace(0.0, 1.0, 6000)[:, None]
    path = home + (0.5 - 0.5 * np.cos(np.pi * s)) * (folded - home)
    expected = _mujoco_flags(collision, path)
    assert expected[-1]
    assert not expected[0]
    np.testing.assert_array_equal(collision.in_collision(path), expected)
    threshold = 1e-4
    bounds = collision._clearance(path, threshold)
    exact = collision.capsule_clearance(path)
    assert np.all(bounds <= exact + 1e-12)
    evaluated = bounds == exact
    first_contact = int(np.argmax(expected))
    assert first_contact > 1000
    assert evaluated[: first_contact - 300].mean() < 0.1  # the bound spares most of the free samples
    assert np.all(evaluated | (bounds >= threshold))  # a skipped sample is proven clear
