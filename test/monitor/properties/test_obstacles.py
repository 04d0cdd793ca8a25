"""Mesh obstacles: bounds below the exact distances, and the bounded fast path equals full evaluation."""

from __future__ import annotations

import numpy as np
import pytest

from cosim_validation.common.record import RobotRole
from cosim_validation.monitor.properties import MonitorContext, PropertySpec, Status, evaluate, record_samples, replay
from cosim_validation.monitor.properties.obstacles import MeshObstacle
from test.monitor.properties.traces import HEART_CENTER, HEART_RADIUS, JOINTS, heart_mesh_obstacle, make_record


class Unbounded:
    """The same obstacle without lower bounds: forces exact distances on every sample."""

    def __init__(self, inner: MeshObstacle) -> None:
        self.inner = inner

    def point_distance_m(self, points_m: np.ndarray) -> np.ndarray:
        return self.inner.point_distance_m(points_m)

    def segment_distance_m(self, start_m: np.ndarray, end_m: np.ndarray) -> np.ndarray:
        return self.inner.segment_distance_m(start_m, end_m)


@pytest.fixture(scope="module")
def heart() -> MeshObstacle:
    obstacle = heart_mesh_obstacle()
    assert isinstance(obstacle, MeshObstacle)
    return obstacle


def test_distances_match_the_sphere_it_approximates(heart: MeshObstacle) -> None:
    rng = np.random.default_rng(1)
    points = HEART_CENTER + rng.normal(0.0, 0.05, (500, 3))
    exact = np.linalg.norm(points - HEART_CENTER, axis=1) - HEART_RADIUS
    assert heart.point_distance_m(points) == pytest.approx(exact, abs=2e-4)  # icosphere facets: < 0.2 mm


def test_lower_bounds_never_exceed_exact_distances(heart: MeshObstacle) -> None:
    rng = np.random.default_rng(2)
    points = HEART_CENTER + rng.normal(0.0, 0.06, (2000, 3))
    assert (heart.point_lower_bound_m(points) <= heart.point_distance_m(points) + 1e-9).all()
    ends = points + rng.normal(0.0, 0.05, points.shape)
    segment = heart.segment_distance_m(points, ends)
    assert (heart.segment_lower_bound_m(points, ends) <= segment + 1e-9).all()
    assert (segment <= np.minimum(heart.point_distance_m(points), heart.point_distance_m(ends)) + 1e-6).all()


def test_bounded_fast_path_equals_exact_evaluation(heart: MeshObstacle) -> None:
    rng = np.random.default_rng(3)
    specs = [
        PropertySpec("joints", "forall j in joints, o in obstacles: always safedis(joint[j], o, 0.01)").compile,
        PropertySpec("needle", "forall o in obstacles: always nocollision(needle, o)").compile,
        PropertySpec("window", "forall o in obstacles: always[0.5, 2] p2m(tip, o) > 0.005").compile,
    ]
    fast_ctx = MonitorContext(JOINTS, 0.1, {"heart": heart})
    slow_ctx = MonitorContext(JOINTS, 0.1, {"heart": Unbounded(heart)})
    outcomes = set()
    for _ in range(20):
        n = int(rng.integers(1, 40))
        tip = HEART_CENTER + np.cumsum(rng.normal(0.0, 0.01, (n, 3)), axis=0) + rng.normal(0.0, 0.05, 3)
        joints = tip[:, None, :] + rng.normal(0.0, 0.08, (n, 7, 3))
        record = make_record(tip, np.full(n, 3), joint_pos_m=joints, tip_axis=rng.normal(0.0, 1.0, (n, 3)))
        for compile_ in specs:
            (fast,) = evaluate([compile_(fast_ctx)], record, fast_ctx)
            (slow,) = evaluate([compile_(slow_ctx)], record, slow_ctx)
            assert fast.same_outcome(slow), (fast, slow)
            _, (online,) = replay([compile_(fast_ctx)], record_samples(record), fast_ctx, RobotRole.VIRTUAL)
            assert online.same_outcome(slow), (online, slow)
            outcomes.add(fast.status)
    assert {Status.HOLDS, Status.VIOLATED} <= outcomes
