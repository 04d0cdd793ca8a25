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


class CheapBoundsOnly(Unbounded):
    """The obstacle with its cheap lower bounds only, counting the rows of exact segment queries."""

    def __init__(self, inner: MeshObstacle) -> None:
        super().__init__(inner)
        self.exact_rows = 0

    def segment_distance_m(self, start_m: np.ndarray, end_m: np.ndarray) -> np.ndarray:
        self.exact_rows += len(start_m)
        return self.inner.segment_distance_m(start_m, end_m)

    def point_lower_bound_m(self, points_m: np.ndarray) -> np.ndarray:
        return self.inner.point_lower_bound_m(points_m)

    def segment_lower_bound_m(self, start_m: np.ndarray, end_m: np.ndarray) -> np.ndarray:
        return self.inner.segment_lower_bound_m(start_m, end_m)


class TightBounds(CheapBoundsOnly):
    """The same, with the tighter bounds too (a TightlyBoundedDistanceField)."""

    def point_tight_lower_bound_m(self, points_m: np.ndarray) -> np.ndarray:
        return self.inner.point_tight_lower_bound_m(points_m)

    def segment_tight_lower_bound_m(self, start_m: np.ndarray, end_m: np.ndarray) -> np.ndarray:
        return self.inner.segment_tight_lower_bound_m(start_m, end_m)


def _slab() -> MeshObstacle:
    """A thin box (20 x 2 x 2 cm) around the heart's centre: its bounding sphere is far looser than its grid."""
    corners = np.array([[x, y, z] for x in (-0.1, 0.1) for y in (-0.01, 0.01) for z in (-0.01, 0.01)])
    faces = np.array([[0, 1, 3], [0, 3, 2], [4, 6, 7], [4, 7, 5], [0, 4, 5], [0, 5, 1], [2, 3, 7], [2, 7, 6]])
    faces = np.concatenate([faces, [[0, 2, 6], [0, 6, 4], [1, 5, 7], [1, 7, 3]]])
    return MeshObstacle.from_arrays(HEART_CENTER + corners, faces)


def test_tight_bounds_are_used_where_a_field_has_them() -> None:
    rng = np.random.default_rng(4)
    spec = PropertySpec("needle", "forall o in obstacles: always nocollision(needle, o)").compile
    slab = _slab()
    cheap, tight = CheapBoundsOnly(slab), TightBounds(slab)
    for _ in range(10):
        n = 200
        tip = HEART_CENTER + np.cumsum(rng.normal(0.0, 0.002, (n, 3)), axis=0) + rng.normal(0.0, 0.04, 3)
        record = make_record(tip, np.full(n, 3), tip_axis=rng.normal(0.0, 1.0, (n, 3)))
        results = []
        for field_ in (cheap, tight):
            ctx = MonitorContext(JOINTS, 0.02, {"heart": field_})
            results.append(evaluate([spec(ctx)], record, ctx)[0])
        assert results[0].same_outcome(results[1]), results
    assert 0 < tight.exact_rows < cheap.exact_rows  # fewer exact queries: the tight bounds ruled samples out
